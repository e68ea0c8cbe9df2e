"""Injected API misbehaviour reaches the project's client as its typed errors."""

from __future__ import annotations

import time

import httpx
import pytest
from sim_support import PASSWORD, USER, Sim, run

from fabric.ufm import (
    RetryPolicy,
    UfmMalformedResponseError,
    UfmServerError,
    UfmTimeoutError,
)


def test_500_for_n_requests_then_the_retrying_client_succeeds(sim: Sim) -> None:
    sim.inject(fault="api", endpoint="/resources/ports", mode="error", status=500, requests=2)

    async def scenario() -> None:
        async with sim.client(retry=RetryPolicy(attempts=3, backoff=0.01)) as ufm:
            assert len(await ufm.ports()) == 96
            assert len(await ufm.links()) == 48  # other endpoints were never affected
    run(scenario())
    assert sim.state.counters.requests["/resources/ports"] == 3  # two refused, the third answered


def test_persistent_500_is_a_server_error(sim: Sim) -> None:
    sim.inject(fault="api", endpoint="/app/events", mode="error", status=503, duration="10m")

    async def scenario() -> None:
        async with sim.client(retry=RetryPolicy(attempts=2, backoff=0.01)) as ufm:
            with pytest.raises(UfmServerError) as failed:
                await ufm.events()
            assert failed.value.status_code == 503
    run(scenario())
    sim.advance(600)  # the window is over
    assert sim.get("/ufmRest/app/events") == []


def test_slow_endpoint_is_a_timeout(sim: Sim) -> None:
    sim.inject(fault="api", endpoint="/resources/links", mode="delay", delay="1.5s", requests=1)

    async def scenario() -> None:
        async with sim.client(timeout=0.5) as ufm:
            started = time.monotonic()
            with pytest.raises(UfmTimeoutError):
                await ufm.links()
            assert time.monotonic() - started < 1.4
    run(scenario())
    started = time.monotonic()
    assert len(sim.get("/ufmRest/resources/links")) == 48  # one request only
    assert time.monotonic() - started < 1.0


def test_slow_but_in_time_answers_normally(sim: Sim) -> None:
    sim.inject(fault="api", endpoint="/app/versioning", mode="delay", delay="300ms", requests=1)
    started = time.monotonic()
    assert "ports_version" in sim.get("/ufmRest/app/versioning")
    assert time.monotonic() - started >= 0.3


def test_truncated_body_is_a_malformed_response(sim: Sim) -> None:
    sim.inject(fault="api", endpoint="/resources/systems", mode="truncate", keep=0.4, requests=1)
    raw = httpx.get(sim.url + "/ufmRest/resources/systems", auth=(USER, PASSWORD))
    assert raw.status_code == 200 and int(raw.headers["content-length"]) == len(raw.content)
    whole = httpx.get(sim.url + "/ufmRest/resources/systems", auth=(USER, PASSWORD)).content
    assert len(raw.content) == int(len(whole) * 0.4)
    sim.inject(fault="api", endpoint="/resources/*", mode="truncate", requests=1)

    async def scenario() -> None:
        async with sim.client() as ufm:
            with pytest.raises(UfmMalformedResponseError):
                await ufm.ports()
            assert len(await ufm.ports()) == 96
    run(scenario())


def test_ufm_restart_downtime_answers_503_everywhere(sim: Sim) -> None:
    sim.inject(fault="ufm_restart", downtime="60s")
    for prefix in ("/ufmRest", "/ufmRestV2", "/ufmRestV3"):
        assert httpx.get(f"{sim.url}{prefix}/app/events", auth=(USER, PASSWORD)).status_code == 503
    assert httpx.get(f"{sim.url}/simulator/state").status_code == 200  # the admin API is not UFM's
    sim.advance(60)
    assert sim.get("/ufmRest/app/events") == []


def test_fault_for_one_method_only(sim: Sim) -> None:
    sim.inject(fault="api", endpoint="/app/unhealthy_ports", mode="error", method="PUT", requests=5)
    assert sim.get("/ufmRest/app/unhealthy_ports") == []
    port = sim.state.resolve_port("pod01-spine01/1")
    put = httpx.put(sim.url + "/ufmRest/app/unhealthy_ports", auth=(USER, PASSWORD),
                    json={"ports": [port], "ports_policy": "UNHEALTHY", "action": "isolate"})
    assert put.status_code == 500
    assert sim.get("/ufmRest/app/unhealthy_ports") == []


def test_short_event_answer_lists_only_the_oldest_events(sim: Sim) -> None:
    sim.inject(fault="flap", link="pod01-spine01/1", cycles=4, period="10s")
    sim.advance(60)
    every = sim.get("/ufmRest/app/events")
    assert len(every) == 8
    sim.inject(fault="api", endpoint="/app/events", mode="oldest", count=3, requests=1)
    assert sim.get("/ufmRest/app/events") == every[:3]  # valid JSON, UFM's three oldest events
    assert sim.get("/ufmRest/app/events") == every  # one request only


def test_empty_and_partial_lists_are_valid_json(sim: Sim) -> None:
    sim.inject(fault="api", endpoint="/resources/links", mode="empty", requests=2)

    async def scenario() -> None:
        async with sim.client() as ufm:
            assert await ufm.links() == []  # the client accepts it: only the engine can tell it cannot be true
    run(scenario())
    assert sim.get("/ufmRest/resources/links", page_number=1, rpp=10) == {"data": []}  # a page keeps its shape
    sim.inject(fault="api", endpoint="/resources/*", mode="partial", keep=0.5, requests=3)
    assert len(sim.get("/ufmRest/resources/links")) == 24
    assert len(sim.get("/ufmRest/resources/ports")) == 48
    assert len(sim.get("/ufmRest/resources/systems")) == 10
    assert len(sim.get("/ufmRest/resources/systems")) == 20  # the rule is spent
