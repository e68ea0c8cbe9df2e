"""The HTTP layer under :class:`fabric.ufm.client.UfmClient`.

One job: send a request to UFM and hand back a 2xx response or raise a typed error.  It adds the REST
prefix and credentials of the configured auth method, retries reads (GET) with exponential backoff on
transport failures, timeouts, 429 and 5xx, never retries writes, logs in again once when a session is
refused (the refused request was not performed, so re-sending it is safe), and decodes JSON bodies.  A read
given a ``limit`` streams its body and refuses one longer than that (``UfmResponseTooLargeError``) without
holding more of it than the limit.
"""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlencode

import httpx

from fabric.ufm.address import DEFAULT_TIMEOUT_S, check_base_url, check_timeout
from fabric.ufm.auth import LOGIN_PATH, BasicAuth, SessionAuth, TokenAuth, UfmAuth
from fabric.ufm.errors import (
    UfmAuthError,
    UfmError,
    UfmHttpStatusError,
    UfmMalformedResponseError,
    UfmNotFoundError,
    UfmResponseTooLargeError,
    UfmServerError,
    UfmTimeoutError,
    UfmTransportError,
)
from topology import strictjson
from topology.errors import InputError
from topology.inputs import CONFIGURATION, read_input
from topology.numerals import whole_number
from topology.redact import redacted_url
from topology.strictjson import JsonError

__all__ = ["RetryPolicy", "SleepFn", "UfmHttp"]

log = logging.getLogger(__name__)

SleepFn = Callable[[float], Awaitable[None]]
_USER_AGENT = "fabric-remediation-ufm-client/0.1"
ERROR_BODY_BYTES = 4096
"""How much of a refused answer's body a limited read keeps (the error shows its first characters)."""


KEEPALIVE_EXPIRY_S = 2.0
"""How long an idle pooled connection is reused: well below the 5 s after which uvicorn (the simulator) and
Apache httpd's default ``KeepAliveTimeout`` close idle connections (UFM's ``/dologin`` form fields are Apache
mod_auth_form's: UNCONFIRMED that its front end keeps the default). With httpx's default, also 5 s, a request
sent on a connection as the server closes it fails with "server disconnected without sending a response"; seen
in the engine's simulator tests on a loaded host, and a write cannot be retried safely."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retries of reads.  ``attempts`` counts every try, so 1 means no retry."""

    attempts: int = 3
    backoff: float = 0.5
    multiplier: float = 2.0
    max_backoff: float = 10.0
    retry_statuses: frozenset[int] = frozenset({429, 500, 502, 503, 504})

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("RetryPolicy.attempts must be at least 1")

    def delay(self, retry_number: int) -> float:
        """Seconds to wait before retry ``retry_number`` (1 for the first retry)."""
        return float(min(self.max_backoff, self.backoff * self.multiplier ** (retry_number - 1)))


def _timeout_text(timeout: float | httpx.Timeout) -> str:
    if isinstance(timeout, httpx.Timeout):
        return f"{timeout.read:g}s" if timeout.read is not None else "no limit"
    return f"{timeout:g}s"


@dataclass(slots=True)
class _Session:
    generation: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


def _ssl_context(verify: bool, ca_bundle: str | Path | None) -> ssl.SSLContext | bool:
    if not verify:
        return False
    if ca_bundle is None:
        return True
    # Read here, not by OpenSSL: a device or an endless pipe named as the bundle is refused, not read forever.
    # ``cadata`` takes ASCII text: certificates are, a bundle's comments may name an issuer in UTF-8.
    pem = read_input(ca_bundle, CONFIGURATION).decode("ascii", errors="ignore")
    if "-----BEGIN CERTIFICATE-----" not in pem:  # an empty ``cadata`` would trust the system's CAs instead
        raise InputError("no PEM certificate (-----BEGIN CERTIFICATE-----) in it", source=str(ca_bundle))
    return ssl.create_default_context(cadata=pem)


