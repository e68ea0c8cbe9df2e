"""Helpers for the ticket tests: a settable clock and throwaway databases (SQLite file or PostgreSQL schema)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa
from support import PG_ENV, T0, FakeClock

from fabric.store import Store
from fabric.store.engine import normalise_url
from tickets.base import dedup_key

__all__ = ["KEY", "OTHER", "PG_ENV", "T0", "FakeClock"]

KEY = dedup_key("h100-4k", "link:leaf01/33|spine02/5")
OTHER = dedup_key("h100-4k", "port:leaf01/7")
"""Two components' dedup keys, for the backends' tests."""


@contextmanager
def throwaway_store(backend: str, tmp_path: Path, clock: FakeClock) -> Iterator[Store]:
    """A ``Store`` and the local ticket tables (which that backend owns) on a database of its own, removed
    afterwards."""
    if backend == "sqlite":
        store = Store.open(f"sqlite:///{tmp_path / 'tickets.db'}", clock=clock)
        try:
            yield store
        finally:
            store.close()
        return
    url = os.environ.get(PG_ENV)
    if not url:
        pytest.skip(f"{PG_ENV} is not set; set it to a PostgreSQL URL to run the PostgreSQL ticket tests")
    schema = f"test_tickets_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(normalise_url(url))
    try:
        store = Store.open(url, schema=schema, clock=clock)
        try:
            yield store
        finally:
            store.close()
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql("SET LOCAL lock_timeout = '10s'")
            conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        admin.dispose()
