"""Test helpers shared by several test packages (importable from any test module: tests/ is on sys.path)."""

from __future__ import annotations

import tempfile
import threading
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import IO, Any, TypeVar

import sqlalchemy as sa

from fabric.store.engine import normalise_url
from topology.model import End, Fabric
from topology.ports import Kind

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


def ibnetdiscover_text(fabric: Fabric) -> str:
    """``fabric`` as ``ibnetdiscover`` prints it (numbered ports: the generated presets'), each device under its GUID
    or, without one, a number: a valid dump (to corrupt, to read back)."""
    guids = {device.key: device.guid or f"{number + 1:016x}" for number, device in enumerate(fabric.devices.values())}
    ports: dict[str, list[tuple[int, End]]] = defaultdict(list)
    for cable in fabric.cables:
        ports[cable.a.device].append((int(cable.a.port), cable.b))
        ports[cable.b.device].append((int(cable.b.port), cable.a))

    def node(key: str) -> tuple[str, str]:
        device = fabric.devices[key]
        if device.kind is Kind.SWITCH:
            return f'"S-{guids[key]}"', f"MF0;{device.name}:MQM8700/U1"
        return f'"H-{guids[key]}"', device.name

    lines = []
    for key, device in fabric.devices.items():
        guid, (quoted, description) = guids[key], node(key)
        if device.kind is Kind.SWITCH:
            lines += ["vendid=0x2c9", f"sysimgguid=0x{guid}", f"switchguid=0x{guid}({guid})",
                      f'Switch\t41 {quoted}\t\t# "{description}" enhanced port 0 lid 1 lmc 0']
        else:
            lines += ["vendid=0x2c9", f"caguid=0x{guid}", f'Ca\t1 {quoted}\t\t# "{description}"']
        for port, far in sorted(ports[key]):
            far_quoted, far_description = node(far.device)
            lines.append(f'[{port}]\t{far_quoted}[{far.port}]\t\t# "{far_description}" lid 2 4xHDR')
        lines.append("")
    return "\n".join(lines)


@contextmanager
def spooled(body: bytes) -> Iterator[IO[bytes]]:
    """``body`` in a temporary file, as the UFM client spools an answer."""
    with tempfile.TemporaryFile() as file:
        file.write(body)
        file.flush()
        yield file
