"""The ticket webhook receiver over real HTTP on a real SQLite store: what it refuses changes nothing, a delivery
is stored once, and only tickets of this fabric are kept."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from webhook_support import SECRET, TOKEN, jira_body, signed, webhooks

from fabric.api.webhooks import webhook_router
from fabric.config import load_config
from fabric.controller.ticketing import Ticketing
from fabric.store import Store
from tickets.events import MAX_BODY_BYTES
from tickets.local import LocalTicketBackend
from topology.generate import PRESETS, fat_tree

NOW = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)


@dataclass
class Receiver:
    url: str
    store: Store
    ticket: str
    """The key of a ticket of this fabric (the storm ticket, open)."""
    client: httpx.Client
    """One client, kept: a new one costs a TLS context (60 ms), even for plain HTTP."""

    def jira(self, body: bytes, headers: dict[str, str] | None = None) -> httpx.Response:
        return self.client.post(f"{self.url}/webhooks/jira", content=body, headers=headers or {})

    def generic(self, payload: object, token: str | None = TOKEN, scheme: str = "Bearer") -> httpx.Response:
        headers = {"Authorization": f"{scheme} {token}"} if token is not None else {}
        return self.client.post(f"{self.url}/webhooks/generic", json=payload, headers=headers)

    def stored(self) -> list[str]:
        return [d.id for d in self.store.unprocessed_deliveries()]


@pytest.fixture
def receiver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    monkeypatch.setenv("FABRIC_TICKETS__WEBHOOK_SECRET", SECRET)
    monkeypatch.setenv("FABRIC_TICKETS__WEBHOOK_TOKEN", TOKEN)
    store = Store.open(f"sqlite:///{tmp_path / 'fabric.db'}", fabric="test", clock=lambda: NOW)
    ticket = Ticketing(store, LocalTicketBackend(store.engine, clock=lambda: NOW), "test").ensure_open(
        None, "storm", "a storm")
    try:
        with webhooks(store, fat_tree(PRESETS["tiny"]), load_config(), lambda: NOW) as url, \
                httpx.Client(timeout=30) as client:
            yield Receiver(url, store, ticket.key, client)
    finally:
        store.close()


def test_a_signed_delivery_is_stored_and_answered_at_once(receiver: Receiver) -> None:
    response = receiver.jira(jira_body(receiver.ticket), signed(jira_body(receiver.ticket), "d-1"))
    assert response.status_code == 202
    assert response.json() == {"outcome": "accepted", "ticket": receiver.ticket, "delivery": "d-1"}
    (delivery,) = receiver.store.unprocessed_deliveries()
    assert (delivery.id, delivery.source) == ("d-1", "jira")
    assert delivery.payload == {"ticket": receiver.ticket, "status": "resolved", "at": "2026-01-01T00:00:00+00:00"}


@pytest.mark.parametrize("headers", [
    {},  # unsigned
    {"X-Hub-Signature": "sha256=" + "0" * 64},
    {"X-Hub-Signature": "sha256=not-hex"},
    {"X-Hub-Signature": "sha1=" + "0" * 40},
    {"X-Hub-Signature": "sha256=\u00e9".encode("latin-1")},  # not ASCII (httpx sends bytes as they are)
])
def test_unsigned_or_wrongly_signed_deliveries_are_refused_and_change_nothing(
        receiver: Receiver, headers: dict[str, str]) -> None:
    response = receiver.jira(jira_body(receiver.ticket), headers | {"X-Atlassian-Webhook-Identifier": "d-1"})
    assert response.status_code == 401 and "X-Hub-Signature" in response.json()["detail"]
    assert receiver.stored() == []


def test_a_signature_of_another_body_or_with_another_secret_is_refused(receiver: Receiver) -> None:
    body = jira_body(receiver.ticket)
    assert receiver.jira(body, signed(body, "d-1", secret="another-key")).status_code == 401
    other = jira_body(receiver.ticket, category="indeterminate")
    assert receiver.jira(body, signed(other, "d-1")).status_code == 401
    assert receiver.stored() == []


def test_a_replayed_delivery_answers_200_and_changes_nothing(receiver: Receiver) -> None:
    body = jira_body(receiver.ticket)
    assert receiver.jira(body, signed(body, "d-1")).status_code == 202
    replay = receiver.jira(body, signed(body, "d-1"))
    assert replay.status_code == 200 and replay.json()["outcome"] == "duplicate"
    # The identifier is the delivery, whatever the body says now (Jira's retries carry the same one).
    reopened = jira_body(receiver.ticket, category="indeterminate")
    assert receiver.jira(reopened, signed(reopened, "d-1")).json()["outcome"] == "duplicate"
    (delivery,) = receiver.store.unprocessed_deliveries()
    assert delivery.payload["status"] == "resolved"


def test_without_an_identifier_the_issue_key_and_changelog_id_identify_a_delivery(receiver: Receiver) -> None:
    body = jira_body(receiver.ticket, changelog=77)
    headers = signed(body, "")
    del headers["X-Atlassian-Webhook-Identifier"]
    assert receiver.jira(body, headers).json()["delivery"] == f"{receiver.ticket}:77"
    assert receiver.jira(body, headers).status_code == 200
    assert receiver.stored() == [f"{receiver.ticket}:77"]


@pytest.mark.parametrize("chunked", [False, True])
def test_an_oversized_body_is_refused(receiver: Receiver, chunked: bool) -> None:
    body = b"{" + b" " * MAX_BODY_BYTES + b"}"

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit is checked while the body is read
        for start in range(0, len(body), 65_536):
            yield body[start:start + 65_536]

    response = httpx.post(f"{receiver.url}/webhooks/jira", content=chunks() if chunked else body,
                          headers=signed(body, "d-1"), timeout=30)
    assert response.status_code == 413 and "1,048,576 bytes" in response.json()["detail"]
    assert receiver.stored() == []


@pytest.mark.parametrize(("body", "detail"), [
    (b"{not json", "body is not JSON"),
    (b"\xff\xfe", "body is not UTF-8"),
    (b"[]", "body: expected a JSON object"),
    (json.dumps({"webhookEvent": "jira:issue_updated", "issue": {"key": ""}}).encode(), "issue.key"),
    # Read last-wins, the delivery would be about OPS-2 while its sender meant OPS-1.
    (b'{"webhookEvent": "jira:issue_updated", "issue": {"key": "OPS-1", "key": "OPS-2"}}',
     "body: issue.key: duplicate key 'key'"),
    (b'{"webhookEvent": "jira:issue_updated", "timestamp": NaN}', "body: timestamp: NaN is not a number"),
])
def test_a_malformed_body_is_400_naming_what_is_wrong(receiver: Receiver, body: bytes, detail: str) -> None:
    response = receiver.jira(body, signed(body, "d-1"))
    assert response.status_code == 400 and detail in response.json()["detail"]
    assert receiver.stored() == []


def test_an_unknown_ticket_is_202_and_ignored(receiver: Receiver) -> None:
    body = jira_body("OPS-999")
    response = receiver.jira(body, signed(body, "d-1"))
    assert response.status_code == 202 and response.json()["outcome"] == "ignored"
    assert receiver.stored() == []


def test_without_a_secret_jira_deliveries_are_taken_unsigned(receiver: Receiver,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FABRIC_TICKETS__WEBHOOK_SECRET")  # the secret is read when a delivery comes
    response = receiver.jira(jira_body(receiver.ticket), {"X-Atlassian-Webhook-Identifier": "d-1"})
    assert response.status_code == 202 and receiver.stored() == ["d-1"]


def test_the_generic_endpoint_takes_the_bearer_token(receiver: Receiver) -> None:
    response = receiver.generic({"ticket": receiver.ticket, "status": "resolved"})
    assert response.status_code == 202 and response.json()["outcome"] == "accepted"
    assert receiver.generic({"ticket": receiver.ticket, "status": "resolved"}).json()["outcome"] == "duplicate"
    assert receiver.generic({"ticket": receiver.ticket, "status": "reopened"}).status_code == 202
    assert len(receiver.stored()) == 2
    (generic,) = {d.source for d in receiver.store.unprocessed_deliveries()}
    assert generic == "generic"


@pytest.mark.parametrize(("scheme", "token"), [("Bearer", None), ("Bearer", "wrong"), ("Basic", TOKEN),
                                               ("Bearer", TOKEN + "x")])
def test_the_generic_endpoint_refuses_a_missing_or_wrong_token(receiver: Receiver, scheme: str,
                                                               token: str | None) -> None:
    response = receiver.generic({"ticket": receiver.ticket, "status": "resolved"}, token=token, scheme=scheme)
    assert response.status_code == 401 and response.headers["WWW-Authenticate"] == "Bearer"
    assert receiver.stored() == []


def test_without_a_token_the_generic_endpoint_refuses_everything(receiver: Receiver,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FABRIC_TICKETS__WEBHOOK_TOKEN")
    response = receiver.generic({"ticket": receiver.ticket, "status": "resolved"}, token=None)
    assert response.status_code == 401 and "no webhook token is configured" in response.json()["detail"]
    assert receiver.stored() == []


@pytest.mark.parametrize(("payload", "detail"), [
    ({"ticket": "LOCAL-1", "status": "done"}, "status: expected"),
    ({"status": "resolved"}, "ticket: expected a ticket key"),
])
def test_a_generic_delivery_that_says_nothing_usable_is_400(receiver: Receiver, payload: object,
                                                            detail: str) -> None:
    response = receiver.generic(payload)
    assert response.status_code == 400 and detail in response.json()["detail"]
    assert receiver.stored() == []


def test_a_secret_file_gone_since_the_start_is_503_and_stores_nothing(tmp_path: Path, receiver: Receiver) -> None:
    secret = tmp_path / "webhook-secret"
    secret.write_text(SECRET)
    config = load_config(write_config(tmp_path, f'[tickets]\nwebhook_secret_file = "{secret}"\n'))
    secret.unlink()
    with webhooks(receiver.store, fat_tree(PRESETS["tiny"]), config, lambda: NOW) as url:
        body = jira_body(receiver.ticket)
        response = httpx.post(f"{url}/webhooks/jira", content=body, headers=signed(body, "d-1"), timeout=30)
    assert response.status_code == 503 and SECRET not in response.text
    assert receiver.stored() == []


def write_config(directory: Path, text: str) -> Path:
    path = directory / "config.toml"
    path.write_text(text)
    return path


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.one_of(st.binary(max_size=300), st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12).map(lambda value: json.dumps(value).encode())),
    signature=st.text(st.characters(min_codepoint=0x21, max_codepoint=0xFF, exclude_categories=["Cc"]),
                      max_size=80))
def test_no_body_gets_in_unsigned_and_none_signed_is_a_server_error(receiver: Receiver, body: bytes,
                                                                    signature: str) -> None:
    before = receiver.stored()
    forged = receiver.jira(body, {"X-Hub-Signature": signature.encode("latin-1")})
    assert forged.status_code == 401 and receiver.stored() == before
    response = receiver.jira(body, signed(body, "fuzzed"))
    assert response.status_code in (200, 202, 400), response.text
    if response.status_code == 400:
        assert receiver.stored() == before


def test_openapi_describes_both_endpoints_their_bodies_and_answers() -> None:
    app = FastAPI()
    app.include_router(webhook_router())
    paths = app.openapi()["paths"]
    for path, required in (("/webhooks/jira", ["webhookEvent", "issue"]), ("/webhooks/generic", ["ticket", "status"])):
        post = paths[path]["post"]
        assert post["requestBody"]["content"]["application/json"]["schema"]["required"] == required
        assert {"200", "202", "400", "401", "413"} <= set(post["responses"])


def test_deliveries_arriving_together_are_each_stored_once_and_answered_after_their_commit(
        receiver: Receiver) -> None:
    """The group commit: deliveries sent at once (each id twice, one for another fabric's ticket) share
    transactions; each id is stored once, its repeat answered as a duplicate, and every answer comes after the
    delivery is in the store."""
    ids = [f"burst-{n}" for n in range(15)]
    unknown = jira_body("OPS-404")

    async def burst() -> list[tuple[str, int]]:
        async with httpx.AsyncClient(base_url=receiver.url, timeout=60) as client:
            async def send(delivery: str, body: bytes) -> tuple[str, int]:
                response = await client.post("/webhooks/jira", content=body, headers=signed(body, delivery))
                if response.status_code in (200, 202) and body is not unknown:
                    assert delivery in receiver.stored()  # committed before it was answered
                return delivery, response.status_code

            body = jira_body(receiver.ticket)
            sends = [send(d, body) for d in ids * 2] + [send("burst-unknown", unknown)]
            return list(await asyncio.gather(*sends))

    answers = asyncio.run(burst())
    by_id = {d: sorted(code for i, code in answers if i == d) for d in ids}
    assert by_id == {d: [200, 202] for d in ids}
    assert ("burst-unknown", 202) in answers
    assert sorted(receiver.stored()) == sorted(ids)
