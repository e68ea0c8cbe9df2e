"""Fixtures for the UFM client tests: a respx router as the network, and time that never waits."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx
from ufm_fakes import BASE, ClientFactory, FakeTime

from fabric.ufm.auth import BasicAuth, UfmAuth
from fabric.ufm.client import JobPollPolicy, RetryPolicy, UfmClient


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def router() -> Iterator[respx.Router]:
    mock = respx.Router(base_url=BASE, assert_all_called=False, assert_all_mocked=True)
    yield mock


@pytest.fixture
def make_client(router: respx.Router, fake_time: FakeTime) -> ClientFactory:
    def factory(auth: UfmAuth | None = None, **kwargs: Any) -> UfmClient:
        kwargs.setdefault("retry", RetryPolicy(attempts=3, backoff=0.5, multiplier=2.0))
        kwargs.setdefault("job_poll", JobPollPolicy(interval=3.0, deadline=30.0))
        return UfmClient(
            BASE,
            auth or BasicAuth("admin", "s3cret"),
            transport=httpx.MockTransport(router.async_handler),
            sleep=fake_time.sleep,
            clock=fake_time.clock,
            **kwargs,
        )

    return factory
