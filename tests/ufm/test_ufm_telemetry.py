"""The UFM Telemetry reader and the port reset: against the simulator over HTTP, and error paths with respx."""

from __future__ import annotations

import asyncio
import csv
import io
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime

import httpx
import pytest
import respx
from ufm_fakes import FakeTime

from fabric.simulator import RunningServer, SimClock, SimSettings, SimState, serve
from fabric.simulator.driver import SimulatorDriver, simulated_sleep
from fabric.ufm import (
    BasicAuth,
    JobPollPolicy,
    RetryPolicy,
    TelemetryClient,
    UfmClient,
    UfmJobFailedError,
    UfmNotFoundError,
    UfmResponseTooLargeError,
    UfmServerError,
    UfmTimeoutError,
)
from topology.generate import PRESETS, fat_tree

TELEMETRY = "http://telemetry.example:9002"
PATH = "/csv/xcset/low_freq_debug"


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    state = SimState.from_plan(fat_tree(PRESETS["tiny"]), clock=SimClock(datetime(2025, 3, 1, tzinfo=UTC)),
                               settings=SimSettings(job_seconds=1.0))
    with serve(state) as running:
        yield running


def rows(body: bytes) -> dict[str, dict[str, str]]:
    return {f"{r['Node_GUID'][2:]}_{r['Port_Number']}": r for r in csv.DictReader(io.StringIO(body.decode()))}


def test_a_sample_from_the_simulator(server: RunningServer) -> None:
    async def go() -> bytes:
        async with TelemetryClient(server.url, "low_freq_debug") as telemetry:
            return await telemetry.sample()

    assert set(rows(asyncio.run(go()))) == set(server.state.fabric.ports)


def test_an_unknown_instance_is_not_found_naming_the_url(server: RunningServer) -> None:
    async def go() -> None:
        async with TelemetryClient(server.url, "high_freq", retry=RetryPolicy(attempts=1)) as telemetry:
            await telemetry.sample()

    with pytest.raises(UfmNotFoundError) as refused:
        asyncio.run(go())
    assert f"{server.url}/csv/xcset/high_freq" in str(refused.value)


def test_a_sample_longer_than_announced_allowed_is_refused_over_http(server: RunningServer) -> None:
    async def go() -> None:
        async with TelemetryClient(server.url, max_bytes=1000) as telemetry:
            await telemetry.sample()

    with pytest.raises(UfmResponseTooLargeError) as refused:
        asyncio.run(go())
    assert "1,000 bytes allowed" in str(refused.value) and "announces" in str(refused.value)


def test_a_reset_job_succeeds_and_the_link_counts_a_link_down_on_both_ends(server: RunningServer) -> None:
    state = server.state
    port = state.resolve_port("pod01-spine01/1")
    peer = state.fabric.peer_of(port) or ""

    async def go() -> None:
        async with UfmClient(server.url, BasicAuth("admin", "123456"), retry=RetryPolicy(attempts=1),
                             job_poll=JobPollPolicy(interval=1.0, deadline=30.0),
                             sleep=simulated_sleep(server.url)) as ufm:
            posted = await ufm.post_port_action(port, "reset")
            assert posted.action == "reset" and (await ufm.wait_for_job(posted.job_id or "")).succeeded
            async with TelemetryClient(server.url) as telemetry:
                sample = rows(await telemetry.sample())
            assert (sample[port]["Link_Down_IB"], sample[peer]["Link_Down_IB"]) == ("1", "1")
            SimulatorDriver(server.url).inject(fault="action_failure", count=1, port=port, reason="no answer")
            with pytest.raises(UfmJobFailedError):
                await ufm.wait_for_job((await ufm.post_port_action(port, "reset")).job_id or "")

    asyncio.run(go())


# ---------------------------------------------------------------------------------------------- error paths


def _client(router: respx.Router, fake_time: FakeTime, **kwargs: object) -> TelemetryClient:
    options: dict[str, object] = {"retry": RetryPolicy(attempts=3, backoff=0.5), "sleep": fake_time.sleep,
                                  "transport": httpx.MockTransport(router.async_handler)}
    options.update(kwargs)
    return TelemetryClient(TELEMETRY, **options)  # type: ignore[arg-type]


def _sample(client: TelemetryClient) -> bytes:
    async def go() -> bytes:
        async with client:
            return await client.sample()

    return asyncio.run(go())


@pytest.fixture
def router() -> respx.Router:
    return respx.Router(base_url=TELEMETRY, assert_all_called=False, assert_all_mocked=True)


class _Endless(httpx.AsyncByteStream):
    """A body with no length announced, 64 MiB long (as good as endless: a reader that takes it whole fails the
    test rather than hanging it)."""

    def __init__(self) -> None:
        self.sent = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunk = b"0" * 65_536
        while self.sent < 64 * 1024 * 1024:
            self.sent += len(chunk)
            yield chunk


def test_a_body_read_past_the_limit_is_refused_without_reading_it_whole(router: respx.Router) -> None:
    endless = _Endless()
    router.get(PATH).mock(return_value=httpx.Response(200, stream=endless))
    with pytest.raises(UfmResponseTooLargeError) as refused:
        _sample(_client(router, FakeTime(), max_bytes=1_000_000))
    assert "went on past" in str(refused.value) and f"{TELEMETRY}{PATH}" in str(refused.value)
    assert endless.sent < 1_200_000
    assert len(router.calls) == 1  # the same answer would come again: not retried


def test_5xx_is_retried_with_backoff_then_the_sample_comes(router: respx.Router) -> None:
    route = router.get(PATH).mock(side_effect=[httpx.Response(503), httpx.Response(502),
                                               httpx.Response(200, content=b"timestamp\n")])
    fake_time = FakeTime()
    assert _sample(_client(router, fake_time)) == b"timestamp\n"
    assert route.call_count == 3 and fake_time.sleeps == [0.5, 1.0]


def test_5xx_on_every_attempt_is_a_server_error(router: respx.Router) -> None:
    router.get(PATH).mock(return_value=httpx.Response(500, content=b"x" * 100_000))
    with pytest.raises(UfmServerError) as failed:
        _sample(_client(router, FakeTime()))
    assert failed.value.status_code == 500 and len(failed.value.body_excerpt or "") < 300


def test_a_timeout_on_every_attempt_names_the_url_without_its_password(router: respx.Router) -> None:
    route = respx.Router(base_url="http://user:hunter2@telemetry.example:9002", assert_all_mocked=True)
    route.get(PATH).mock(side_effect=httpx.ReadTimeout("slow"))
    client = TelemetryClient("http://user:hunter2@telemetry.example:9002", retry=RetryPolicy(attempts=2),
                             sleep=FakeTime().sleep, transport=httpx.MockTransport(route.async_handler))
    with pytest.raises(UfmTimeoutError) as failed:
        _sample(client)
    assert "hunter2" not in str(failed.value) and "user:***@telemetry.example:9002" in str(failed.value)
    assert len(route.calls) == 2


@pytest.mark.parametrize(("instance", "max_bytes"), [("a/b", 1), ("", 1), ("low_freq_debug", 0)])
def test_bad_instance_or_limit_is_refused(instance: str, max_bytes: int) -> None:
    with pytest.raises(ValueError, match=r"instance|max_bytes"):
        TelemetryClient(TELEMETRY, instance, max_bytes=max_bytes)