class UfmHttp:
    """Requests to one UFM, under the REST prefix of ``auth``; see the module docstring."""

    def __init__(
        self,
        base_url: str,
        auth: UfmAuth,
        *,
        verify: bool = True,
        ca_bundle: str | Path | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: SleepFn | None = None,
        url_in_messages: bool = False,
    ) -> None:
        """``url_in_messages``: errors name the request by its whole URL (redacted), not only its path; for a
        client of a second service of the UFM host (UFM Telemetry), whose URL is not UFM's."""
        try:
            self.base_url = check_base_url(base_url)
            httpx.URL(self.base_url)  # whatever else httpx refuses, refused here as the URL's fault
        except (ValueError, httpx.InvalidURL) as exc:
            raise ValueError(f"UFM base URL {redacted_url(base_url)!r}: {exc}") from None
        if not isinstance(timeout, httpx.Timeout):
            check_timeout(timeout)
        self._timeout = _timeout_text(timeout)
        self.prefix = auth.prefix
        self._origin = redacted_url(self.base_url) if url_in_messages else ""
        self._auth = auth
        self._retry = retry or RetryPolicy()
        self._sleep: SleepFn = sleep or asyncio.sleep
        self._session = _Session()
        headers = {"Accept": "application/json", "User-Agent": _USER_AGENT}
        httpx_auth: httpx.Auth | None = None
        if isinstance(auth, BasicAuth):
            httpx_auth = httpx.BasicAuth(auth.username, auth.password)
        elif isinstance(auth, TokenAuth):
            headers["Authorization"] = auth.header
        self._client = httpx.AsyncClient(
            base_url=self.base_url,
            auth=httpx_auth,
            headers=headers,
            timeout=timeout,
            verify=_ssl_context(verify, ca_bundle),
            transport=transport,
            follow_redirects=False,
            limits=httpx.Limits(keepalive_expiry=KEEPALIVE_EXPIRY_S),
        )

    @property
    def retry(self) -> RetryPolicy:
        return self._retry

    async def aclose(self) -> None:
        await self._client.aclose()

    async def get_json(self, path: str, params: Mapping[str, str] | None = None) -> tuple[Any, int]:
        """The decoded JSON body of a GET, and the status it came with."""
        body, status = await self.get_body(path, params)
        try:
            return strictjson.loads(body), status
        except JsonError as exc:
            raise self.not_json("GET", path, status, body, params, exc) from exc

    async def get_body(self, path: str, params: Mapping[str, str] | None = None,
                       limit: int | None = None) -> tuple[bytes, int]:
        """The raw body of a GET (for a caller that decodes it its own way), and the status it came with;
        ``limit``: the most bytes taken (``UfmResponseTooLargeError`` past it)."""
        response = await self.request("GET", path, params=params, limit=limit)
        return response.content, response.status_code

    async def get_spooled(self, path: str, params: Mapping[str, str] | None = None) -> tuple[IO[bytes], int]:
        """The body of a GET written, as it arrives, to an anonymous temporary file (in ``$TMPDIR``; the caller
        closes it), read from its start, and the status it came with: a list of UFM's that is hundreds of MB
        (``/resources/ports`` on h100-32k: 146 MB) is never held in memory. Retried as ``get_body``."""
        spool = tempfile.TemporaryFile(prefix="fabric-ufm-")  # noqa: SIM115 (handed to the caller, who closes it)
        try:
            response = await self.request("GET", path, params=params, spool=spool)
            spool.seek(0)
        except BaseException:
            spool.close()
            raise
        return spool, response.status_code

    def not_json(self, method: str, path: str, status: int, body: bytes, params: Mapping[str, str] | None,
                 why: JsonError) -> UfmMalformedResponseError:
        """UFM's answer is not JSON (garbage, truncated), or JSON no reader should trust (a key given twice, NaN)."""
        return UfmMalformedResponseError(f"UFM's answer is not JSON the service reads: {why}", method=method,
                                         path=self.display_path(path, params), status_code=status, body=body)

    def malformed(
        self,
        method: str,
        path: str,
        status: int,
        payload: Any,
        exc: Exception,
        params: Mapping[str, str] | None = None,
    ) -> UfmMalformedResponseError:
        """The error for an answer of the wrong shape; ``payload``: what was decoded of it, or its raw body."""
        if isinstance(payload, bytes):
            body = payload[:400].decode("utf-8", errors="replace")
        else:
            try:
                body = json.dumps(payload)[:400]
            except (TypeError, ValueError):
                body = repr(payload)[:400]
        return UfmMalformedResponseError(
            f"UFM's answer has the wrong shape: {str(exc)[:300]}",
            method=method,
            path=self.display_path(path, params),
            status_code=status,
            body=body,
        )

    def display_path(self, path: str, params: Mapping[str, str] | None = None) -> str:
        full = self._origin + self.prefix + path
        return f"{full}?{urlencode(params)}" if params else full

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        json_body: Any = None,
        limit: int | None = None,
        spool: IO[bytes] | None = None,
    ) -> httpx.Response:
        """Send one request; retries GETs only; re-logs in once on a session 401; maps errors; ``limit``: the
        most bytes of body taken; ``spool``: where a 2xx answer's body is written instead (from its start, each
        attempt)."""
        shown = self.display_path(path, params)
        retryable = method == "GET"
        attempts = self._retry.attempts if retryable else 1
        relogged = False
        attempt = 0
        while True:
            attempt += 1
            generation = await self._ensure_session()
            error: UfmError
            try:
                response = await self._send(method, path, params, json_body, limit, spool)
            except httpx.TimeoutException as exc:
                error = UfmTimeoutError(
                    f"UFM request timed out after {self._timeout} ({type(exc).__name__})"
                    + ("" if retryable else "; the outcome of this write is unknown"),
                    method=method,
                    path=shown,
                )
                cause: BaseException = exc
            except httpx.RequestError as exc:
                error = UfmTransportError(
                    f"UFM request failed: {type(exc).__name__}: {exc}"
                    + ("" if retryable else "; the outcome of this write is unknown"),
                    method=method,
                    path=shown,
                )
                cause = exc
            else:
                # An httpx response and its stream refer to each other, so the response, and the body it keeps,
                # live until the cyclic collector runs, which the daemon's collector policy makes rare: on h100-4k
                # that was several of UFM's 18 MB port lists alive at once (``benchmarks/bench_week.py``'s
                # tracemalloc run). The body is read already; without the stream the response goes as soon as the
                # caller drops it.
                response.stream = httpx.ByteStream(b"")
                status = response.status_code
                if status == 401 and isinstance(self._auth, SessionAuth) and not relogged:
                    relogged = True
                    attempt -= 1  # a refused request was not performed: this is no retry
                    log.info("UFM session rejected, logging in again", extra={"ufm_path": shown})
                    await self._relogin(generation)
                    continue
                if 200 <= status < 300:
                    return response
                error = self._status_error(method, shown, response)
                cause = error
                if status not in self._retry.retry_statuses:
                    raise error
            if attempt >= attempts:
                raise error from (cause if cause is not error else None)
            delay = self._retry.delay(attempt)
            log.warning(
                "UFM read failed, retrying: %s %s, attempt %d of %d: %s; next attempt in %gs",
                method, shown, attempt, attempts, error.summary[:300], delay,
                extra={"ufm_path": shown, "attempt": attempt, "attempts": attempts, "delay_s": delay,
                       "error": str(error)[:300]},
            )
            await self._sleep(delay)

    async def _send(self, method: str, path: str, params: Mapping[str, str] | None, json_body: Any,
                    limit: int | None, spool: IO[bytes] | None) -> httpx.Response:
        if limit is None and spool is None:
            return await self._client.request(method, self.prefix + path, params=params, json=json_body)
        request = self._client.build_request(method, self.prefix + path, params=params, json=json_body)
        response = await self._client.send(request, stream=True)
        try:
            ok = 200 <= response.status_code < 300
            if ok and spool is not None:
                spool.seek(0)
                spool.truncate()
                async for chunk in response.aiter_bytes():
                    spool.write(chunk)
                return httpx.Response(response.status_code, headers=response.headers, request=request)
            wanted = limit if ok and limit is not None else ERROR_BODY_BYTES
            declared = whole_number(response.headers.get("content-length", ""))
            if ok and declared is not None and declared > wanted:
                raise self._too_large(method, path, params, response.status_code, wanted,
                                      f"announces {declared:,} bytes")
            chunks: list[bytes] = []
            taken = 0
            async for chunk in response.aiter_bytes():
                chunks.append(chunk)
                taken += len(chunk)
                if taken > wanted:
                    if ok:
                        raise self._too_large(method, path, params, response.status_code, wanted,
                                              f"went on past {taken:,} bytes")
                    break
        finally:
            await response.aclose()
        return httpx.Response(response.status_code, headers=response.headers, content=b"".join(chunks)[:wanted],
                              request=request)

    def _too_large(self, method: str, path: str, params: Mapping[str, str] | None, status: int, limit: int,
                   how: str) -> UfmResponseTooLargeError:
        shown = self.display_path(path, params)
        return UfmResponseTooLargeError(f"the answer is longer than the {limit:,} bytes allowed: it {how}",
                                        method=method, path=shown, status_code=status)

    @staticmethod
    def _status_error(method: str, path: str, response: httpx.Response) -> UfmHttpStatusError:
        status = response.status_code
        cls: type[UfmHttpStatusError]
        if status in (401, 403):
            cls, what = UfmAuthError, "UFM refused the credentials"
        elif status == 404:
            cls, what = UfmNotFoundError, "UFM has no such object"
        elif status >= 500:
            cls, what = UfmServerError, "UFM failed"
        else:
            cls, what = UfmHttpStatusError, "UFM answered an unexpected status"
        return cls(f"{what} (HTTP {status})", method=method, path=path, status_code=status, body=response.content)

    # ---------------------------------------------------------------------------------- session login

    async def _ensure_session(self) -> int:
        if not isinstance(self._auth, SessionAuth):
            return 0
        if self._session.generation == 0:
            async with self._session.lock:
                if self._session.generation == 0:
                    await self._login(self._auth)
        return self._session.generation

    async def _relogin(self, seen_generation: int) -> None:
        assert isinstance(self._auth, SessionAuth)
        async with self._session.lock:
            if self._session.generation == seen_generation:
                await self._login(self._auth)

    async def _login(self, auth: SessionAuth) -> None:
        self._client.cookies.clear()
        try:
            response = await self._client.post(
                LOGIN_PATH, data={"httpd_username": auth.username, "httpd_password": auth.password}
            )
        except httpx.TimeoutException as exc:
            raise UfmTimeoutError("UFM session login timed out", method="POST", path=LOGIN_PATH) from exc
        except httpx.RequestError as exc:
            raise UfmTransportError(
                f"UFM session login failed: {type(exc).__name__}: {exc}", method="POST", path=LOGIN_PATH
            ) from exc
        status = response.status_code
        if status >= 400:
            if status in (401, 403):
                raise UfmAuthError(
                    "UFM session login refused",
                    method="POST",
                    path=LOGIN_PATH,
                    status_code=status,
                    body=response.content,
                )
            raise self._status_error("POST", LOGIN_PATH, response)
        if not self._client.cookies:
            raise UfmAuthError(
                "UFM session login answered but set no session cookie (wrong credentials?)",
                method="POST",
                path=LOGIN_PATH,
                status_code=status,
                body=response.content,
            )
        self._session.generation += 1
        log.info("UFM session established", extra={"ufm_user": auth.username})
