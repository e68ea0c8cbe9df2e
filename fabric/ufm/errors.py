"""Typed errors raised by the UFM client.

Every error says what was asked (HTTP method and path) and, when UFM answered, what came back
(status code and the first ``BODY_EXCERPT_CHARS`` characters of the body).  The client raises one of
these instead of ever handing partial data to its caller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabric.errors import ErrorKind, FabricError

if TYPE_CHECKING:
    from fabric.ufm.models import Job

BODY_EXCERPT_CHARS = 200


def excerpt(body: str | bytes | None, limit: int = BODY_EXCERPT_CHARS) -> str | None:
    """The first ``limit`` characters of a response body, decoded leniently; ``None`` stays ``None``."""
    if body is None:
        return None
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    if len(text) > limit:
        return text[:limit] + "…"
    return text


class UfmError(FabricError):
    """Base class of every error the UFM client raises."""

    kind = ErrorKind.UFM

    def __init__(
        self,
        summary: str,
        *,
        method: str | None = None,
        path: str | None = None,
        status_code: int | None = None,
        body: str | bytes | None = None,
    ) -> None:
        self.summary = summary
        self.method = method
        self.path = path
        self.status_code = status_code
        self.body_excerpt = excerpt(body)
        super().__init__(self._render())

    def _render(self) -> str:
        parts = [self.summary]
        if self.method or self.path:
            parts.append(f"request: {self.method or '?'} {self.path or '?'}")
        if self.status_code is not None:
            parts.append(f"status: {self.status_code}")
        if self.body_excerpt is not None:
            parts.append(f"body: {self.body_excerpt!r}")
        return "; ".join(parts)


class UfmHttpStatusError(UfmError):
    """UFM answered with an HTTP status the client did not expect (e.g. 400, 409)."""


class UfmAuthError(UfmHttpStatusError):
    """Authentication or authorisation failed (401/403, or a session login that did not take)."""


class UfmNotFoundError(UfmHttpStatusError):
    """The object does not exist (404, or UFM's empty list for an unknown id)."""


class UfmServerError(UfmHttpStatusError):
    """UFM failed with a 5xx status."""


class UfmTransportError(UfmError):
    """No usable HTTP answer: connection refused or reset, TLS failure, protocol error.

    For a write (POST/PUT) the outcome is unknown: the action may or may not have been applied.
    """


class UfmTimeoutError(UfmTransportError):
    """The request timed out (connect, read, write or pool timeout)."""


class UfmOutcomeUnknownError(UfmTransportError):
    """A write (``POST /actions``) got no usable answer: UFM may or may not be carrying it out.

    Settled by reading UFM (the object's state), never by sending the write again.
    """


class UfmMalformedResponseError(UfmError):
    """UFM answered, but the body is not what the API promises: garbage, truncated JSON, wrong shape."""


class UfmResponseTooLargeError(UfmMalformedResponseError):
    """UFM's answer is longer than the client takes: refused as its length was announced, or as soon as the bytes
    read passed the limit, never read whole. Not retried: the same request would get the same answer."""


class UfmJobError(UfmError):
    """A UFM job did not finish successfully."""

    def __init__(
        self,
        summary: str,
        *,
        job: Job | None = None,
        method: str | None = None,
        path: str | None = None,
        status_code: int | None = None,
        body: str | bytes | None = None,
    ) -> None:
        self.job = job
        super().__init__(summary, method=method, path=path, status_code=status_code, body=body)


class UfmJobFailedError(UfmJobError):
    """The job ended as "Completed With Errors" or "Aborted" (or another failing status)."""


class UfmJobTimeoutError(UfmJobError):
    """The job was still not finished when the polling deadline passed."""
