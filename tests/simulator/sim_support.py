"""Helpers for the simulator tests: a simulated UFM over the tiny plan and a driver for its admin API."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx

from fabric.simulator import RunningServer, SimClock, SimSettings, SimState
from fabric.simulator.driver import simulated_sleep
from fabric.ufm import BasicAuth, JobPollPolicy, RetryPolicy, SessionAuth, TokenAuth, UfmClient
from fabric.ufm.auth import UfmAuth
from topology.generate import PRESETS, fat_tree

START = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
USER, PASSWORD = "admin", "123456"
T = TypeVar("T")


def run(coro: Awaitable[T]) -> T:
    return asyncio.run(coro)  # type: ignore[arg-type]


def make_state(version: str = "6.20.0", job_seconds: float = 1.0, seed: int = 0) -> SimState:
    return SimState.from_plan(fat_tree(PRESETS["tiny"]), clock=SimClock(START),
                              settings=SimSettings(ufm_version=version, job_seconds=job_seconds, seed=seed))


@dataclass
class Sim:
    """A running simulator and helpers to drive it through its admin API."""

    server: RunningServer
    http: httpx.Client

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def state(self) -> SimState:
        return self.server.state

    def inject(self, **step: Any) -> dict[str, Any]:
        response = self.http.post("/simulator/faults", json=step)
        assert response.status_code == 200, response.text
        return dict(response.json())

    def advance(self, seconds: float) -> None:
        response = self.http.post("/simulator/clock/advance", json={"seconds": seconds})
        assert response.status_code == 200, response.text
        assert response.json()["errors"] == []

    def get(self, path: str, **params: Any) -> Any:
        response = self.http.get(path, params=params or None, auth=(USER, PASSWORD))
        assert response.status_code == 200, (path, response.status_code, response.text)
        return response.json()

    def token(self) -> str:
        response = self.http.post("/ufmRest/app/tokens", auth=(USER, PASSWORD))
        assert response.status_code == 200, response.text
        return str(response.json()["access_token"])

    def auth(self, mode: str) -> UfmAuth:
        if mode == "basic":
            return BasicAuth(USER, PASSWORD)
        if mode == "session":
            return SessionAuth(USER, PASSWORD)
        return TokenAuth(self.token())

    def client(self, mode: str = "basic", *, advancing: bool = True, **kwargs: Any) -> UfmClient:
        """The project's UFM client against this simulator.

        With ``advancing`` the client's waits (job polling, confirmation, retry backoff) move the simulated
        clock instead of sleeping, so a job that takes simulated seconds completes without real waiting.
        """
        options: dict[str, Any] = {
            "retry": RetryPolicy(attempts=1),
            "job_poll": JobPollPolicy(interval=1.0, deadline=30.0),
            "timeout": 10.0,
        }
        if advancing:
            options["sleep"] = simulated_sleep(self.url)
        options.update(kwargs)
        return UfmClient(self.url, self.auth(mode), **options)

    def event_ids(self) -> list[int]:
        return [int(e["event_type"]) for e in self.get("/ufmRest/app/events")]
