"""The running daemon's HTTP API as the ops commands call it (``--api URL``): one sync client, every failure one line.

Its one job is the calls and their errors: an unreachable API, a refused token, a missing or conflicting thing or
bad input all become an ``ApiError`` (a ``FabricError``: ``fabric.cli.app`` prints it as one line, exit 2) whose
message is the API's own one-line ``detail``. A URL that answers, but not as the daemon does (another service: a
path it does not know, an answer that is not JSON or not the daemon's models) is said to be one. What the answers
mean is the commands' business.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from fabric.cli.common import API_URL_ENV
from fabric.config import ADMIN_TOKEN_ENV
from fabric.errors import FabricError
from topology import strictjson
from topology.redact import redacted_url
from topology.strictjson import JsonError

PREFIX = "/api/v1"
"""Where the daemon serves the API (``fabric.api.app.PREFIX``; not imported, so that a command over the API does
not load FastAPI)."""
_NO_SUCH_ROUTE = (httpx.codes.NOT_FOUND, httpx.codes.METHOD_NOT_ALLOWED)
"""The statuses a web framework answers, with its reason phrase as the detail, for a path it does not serve."""
TIMEOUT_SECONDS = 10.0
"""Per request: a daemon that does not answer within it is reported, not waited on."""


M = TypeVar("M", bound=BaseModel)


class ApiError(FabricError):
    """The API could not be reached, or refused or failed a request (``status``: its HTTP status, if it answered)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ApiClient:
    """Calls on the API of the daemon at ``url`` (``http://host:8080``, with or without ``/api/v1``)."""

    def __init__(self, url: str, *, timeout: float = TIMEOUT_SECONDS) -> None:
        self.url = url.rstrip("/").removesuffix(PREFIX)
        self.shown = redacted_url(self.url)
        """The URL as messages show it."""
        self._http = httpx.Client(base_url=self.url + PREFIX, timeout=timeout)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._http.close()

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self._call("GET", path, params=params)

    def get_as(self, model: type[M], path: str, params: dict[str, Any] | None = None) -> M:
        """``GET path`` read as the daemon's ``model``."""
        return self._read_as(model, "GET", path, self.get(path, params))

    def get_list_of(self, model: type[M], path: str, params: dict[str, Any] | None = None) -> list[M]:
        """``GET path`` read as a list of the daemon's ``model``."""
        answer = self.get(path, params)
        if not isinstance(answer, list):
            raise self._not_the_daemon("GET", path, "not a list")
        return [self._read_as(model, "GET", path, item) for item in answer]

    def post(self, path: str, body: dict[str, Any]) -> Any:
        """A write: it carries the admin token."""
        return self._call("POST", path, json=body, headers=self._admin())

    def post_as(self, model: type[M], path: str, body: dict[str, Any]) -> M:
        """``POST path`` (a write), its answer read as the daemon's ``model``."""
        return self._read_as(model, "POST", path, self.post(path, body))

    def _read_as(self, model: type[M], method: str, path: str, answer: Any) -> M:
        """``answer`` (to ``method path``) as the daemon's ``model``; an answer that is not one is no daemon's."""
        try:
            return model.model_validate(answer)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "the answer"
            raise self._not_the_daemon(method, path, f"{where}: {first['msg']}") from None

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
            raise ApiError(f"the API at {self.shown} did not answer within {self._http.timeout.read} s") from None
        except httpx.HTTPError as exc:  # refused, no such host, a broken connection, a URL httpx cannot use
            raise ApiError(f"the API at {self.shown} is unreachable: {exc or type(exc).__name__}") from None
        said = f"{response.status_code} {response.reason_phrase}"
        try:
            answer = strictjson.loads(response.content)
        except JsonError as exc:
            if exc.path is not None:  # JSON, but with a key given twice, NaN...: no answer of the daemon's
                raise ApiError(f"the API at {self.shown} answered {method} {path} with JSON the CLI refuses: "
                               f"{exc}") from None
            raise self._not_the_daemon(method, path, f"{said}, not JSON") from None
        detail = answer.get("detail") if isinstance(answer, dict) else None
        if response.status_code in _NO_SUCH_ROUTE and detail == response.reason_phrase:
            # The framework's own answer for a path or method it does not serve: the daemon's 404s say what is
            # missing ("no active silence 3"), this one only that the path is not there.
            raise self._not_the_daemon(method, path, said)
        if response.is_success:
            return answer
        message = detail if isinstance(detail, str) else said
        if response.status_code == httpx.codes.UNAUTHORIZED:
            message += f" (set {ADMIN_TOKEN_ENV} to the daemon's admin token)"
        elif response.status_code == httpx.codes.FORBIDDEN:
            message = f"the daemon at {self.shown} refuses: {message}"
        raise ApiError(message, response.status_code)

    def _not_the_daemon(self, method: str, path: str, what: str) -> ApiError:
        return ApiError(f"{self.shown} does not answer as a fabric-remediation daemon does ({method} {PREFIX}{path}: "
                        f"{what}): check --api or {API_URL_ENV}")
