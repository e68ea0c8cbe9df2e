"""Ticket-system webhook payloads -> ``TicketEvent``: Jira's rule for "resolved", delivery identity, and no
payload whatever its content gets anything but an event or one ``TicketEventError`` naming the field."""

from __future__ import annotations

import contextlib
import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tickets.base import TicketStatus
from tickets.events import MAX_BODY_BYTES, TicketEventError, generic_event, jira_event, parse_body


def jira(event: str = "jira:issue_updated", *, category: str = "indeterminate", resolution: Any = None,
         changelog: Any = 10_001, timestamp: Any = 1_767_225_600_000) -> dict[str, Any]:
    """A Jira webhook body with the fields the service reads (the rest of a real one is ignored)."""
    return {"timestamp": timestamp, "webhookEvent": event, "issue_event_type_name": "issue_generic",
            "user": {"accountId": "5b10a2844c20165700ede21g"},
            "issue": {"id": "10042", "key": "OPS-123", "self": "https://jira.example/rest/api/2/issue/10042",
                      "fields": {"status": {"name": "Fixed in the DC", "id": "10001",
                                            "statusCategory": {"key": category, "name": "whatever"}},
                                 "resolution": resolution, "summary": "flap on pod01-leaf01/33"}},
            "changelog": {"id": changelog, "items": [{"field": "resolution", "fromString": None, "toString": "Done"}]}}


@pytest.mark.parametrize(("payload", "status"), [
    (jira(category="done"), TicketStatus.RESOLVED),  # the category, whatever the status is called
    (jira(resolution={"id": "1", "name": "Done"}), TicketStatus.RESOLVED),  # or a resolution
    (jira(category="indeterminate"), TicketStatus.OPEN),
    (jira(category="new"), TicketStatus.OPEN),
    (jira("jira:issue_created", category="new"), TicketStatus.OPEN),
    (jira("jira:issue_deleted", category="done"), TicketStatus.CLOSED),  # gone: nothing was repaired
])
def test_jira_says_resolved_by_category_or_resolution(payload: dict[str, Any], status: TicketStatus) -> None:
    event = jira_event(payload)
    assert (event.source, event.key, event.status) == ("jira", "OPS-123", status)
    assert event.at == datetime(2026, 1, 1, tzinfo=UTC)


def test_a_delivery_is_the_senders_id_else_key_and_changelog_else_a_digest() -> None:
    assert jira_event(jira(), delivery="3f2a-delivery").delivery == "3f2a-delivery"
    assert jira_event(jira()).delivery == "OPS-123:10001"  # Data Center has no identifier header
    without = jira(changelog=None)
    assert jira_event(without).delivery == jira_event(json.loads(json.dumps(without))).delivery  # a retry
    assert jira_event(without).delivery != jira_event(jira(changelog=None, category="done")).delivery
    assert generic_event({"ticket": "OPS-1", "status": "resolved"}).delivery == \
        generic_event({"status": "resolved", "ticket": "OPS-1"}).delivery  # key order does not matter


def test_generic_payloads() -> None:
    assert generic_event({"ticket": " OPS-9 ", "status": "Resolved"}).status is TicketStatus.RESOLVED
    assert generic_event({"ticket": "OPS-9", "status": "reopened"}).status is TicketStatus.OPEN
    for bad, field in (({"ticket": "OPS-9", "status": "done"}, "status"), ({"status": "resolved"}, "ticket"),
                       ({"ticket": "two words", "status": "resolved"}, "ticket"), ([], "body")):
        with pytest.raises(TicketEventError, match=f"^{field}:"):
            generic_event(bad)


@pytest.mark.parametrize(("raw", "says"), [
    (b"x" * (MAX_BODY_BYTES + 1), "more than"), (b"\xff\xfe{}", "not UTF-8"), (b"{", "not JSON"),
    (b"[" * 100_000, "nested deeper than 100 levels"), (b"1" * 5000, "not JSON"),
])
def test_bodies_that_are_not_json_are_one_error(raw: bytes, says: str) -> None:
    with pytest.raises(TicketEventError, match=says):
        parse_body(raw)


@pytest.mark.parametrize(("raw", "says"), [
    (b'{"ticket": "OPS-1", "status": "reopened", "ticket": "OPS-2"}', "body: ticket: duplicate key 'ticket'"),
    (b'{"issue": {"key": "OPS-1", "fields": {"status": 1, "status": 2}}}', "body: issue.fields.status: duplicate"),
    (b'{"timestamp": NaN}', "body: timestamp: NaN is not a number JSON has"),
])
def test_a_key_given_twice_or_nan_is_refused_naming_the_field(raw: bytes, says: str) -> None:
    """Read last-wins, the first body would reopen OPS-2 while its sender meant OPS-1."""
    with pytest.raises(TicketEventError, match=f"^{re.escape(says)}"):
        parse_body(raw)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                                   max_size=4), max_leaves=20)


def _mutations() -> st.SearchStrategy[Any]:
    """Real-looking Jira bodies with one field replaced by anything."""
    paths = st.sampled_from([("webhookEvent",), ("issue",), ("issue", "key"), ("issue", "fields"),
                             ("issue", "fields", "status"), ("issue", "fields", "status", "statusCategory"),
                             ("issue", "fields", "resolution"), ("changelog",), ("changelog", "id"), ("timestamp",)])

    def mutate(path: tuple[str, ...], value: Any) -> Any:
        body = jira()
        here: Any = body
        for step in path[:-1]:
            here = here[step]
        here[path[-1]] = value
        return body
    return st.builds(mutate, paths, JSON)


@settings(max_examples=300, deadline=None)
@given(st.one_of(JSON, _mutations()))
def test_any_payload_is_an_event_or_one_error_naming_the_field(payload: Any) -> None:
    for parse in (jira_event, generic_event):
        try:
            event = parse(payload)
        except TicketEventError as exc:
            assert str(exc).split(":")[0] in {"body", "webhookEvent", "issue", "issue.key", "issue.fields",
                                              "issue.fields.status", "issue.fields.status.statusCategory",
                                              "changelog", "ticket", "status"}, str(exc)
            continue
        assert event.key and not any(c.isspace() for c in event.key) and event.delivery
        assert event.status in TicketStatus


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_parse_or_fail_as_one_error(raw: bytes) -> None:
    with contextlib.suppress(TicketEventError):  # anything else fails the test
        parse_body(raw)


@pytest.mark.parametrize("delivery", [None, "b6b1c0de-header"])
def test_a_changelog_that_is_not_an_object_is_refused_with_or_without_the_header(delivery: str | None) -> None:
    """With the header the changelog was not read, and ``"changelog": [null]`` was accepted (schemathesis)."""
    payload = {"webhookEvent": "jira:issue_updated", "issue": {"key": "OPS-1"}, "changelog": [None, None]}
    with pytest.raises(TicketEventError, match=r"^changelog: expected an object, got list$"):
        jira_event(payload, delivery=delivery)
