"""The webhooks the fake Jira sends, as a Jira admin webhook with a secret does: ``jira:issue_updated`` with the
issue and its changelog, signed ``X-Hub-Signature: sha256=<HMAC-SHA256 of the body>``, identified by
``X-Atlassian-Webhook-Identifier`` (the same on every retry, which carries ``X-Atlassian-Webhook-Retry: n``).

Sent from a thread of its own, after the transition answered (Jira's are asynchronous too); a delivery the
receiver does not take (a 429 or 5xx, no connection) is retried a few times, as Jira Cloud does. What came of
each attempt is kept in ``WebhookSender.attempts`` for tests.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

__all__ = ["WebhookAttempt", "WebhookSender", "WebhookTarget", "signature"]


def signature(secret: str, body: bytes) -> str:
    """What ``X-Hub-Signature`` carries for ``body``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass(frozen=True, slots=True)
class WebhookTarget:
    url: str
    """Where deliveries go, e.g. the service's ``http://127.0.0.1:8080/webhooks/jira``."""
    secret: str | None = None
    """The webhook's secret; ``None``: deliveries are not signed (a webhook registered without one)."""
    retries: int = 2
    retry_delay: float = 0.5
    """Seconds before each retry (real seconds: the receiver is a real server)."""


@dataclass(frozen=True, slots=True)
class WebhookAttempt:
    identifier: str
    issue: str
    retry: int
    status: int | None
    """The receiver's answer; ``None``: none came (``error`` says why)."""
    error: str | None = None


@dataclass
class WebhookSender:
    target: WebhookTarget
    attempts: list[WebhookAttempt] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def send(self, issue_key: str, payload: dict[str, Any]) -> threading.Thread:
        """Deliver ``payload`` in the background; returns the thread (tests may join it)."""
        body = json.dumps(payload).encode()
        identifier = str(uuid.uuid4())
        thread = threading.Thread(target=self._deliver, args=(issue_key, identifier, body), daemon=True,
                                  name=f"jira-webhook-{issue_key}")
        thread.start()
        return thread

    def _deliver(self, issue_key: str, identifier: str, body: bytes) -> None:
        headers = {"Content-Type": "application/json", "X-Atlassian-Webhook-Identifier": identifier,
                   "X-Atlassian-Webhook-Flow": "Primary"}
        if self.target.secret is not None:
            headers["X-Hub-Signature"] = signature(self.target.secret, body)
        for retry in range(self.target.retries + 1):
            if retry:
                time.sleep(self.target.retry_delay)
                headers["X-Atlassian-Webhook-Retry"] = str(retry)
            try:
                answer = httpx.post(self.target.url, content=body, headers=headers, timeout=20.0)
            except httpx.HTTPError as exc:
                self._record(WebhookAttempt(identifier, issue_key, retry, None, f"{type(exc).__name__}: {exc}"))
                continue
            self._record(WebhookAttempt(identifier, issue_key, retry, answer.status_code))
            if answer.status_code != 429 and answer.status_code < 500:
                return

    def _record(self, attempt: WebhookAttempt) -> None:
        with self._lock:
            self.attempts.append(attempt)


def issue_updated(issue: dict[str, Any], user: str, changes: list[dict[str, Any]], changelog_id: int,
                  now: Callable[[], float]) -> dict[str, Any]:
    """Jira's ``jira:issue_updated`` payload for ``issue`` (as ``GET /issue`` shows it) changed by ``changes``."""
    return {"timestamp": int(now() * 1000), "webhookEvent": "jira:issue_updated",
            "issue_event_type_name": "issue_generic",
            "user": {"name": user, "key": user, "accountId": f"fake-{user}", "displayName": user},
            "issue": issue, "changelog": {"id": str(changelog_id), "items": changes}}
