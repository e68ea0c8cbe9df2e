"""What a new Jira ticket carries beyond its summary: components, a priority by the fault's severity, custom fields
by name (resolved to ids once through ``/field``), through the real ``jira`` library against the fake Jira."""

from __future__ import annotations

import pytest
from jira_support import backend_for, fake_jira, requests_to

from tickets.base import TicketError, dedup_key

PRIORITIES = ((6, "High"), (9, "Highest"))


def test_a_new_ticket_names_its_components_priority_and_custom_fields() -> None:
    with fake_jira() as jira:
        backend = backend_for(jira, components=("Fabric",), priorities=PRIORITIES,
                              fields=(("Data Centre", "DC-1"), ("rack", "R12")))
        worst = backend.open(dedup_key("f", "a"), "module fault", "body", severity=9)
        fields_read = requests_to(jira, "GET", "/field")  # the library reads it too, for its own search
        middling = backend.open(dedup_key("f", "b"), "flap", "body", severity=7)
        mild = backend.open(dedup_key("f", "c"), "errors", "body", severity=2)
        issues = {issue.key: issue for issue in jira.state.issues.values()}
        assert issues[worst.key].extra["priority"] == {"name": "Highest"}
        assert issues[middling.key].extra["priority"] == {"name": "High"}
        assert "priority" not in issues[mild.key].extra, "below every threshold: the project's default"
        assert issues[worst.key].extra["components"] == [{"name": "Fabric"}]
        assert issues[worst.key].extra["customfield_10051"] == "DC-1"
        assert issues[worst.key].extra["customfield_10050"] == "R12", "names match as Jira matches them: any case"
        assert requests_to(jira, "GET", "/field") == fields_read, "the ids are resolved once"


def test_a_custom_field_jira_does_not_have_is_named_and_nothing_is_created() -> None:
    with fake_jira() as jira:
        backend = backend_for(jira, fields=(("Rack", "R1"), ("Row", "3"), ("Hall", "B")))
        with pytest.raises(TicketError) as caught:
            backend.open(dedup_key("f", "a"), "flap", "body")
        assert str(caught.value) == ("tickets.jira.fields.'Row': Jira has no field of that name; "
                                     "tickets.jira.fields.'Hall': Jira has no field of that name")
        assert jira.state.issues == {}
