"""The h100-4k plan (320 switches, 24,576 ports, 12,288 links) and 100,000 events are served whole and right.

How fast is measured by ``benchmarks/bench_ufm.py`` (``make bench``), not here: a timed assertion fails on a
loaded machine and proves nothing on an idle one."""

from __future__ import annotations

from collections.abc import Callable

import httpx
from sim_support import PASSWORD, START, USER, Sim, run

from fabric.simulator import SimClock, SimSettings, SimState
from fabric.ufm import Event
from topology.generate import PRESETS, fat_tree


def _get(http: httpx.Client, path: str) -> bytes:
    response = http.get(path)
    assert response.status_code == 200, response.text[:200]
    return response.content


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
            _get(http, path)
        # A change invalidates only what changed: the next full list is still quick.
        sim.inject(fault="switch_reboot", switch="pod03-spine04")
        body = _get(http, "/ufmRest/resources/links")
        assert body.count(b'"source_guid"') == 12_288 - 64

        bulk = sim.http.post("/simulator/events/bulk", json={"count": 100_000 - len(state.events)})
        assert bulk.status_code == 200
        body = _get(http, "/ufmRest/app/events")
        assert body.count(b'"event_type"') == 100_000

    async def events() -> list[Event]:
        async with sim.client() as ufm:
            return await ufm.events()
    parsed = run(events())
    assert [e.id for e in parsed] == list(range(1, 100_001))
