"""Test helpers for the UFM client tests (imported by conftest.py and the test modules)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fabric.ufm.client import UfmClient

BASE = "https://ufm.example"

ClientFactory = Callable[..., UfmClient]


class FakeTime:
    """An injected sleep that records and advances a fake monotonic clock instead of waiting."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def port_payload(
    name: str = "1c34da0300728606_1",
    *,
    physical_state: str = "Link Up",
    system_id: str | None = "1c34da0300728606",
    **extra: Any,
) -> dict[str, Any]:
    """A port as ``GET /resources/ports`` returns it (trimmed from UFM's documented sample)."""
    guid, number = name.split("_", maxsplit=1)
    payload: dict[str, Any] = {
        "name": name,
        "guid": guid,
        "number": int(number),
        "dname": number,
        "description": "Switch IB Port",
        "system_name": "SLG01-02",
        "node_description": f"SLG01-02:{number}",
        "peer": "0c42a103001b8256_1",
        "logical_state": "Active" if physical_state == "Link Up" else "Down",
        "physical_state": physical_state,
        "active_width": "4x",
        "capabilities": ["healthy_operations", "reset", "disable", "get_cables_info"],
        "severity": "Info",
    }
    if system_id is not None:
        payload["systemID"] = system_id
    payload.update(extra)
    return payload
