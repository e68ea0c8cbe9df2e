"""Fixtures for the ticket tests: the local backend on a SQLite file and on PostgreSQL (skipped when
``FABRIC_TEST_POSTGRES_URL`` is unset), each in a database or schema of its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from ticket_helpers import FakeClock, throwaway_store

from fabric.store import Store
from tickets.local import LocalTicketBackend


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock) -> Iterator[Store]:
    with throwaway_store(request.param, tmp_path, clock) as opened:
        yield opened


@pytest.fixture
def backend(store: Store, clock: FakeClock) -> LocalTicketBackend:
    return LocalTicketBackend(store.engine, url_base="https://fabric.example/tickets/", clock=clock)
