"""Test helpers shared by several test packages (importable from any test module: tests/ is on sys.path)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import sqlalchemy as sa

from fabric.store.engine import normalise_url

T = TypeVar("T")

PG_ENV = "FABRIC_TEST_POSTGRES_URL"
T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


class FakeClock:
    """A settable UTC clock: a store's or backend's notion of now."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


def run_together(count: int, work: Callable[[int], T]) -> list[T]:
    """``work(0)`` .. ``work(count - 1)`` in ``count`` threads released at the same moment (a barrier), as racing
    daemons would run; their results in order. An exception in any thread is raised here."""
    barrier = threading.Barrier(count)

    def start(n: int) -> T:
        barrier.wait(30)
        return work(n)

    with ThreadPoolExecutor(count) as pool:
        futures = [pool.submit(start, n) for n in range(count)]
        return [future.result(timeout=60) for future in futures]


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


def whole_list(body: bytes) -> tuple[str, Any]:
    """What UFM's event list reader should give for ``body``, from ``strictjson.loads`` of the whole: its elements
    (a list, or a ``{"data": [...]}`` object), or the class of the error."""
    from fabric.ufm.models import ShapeError
    from topology import strictjson

    try:
        document = strictjson.loads(body)
    except strictjson.JsonError:
        return "error", strictjson.JsonError
    if isinstance(document, list):
        return "ok", document
    if isinstance(document, dict) and isinstance(document.get("data"), list):
        return "ok", document["data"]
    return "error", ShapeError
