"""The demo's timeline: every line fits 80 columns, and a decision's line says what the guard decided."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from fabric.api.timeline import WIDTH, Entry, decision_entries, followed_entries, render, short

AT = datetime(2026, 1, 15, 3, 20, 6, tzinfo=UTC)
GUARD = {"c": 0.75, "disabled": 10, "cap": 40, "disables_last_hour": 10, "hourly_limit": 20, "affected_leaves": 1,
         "worst_leaf": "pod03-leaf05", "worst_leaf_paths": 768, "worst_leaf_paths_after": 736,
         "worst_leaf_minimum": 768, "worst_leaf_planned": 1024}
LINK = "link:pod03-leaf05/41|pod03-spine03/17"


def decision(kind: str, reason: str, guard: dict[str, Any] | None = None, rule: str = "ber_critical") -> dict[str, Any]:
    return {"id": 1, "at": AT.isoformat(), "kind": kind, "component": LINK, "rule": rule, "reason": reason,
            "guard": guard or {}, "dry_run": False}


text = st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")), max_size=300)


@given(component=text, what=text, why=text, details=st.lists(text, max_size=3), verbose=st.booleans(),
       wrap=st.booleans())
@example(component="c" * 40, what="w" * 20, why="y " * 100, details=["d" * 200], verbose=True, wrap=False)
@example(component="c" * 40, what="w" * 20, why="y" * 100, details=[], verbose=True, wrap=True)
def test_every_line_fits_80_columns(component: str, what: str, why: str, details: list[str], verbose: bool,
                                    wrap: bool) -> None:
    lines = render(Entry(AT, component, what, why, tuple(details)), verbose=verbose, wrap=wrap)
    assert lines and lines[0].startswith("03:20:06")
    assert all(len(line) <= WIDTH for line in lines), lines


def test_a_deferral_reads_the_guards_verdict_and_its_ticket_joins_its_line() -> None:
    reason = ("ber_critical reported by pod03-leaf05/41: Symbol BER Error exceeded critical threshold (1e-12); kept "
              "up: pod03-leaf05 would keep 736 of 1024 planned paths to core, below the guard's 768 (c = 0.75)")
    entries = decision_entries([decision("defer", reason, GUARD), decision("ticket", reason),
                                decision("record", "already deferred", rule="ber_high")], verbose=False)
    assert entries == [Entry(AT, "pod03-leaf05/41", "deferred+tkt", "ber_critical; pod03-leaf05: 736<768 paths",
                             entries[0].details)]
    assert entries[0].details[0].startswith(f"{LINK}: ber_critical: Symbol BER Error")  # the port that said it, cut
    assert "from 768 to 736 paths to core (minimum 768 of 1024 planned, c 0.75)" in entries[0].details[1]
    assert [e.what for e in decision_entries([decision("record", "already deferred")], verbose=True)] == ["noted"]


def test_a_deferral_the_capacity_allowed_reads_its_reason_not_a_verdict_the_guard_did_not_give() -> None:
    reason = "flap: 5 down/up cycles within 0:10:00; deferred: 2 cables already disabled by automation, the cap is 2"
    within = {**GUARD, "worst_leaf_paths_after": 988}  # above the minimum: the blast radius refused it
    (entry,) = decision_entries([decision("defer", reason, within, rule="flap")], verbose=False)
    assert entry.why == reason


def test_a_cable_is_named_by_its_first_end() -> None:
    assert short(LINK) == "pod03-leaf05/41"
    assert short("switch:pod07-spine02") == "pod07-spine02" and short(None) == "the fabric"


def followed(reason: str, evidence: list[int]) -> list[Entry]:
    """The timeline's entries of a cable reset for a finding with ``reason`` and ``evidence``."""
    detail = {"id": LINK, "decisions": [decision("reset", f"{reason}; reset 1 of 2 within 7d", rule="ber_high")],
              "findings": [{"rule": "ber_high", "at": AT.isoformat(), "reason": reason, "evidence": evidence}],
              "intents": []}
    return followed_entries(detail, lambda event: (AT, f"{event} an event"))


def test_a_finding_only_ufm_telemetry_saw_says_so_first_and_has_no_ufm_event_line() -> None:
    [finding] = followed("2 ber_high events within 2:05:00 (threshold 2) (seen by UFM Telemetry)", [])
    assert finding.what == "finding"
    assert finding.why == "ber_high, seen by UFM Telemetry: 2 ber_high events within 2:05:00 (threshold 2)"
    assert finding.details[1] == "evidence: UFM Telemetry's counters, no UFM event"
    assert render(finding, verbose=False) == [
        "03:20:06 pod03-leaf05/41  finding      ber_high, seen by UFM Telemetry: 2 ber_h…"]
    event, both = followed("2 ber_high events within 2:05:00 (threshold 2) (seen by UFM events and UFM Telemetry)",
                           [7])
    assert (event.what, event.why) == ("UFM event", "7 an event")
    assert both.why.startswith("ber_high, seen by UFM events and UFM Telemetry: 2 ber_high")
