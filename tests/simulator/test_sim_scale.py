"""The h100-4k plan (320 switches, 24,576 ports, 12,288 links) and 100,000 events answer well under a second."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
from sim_support import PASSWORD, START, USER, Sim, run

from fabric.simulator import SimClock, SimSettings, SimState
from fabric.ufm import Event
from topology.generate import PRESETS, fat_tree


def _timed_get(http: httpx.Client, path: str) -> tuple[float, bytes]:
    started = time.perf_counter()
    response = http.get(path)
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, response.text[:200]
    return elapsed, response.content


def test_h100_4k_lists_and_a_100k_event_history(sim_factory: Callable[..., Sim]) -> None:
    state = SimState.from_plan(fat_tree(PRESETS["h100-4k"]), clock=SimClock(START), settings=SimSettings(seed=1))
    sim = sim_factory(state)

    async def sizes() -> tuple[int, int, int, int]:
        async with sim.client() as ufm:
            return (len(await ufm.systems()), len(await ufm.systems(type="switch")), len(await ufm.ports()),
                    len(await ufm.links()))
    assert run(sizes()) == (320 + 512, 320, 24_576, 12_288)

    with httpx.Client(base_url=sim.url, auth=(USER, PASSWORD), timeout=30) as http:
        for path in ("/ufmRest/resources/systems", "/ufmRest/resources/ports", "/ufmRest/resources/links",
                     "/ufmRest/app/versioning"):
            elapsed, _ = _timed_get(http, path)
            assert elapsed < 1.0, (path, elapsed)
        # A change invalidates only what changed: the next full list is still quick.
        sim.inject(fault="switch_reboot", switch="pod03-spine04")
        elapsed, body = _timed_get(http, "/ufmRest/resources/links")
        assert elapsed < 1.0 and body.count(b'"source_guid"') == 12_288 - 64

        bulk = sim.http.post("/simulator/events/bulk", json={"count": 100_000 - len(state.events)})
        assert bulk.status_code == 200
        elapsed, body = _timed_get(http, "/ufmRest/app/events")
        assert elapsed < 1.0, elapsed
        assert body.count(b'"event_type"') == 100_000

    async def events() -> list[Event]:
        async with sim.client() as ufm:
            return await ufm.events()
    parsed = run(events())
    assert [e.id for e in parsed] == list(range(1, 100_001))
