"""A reader of UFM Telemetry's samples: ``GET <url>/csv/xcset/<instance>``, the CSV NVIDIA's PDR plugin reads.

UFM Telemetry's secondary instance (``low_freq_debug``) answers on the UFM host's loopback, port 9002, with no
credentials. The reader follows the REST client's conventions (:mod:`fabric.ufm.http`: timeouts, TLS options,
reads retried with backoff on transport failures, timeouts, 429 and 5xx, typed :mod:`fabric.ufm.errors`) and
adds one of its own: the body is streamed and refused past ``max_bytes`` (announced or read), so a runaway answer
never fills the daemon's memory. Errors name the whole URL, its password and secret query values hidden
(``topology.redact``): the telemetry URL is not UFM's REST URL, and an operator must see which one failed.

The sample is handed back as bytes: parsing it is ``fabric.telemetry``'s job.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import quote

import httpx

from fabric.ufm.address import (
    DEFAULT_TIMEOUT_S,
    TELEMETRY_INSTANCE,
    TELEMETRY_MAX_BYTES,
    TELEMETRY_URL,
    check_instance,
    check_max_bytes,
)
from fabric.ufm.auth import NoAuth
from fabric.ufm.http import RetryPolicy, SleepFn, UfmHttp


class TelemetryClient:
    """Samples of one UFM Telemetry instance. Use as ``async with TelemetryClient(...) as telemetry:``.

    ``transport`` and ``sleep`` replace the network and the back-off's waiting in tests.
    """

    def __init__(
        self,
        url: str = TELEMETRY_URL,
        instance: str = TELEMETRY_INSTANCE,
        *,
        verify: bool = True,
        ca_bundle: str | Path | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        max_bytes: int = TELEMETRY_MAX_BYTES,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: SleepFn | None = None,
    ) -> None:
        self.path = f"/csv/xcset/{quote(check_instance(instance), safe='')}"
        self.max_bytes = check_max_bytes(max_bytes)
        self._http = UfmHttp(url, NoAuth(), verify=verify, ca_bundle=ca_bundle, timeout=timeout, retry=retry,
                             transport=transport, sleep=sleep, url_in_messages=True)
        self.url = self._http.base_url

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def sample(self) -> bytes:
        """One sample, the CSV as served; a ``UfmError`` when none could be read (``UfmResponseTooLargeError``
        for one longer than ``max_bytes``)."""
        body, _ = await self._http.get_body(self.path, limit=self.max_bytes)
        return body
