"""Test helpers shared by several test packages (importable from any test module: tests/ is on sys.path)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

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
