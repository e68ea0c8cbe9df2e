"""Fixtures for the simulator tests: simulated UFMs served on loopback over real HTTP."""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from sim_support import Sim, make_state

from fabric.simulator import SimState, serve


@pytest.fixture
def sim_factory() -> Iterator[Callable[..., Sim]]:
    """Start simulators (each on its own free loopback port); all are stopped after the test."""
    stack: list[tuple[Any, httpx.Client]] = []

    def start(state: SimState | None = None, **kwargs: Any) -> Sim:
        context = serve(state or make_state(), **kwargs)
        server = context.__enter__()
        verify = ssl.create_default_context(cafile=str(server.cert)) if server.cert else True
        http = httpx.Client(base_url=server.url, timeout=30.0, verify=verify)
        stack.append((context, http))
        return Sim(server, http)

    yield start
    for context, http in reversed(stack):
        http.close()
        context.__exit__(None, None, None)


@pytest.fixture
def sim(sim_factory: Callable[..., Sim]) -> Sim:
    return sim_factory()
