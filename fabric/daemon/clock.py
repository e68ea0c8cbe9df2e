"""The daemon's clock: UTC now, or (``--clock simulator``, for the demo and the tests) the simulator's.

The engine, the store and the ticket backend read a synchronous clock; the simulator's time is read over HTTP
before start-up and before each cycle (``sync``), and the UFM client's waits (job polls, retry back-off) move it
(``sleep``), as ``tests/chaos/chaos_engine.py`` does. Only a UFM that serves ``/simulator/state`` has such a
clock: against a real UFM ``--clock simulator`` fails at start-up with one line.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from enum import StrEnum

import httpx

from fabric.errors import ErrorKind, FabricError
from topology import strictjson
from topology.redact import redacted_url


class ClockKind(StrEnum):
    SYSTEM = "system"
    SIMULATOR = "simulator"


class ClockError(FabricError):
    kind = ErrorKind.UFM


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sync(self) -> None:
        """Nothing to read: the wall clock is always current."""

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def aclose(self) -> None:
        """Nothing to close."""


class SimulatorClock:
    """The simulator's time as this process last read it."""

    def __init__(self, url: str) -> None:
        self._client = httpx.AsyncClient(base_url=url.rstrip("/"), timeout=30)
        self._now: datetime | None = None

    def now(self) -> datetime:
        if self._now is None:
            raise RuntimeError("the simulator's clock was not read yet: sync() first")
        return self._now

    async def sync(self) -> None:
        await self._read("GET", "/simulator/state", None)

    async def sleep(self, seconds: float) -> None:
        """The UFM client's wait: simulated time passes, no real time."""
        await self._read("POST", "/simulator/clock/advance", {"seconds": seconds})

    async def _read(self, method: str, path: str, body: dict[str, float] | None) -> None:
        try:
            response = await self._client.request(method, path, json=body)
            response.raise_for_status()
            self._now = datetime.fromisoformat(strictjson.loads(response.content)["now"])
        except (httpx.HTTPError, KeyError, TypeError, ValueError) as exc:  # JsonError: a ValueError
            shown = redacted_url(str(self._client.base_url))
            raise ClockError(f"--clock simulator: cannot read the simulator's clock at {shown}{path}: {exc}") from None

    async def aclose(self) -> None:
        await self._client.aclose()


Clock = SystemClock | SimulatorClock


def make_clock(kind: ClockKind, ufm_url: str) -> Clock:
    return SimulatorClock(ufm_url) if kind is ClockKind.SIMULATOR else SystemClock()
