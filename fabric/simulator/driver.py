"""Driving a running simulator from outside, through its admin API: inject faults, move its clock.

Used by the demo and the tests; ``simulated_sleep`` lets a UFM client's waits (job polling, confirmation reads,
retry back-off) advance the simulated clock instead of sleeping, so simulated minutes pass in milliseconds.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from topology import strictjson


class SimulatorDriver:
    def __init__(self, url: str, timeout: float = 60.0) -> None:
        self.url, self.timeout = url.rstrip("/"), timeout

    def inject(self, **step: Any) -> dict[str, Any]:
        """One scenario step (``fault="flap", link=..., ...``), applied now; raises on a refused step."""
        response = httpx.post(f"{self.url}/simulator/faults", json=step, timeout=self.timeout)
        response.raise_for_status()
        return dict(strictjson.loads(response.content))

    def advance(self, seconds: float, *, at_next_read: bool = False) -> dict[str, Any]:
        """Move the clock now, or (``at_next_read``) just before the next ``GET /simulator/state`` answers: a
        daemon on ``--clock simulator`` then sees the jump at the start of its next cycle, never during one."""
        response = httpx.post(f"{self.url}/simulator/clock/advance",
                              json={"seconds": seconds, "at_next_read": at_next_read}, timeout=self.timeout)
        response.raise_for_status()
        return dict(strictjson.loads(response.content))


def simulated_sleep(url: str) -> Callable[[float], Awaitable[None]]:
    """A ``sleep`` for ``UfmClient`` that advances the simulator's clock by the time asked for."""

    async def sleep(seconds: float) -> None:
        async with httpx.AsyncClient(base_url=url.rstrip("/")) as admin:
            (await admin.post("/simulator/clock/advance", json={"seconds": seconds})).raise_for_status()

    return sleep
