"""Helpers shared by the store tests (imported by ``conftest.py`` and the test modules)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
import sqlalchemy as sa
from support import PG_ENV, T0, FakeClock

from fabric.store import Store
from fabric.store.engine import create_store_engine, normalise_url

__all__ = ["PG_ENV", "T0", "FakeClock"]


@dataclass
class Db:
    """Where a test's database lives; ``open`` a store on it as often as needed (each a separate engine, like
    another process would have)."""

    backend: str
    url: str
    schema: str | None
    _opened: list[Store] = field(default_factory=list)

    def open(self, **kwargs: Any) -> Store:
        store = Store.open(self.url, schema=self.schema, **kwargs)
        self._opened.append(store)
        return store

    def raw_engine(self) -> sa.Engine:
        """An engine with the store's connection settings (SQLite pragmas, PostgreSQL search_path) and no schema
        checks: for raw SQL."""
        return create_store_engine(self.url, schema=self.schema)

    def close_all(self) -> None:
        for store in self._opened:
            store.close()


def pg_url() -> str:
    url = os.environ.get(PG_ENV)
    if not url:
        pytest.skip(f"{PG_ENV} is not set; set it to a PostgreSQL URL to run the PostgreSQL store tests")
    return url


@contextmanager
def pg_schema(url: str, prefix: str, *, create: bool = True) -> Iterator[str]:
    """A fresh PostgreSQL schema name (the schema created unless ``create=False``), dropped afterwards."""
    schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(normalise_url(url))
    try:
        if create:
            with admin.begin() as conn:
                conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
        yield schema
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql("SET LOCAL lock_timeout = '10s'")
            conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        admin.dispose()
