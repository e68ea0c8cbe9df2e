"""Fixtures for the store tests: every test runs on a SQLite file and on PostgreSQL (in a schema of its own).

PostgreSQL runs when ``FABRIC_TEST_POSTGRES_URL`` is set (e.g. ``postgresql+psycopg://postgres@127.0.0.1:5432/test``)
and is skipped otherwise.  Each PostgreSQL test gets a fresh schema (``search_path``), dropped afterwards, so tests
running in parallel (pytest-xdist) or other modules using the same database never see each other's rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from store_helpers import Db, FakeClock, pg_schema, pg_url

from fabric.store import Store


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Db]:
    if request.param == "sqlite":
        handle = Db("sqlite", f"sqlite:///{tmp_path / 'state.db'}", None)
        yield handle
        handle.close_all()
        return
    url = pg_url()
    with pg_schema(url, "test_store") as schema:
        handle = Db("postgresql", url, schema)
        yield handle
        handle.close_all()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(db: Db, clock: FakeClock) -> Store:
    return db.open(clock=clock)
