"""Helpers shared by the store tests (imported by ``conftest.py`` and the test modules)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import pytest
import sqlalchemy as sa
from support import PG_ENV, T0, FakeClock, pg_schema

from fabric.store import Store
from fabric.store.engine import create_store_engine

__all__ = ["PG_ENV", "T0", "FakeClock", "pg_schema"]


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


