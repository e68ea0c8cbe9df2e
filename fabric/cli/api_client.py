"""The running daemon's HTTP API as the ops commands call it (``--api URL``): one sync client, every failure one line.

Its one job is the calls and their errors: an unreachable API, a refused token, a missing or conflicting thing or
bad input all become an ``ApiError`` (a ``FabricError``: ``fabric.cli.app`` prints it as one line, exit 2) whose
message is the API's own one-line ``detail``. What the answers mean is the commands' business.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import Any, Self

import httpx

from fabric.config import ADMIN_TOKEN_ENV
from fabric.errors import FabricError
from topology import strictjson
from topology.strictjson import JsonError

PREFIX = "/api/v1"
"""Where the daemon serves the API (``fabric.api.app.PREFIX``; not imported, so that a command over the API does
not load FastAPI)."""
TIMEOUT_SECONDS = 10.0
"""Per request: a daemon that does not answer within it is reported, not waited on."""


class ApiError(FabricError):
    """The API could not be reached, or refused or failed a request."""


class ApiClient:
    """Calls on the API of the daemon at ``url`` (``http://host:8080``, with or without ``/api/v1``)."""

    def __init__(self, url: str, *, timeout: float = TIMEOUT_SECONDS) -> None:
        self.url = url.rstrip("/").removesuffix(PREFIX)
        self._http = httpx.Client(base_url=self.url + PREFIX, timeout=timeout)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._http.close()

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self._call("GET", path, params=params)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        """A write: it carries the admin token."""
        return self._call("POST", path, json=body, headers=self._admin())

    def delete(self, path: str, params: dict[str, Any]) -> Any:
        """A write: it carries the admin token."""
        return self._call("DELETE", path, params=params, headers=self._admin())

    def _admin(self) -> dict[str, str]:
        token = os.environ.get(ADMIN_TOKEN_ENV, "").strip()
        if not token:
            raise ApiError(f"this write needs the daemon's admin token: set {ADMIN_TOKEN_ENV}")
        return {"Authorization": f"Bearer {token}"}

    def _call(self, method: str, path: str, **request: Any) -> Any:
        try:
            response = self._http.request(method, path, **request)
        except httpx.TimeoutException:
            raise ApiError(f"the API at {self.url} did not answer within {self._http.timeout.read} s") from None
        except httpx.HTTPError as exc:  # refused, no such host, a broken connection, a URL httpx cannot use
            raise ApiError(f"the API at {self.url} is unreachable: {exc or type(exc).__name__}") from None
        try:
            answer = strictjson.loads(response.content)
        except JsonError as exc:
            if exc.path is not None:  # JSON, but with a key given twice, NaN...: no answer of the daemon's
                raise ApiError(f"the API at {self.url} answered {method} {path} with JSON the CLI refuses: "
                               f"{exc}") from None
            raise ApiError(f"the API at {self.url} answered {response.status_code} {response.reason_phrase} to "
                           f"{method} {path}, not JSON: is {self.url} the daemon's address?") from None
        if response.is_success:
            return answer
        detail = answer.get("detail") if isinstance(answer, dict) else None
        message = detail if isinstance(detail, str) else f"{response.status_code} {response.reason_phrase}"
        if response.status_code == httpx.codes.UNAUTHORIZED:
            message += f" (set {ADMIN_TOKEN_ENV} to the daemon's admin token)"
        elif response.status_code == httpx.codes.FORBIDDEN:
            message = f"the daemon at {self.url} refuses: {message}"
        raise ApiError(message)
