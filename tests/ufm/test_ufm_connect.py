"""Reaching a UFM: the base URL and timeout checks, the retry log, and the parallel snapshot read, against the
UFM simulator over real loopback HTTP."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.simulator import SimState, serve
from fabric.ufm.address import check_base_url, check_timeout
from fabric.ufm.auth import BasicAuth
from fabric.ufm.client import RetryPolicy, UfmClient
from fabric.ufm.connect import AuthMode, ConnectError, UfmTarget
from fabric.ufm.errors import UfmHttpStatusError, UfmServerError, UfmTimeoutError
from fabric.ufm.snapshot import spooled_topology
from topology.generate import PRESETS, fat_tree

PLAN = fat_tree(PRESETS["tiny"])
AUTH = BasicAuth("admin", "123456")


@pytest.mark.parametrize(("url", "message"), [
    ("htp:/x", "must start with http:// or https://"),
    ("127.0.0.1:8000", "must start with http:// or https:// (e.g. https://127.0.0.1:8000)"),
    ("http://", "names no host"),
    ("http://a b/", "cannot contain spaces"),
    ("http://[::1", "not a valid URL"),
    ("http://127.0.0.1:99999", "not a valid URL: Port out of range"),
    ("http://127.0.0.1:0", "port 0"),
    ("https://ufm.example/?x=1", "query"),
    ("", "empty"),
])
def test_unusable_base_urls_say_why(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=None) as refused:
        check_base_url(url)
    assert message in str(refused.value)
    with pytest.raises(ConnectError, match="UFM base URL"):
        UfmTarget(url).client()


@pytest.mark.parametrize("url", ["https://ufm.example", "http://127.0.0.1:8000/", "https://[::1]:443",
                                 "HTTPS://ufm.example/proxy/ufm"])
def test_usable_base_urls(url: str) -> None:
    assert check_base_url(url) == url.rstrip("/")


_URL_PARTS = st.sampled_from(["http://", "https://", "htp:/", "", "http:///", "HTTP://"])
_HOSTS = st.sampled_from(["ufm.example", "127.0.0.1", "[::1]", "[::1", "", "a b", "ü.example", "h:", "h:99999",
                          "h:0", "h:abc", "h:8000", "user@h", "%zz"])
_TAILS = st.sampled_from(["", "/", "/ufm", "?q", "#f", " ", "/a b", "\n"])


@settings(max_examples=400, deadline=None)
@given(url=st.builds(lambda a, b, c: a + b + c, _URL_PARTS, _HOSTS, _TAILS) | st.text(max_size=30))
def test_a_base_url_is_refused_in_one_line_or_usable(url: str) -> None:
    """Whatever the text, the check refuses it with a ValueError or the client accepts what it lets through."""
    try:
        checked = check_base_url(url)
    except ValueError as exc:
        assert "\n" not in str(exc)
        return
    client = UfmClient(checked, AUTH)
    assert client.base_url == checked
    asyncio.run(client.aclose())


@pytest.mark.parametrize("seconds", [0.0, -1.0, float("nan"), float("inf"), 3601.0])
def test_unusable_timeouts(seconds: float) -> None:
    with pytest.raises(ValueError, match="timeout must be more than 0"):
        check_timeout(seconds)
    with pytest.raises(ConnectError, match="timeout"):
        UfmTarget("http://127.0.0.1:1", timeout=seconds).client()


def test_a_missing_ca_bundle_is_a_connect_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_UFM_PASSWORD", "x")
    with pytest.raises(ConnectError, match=r"cannot use the CA bundle .*missing\.pem"):
        UfmTarget("https://127.0.0.1:1", ca_bundle=tmp_path / "missing.pem").client()


def test_the_target_timeout_reaches_the_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_UFM_PASSWORD", "123456")
    state = SimState.from_plan(PLAN)
    with serve(state) as server:
        httpx.post(f"{server.url}/simulator/faults", json={  # every one of the three attempts is slow
            "fault": "api", "endpoint": "/resources/systems", "mode": "delay", "delay": "1s", "requests": 3,
        }).raise_for_status()

        async def read() -> None:
            async with UfmTarget(server.url, AuthMode.BASIC, timeout=0.2).client() as client:
                await client.systems()

        with pytest.raises(UfmTimeoutError, match=r"timed out after 0.2s \(ReadTimeout\)"):
            asyncio.run(read())


def test_the_retry_log_says_why_which_attempt_and_when_next(caplog: pytest.LogCaptureFixture) -> None:
    slept: list[float] = []

    async def no_wait(seconds: float) -> None:
        slept.append(seconds)

    with serve(SimState.from_plan(PLAN)) as server:
        httpx.post(f"{server.url}/simulator/faults", json={
            "fault": "api", "endpoint": "/resources/links", "status": 503, "requests": 3,
        }).raise_for_status()

        async def read() -> None:
            async with UfmClient(server.url, AUTH, retry=RetryPolicy(attempts=3), sleep=no_wait) as client:
                await client.links()

        with caplog.at_level(logging.WARNING, logger="fabric.ufm.http"), pytest.raises(UfmServerError):
            asyncio.run(read())
    lines = [r.getMessage() for r in caplog.records if r.name == "fabric.ufm.http"]
    assert lines == [
        "UFM read failed, retrying: GET /ufmRest/resources/links, attempt 1 of 3: UFM failed (HTTP 503); "
        "next attempt in 0.5s",
        "UFM read failed, retrying: GET /ufmRest/resources/links, attempt 2 of 3: UFM failed (HTTP 503); "
        "next attempt in 1s",
    ]
    assert slept == [0.5, 1.0]


def test_a_failed_snapshot_read_leaves_no_read_running() -> None:
    """systems fails at once; links is slow. By the time the error reaches the caller the other reads are
    cancelled and finished, not left retrying against a client about to be closed."""
    with serve(SimState.from_plan(PLAN)) as server:
        for step in ({"fault": "api", "endpoint": "/resources/systems", "status": 400, "requests": 1},
                     {"fault": "api", "endpoint": "/resources/links", "mode": "delay", "delay": "1s", "requests": 1}):
            httpx.post(f"{server.url}/simulator/faults", json=step).raise_for_status()

        async def read() -> set[asyncio.Task[object]]:
            async with UfmClient(server.url, AUTH) as client:
                with pytest.raises(UfmHttpStatusError, match="HTTP 400"):
                    async with spooled_topology(client):
                        pass
                return asyncio.all_tasks() - {asyncio.current_task()}  # type: ignore[operator]

        assert asyncio.run(read()) == set()
