"""The chaos test's checks on small hand-made histories: each catches what it must, and nothing a correct engine does
(an id UFM reused after a restart, a link event long after an action, a disable exactly an hour after another)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from chaos_invariants import (
    EventIndex,
    UfmEvent,
    breaker_trip,
    disabled_without_one_ticket,
    hourly_rate,
    own_action_evidence,
    repeated_evidence,
    ticket_disagreements,
)

from fabric.remediation.domain import ComponentId, Finding
from fabric.store.records import TicketRecord, TicketState
from tickets.base import Ticket, TicketStatus

T0 = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)
LINK = ComponentId("link", "leaf1/1|spine1/1")
OTHER = ComponentId("link", "leaf1/2|spine1/2")


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def event(epoch: int, id_: int, minute: float, type_: int = 329, component: ComponentId = LINK,
          action: str | None = None, port: str = "p1") -> UfmEvent:
    return UfmEvent(epoch, id_, type_, at(minute), port, component, action)


def flap(*evidence: int, minute: float = 30) -> Finding:
    return Finding(LINK, "flap", at(minute), "flapping", tuple(evidence))


def test_an_event_counted_twice_is_caught_an_id_reused_after_a_ufm_restart_is_not() -> None:
    index = EventIndex([event(0, 1, 1), event(0, 2, 2, 328), event(1, 1, 10), event(1, 2, 11, 328),
                        event(1, 3, 12, component=OTHER)])
    assert repeated_evidence([flap(1, 2, 1, 2)], index) == []  # two epochs, two events each id
    doubled = repeated_evidence([flap(1, 2, 1, 2, minute=5)], index)  # before the restart: one event each
    assert len(doubled) == 1 and "#1 x2 (UFM raised 1), #2 x2 (UFM raised 1)" in doubled[0]
    assert repeated_evidence([flap(3, 3)], index) != []  # only on another component: it still counts once


def test_a_link_event_right_after_automation_acts_on_the_cable_is_its_own() -> None:
    index = EventIndex([event(0, 1, 0), event(0, 2, 1, 328), event(0, 3, 10, 336, action="disable"),
                        event(0, 4, 10, 329), event(0, 5, 20, 336, action="enable"), event(0, 6, 20, 328),
                        event(0, 7, 40, 329), event(0, 8, 20.5, 329, component=OTHER)])
    own = own_action_evidence([flap(1, 2, 4, 6, minute=21)], index)
    assert len(own) == 1 and "#4 after the disable at 08:10:00, #6 after the enable at 08:20:00" in own[0]
    assert own_action_evidence([flap(1, 2, 7, minute=41)], index) == []  # 20 min after the enable: a fault
    assert own_action_evidence([Finding(OTHER, "flap", at(21), "", (8,))], index) == []  # another cable


def tick(when: datetime) -> datetime:
    return when.replace(second=0)


def disables(*minutes: float) -> list[UfmEvent]:
    return [event(0, i, m, 336, action="disable", port=f"p{i}") for i, m in enumerate(minutes, 1)]


def test_the_hourly_limit_counts_every_port_ufm_took_out_in_any_sliding_hour() -> None:
    assert hourly_rate(EventIndex(disables(0, 10, 20, 60, 70)), 3, tick) == []  # the one at 0 left the hour at 60
    over = hourly_rate(EventIndex(disables(0, 10, 20, 59, 70)), 3, tick)
    assert over == ["4 ports taken out in the hour up to 08:59 (limit 3)"]
    again = [event(0, 9, 20.1, 336, action="disable", port="p3"),  # a second job for p3, already out
             event(0, 10, 30, 336, action="enable", port="p1"), event(0, 11, 40, 336, action="disable", port="p1")]
    assert hourly_rate(EventIndex(disables(0, 10, 20) + again), 3, tick) != []  # p1 out again: a fourth
    assert hourly_rate(EventIndex(disables(0, 10, 20) + again[:1]), 3, tick) == []


def test_the_breaker_may_trip_one_cycle_off_not_more() -> None:
    cycle = timedelta(minutes=2)
    assert breaker_trip(at(60), at(62), cycle) == []
    assert "+4 min" in breaker_trip(at(60), at(64), cycle)[0]
    assert "never tripped" in breaker_trip(at(60), None, cycle)[0]
    assert "too small" in breaker_trip(None, at(60), cycle)[0]


def ticket(key: str, dedup: str, status: TicketStatus) -> Ticket:
    return Ticket(key, dedup, "summary", "", status, (dedup,), None, T0)


def key(component: ComponentId) -> str:
    return f"dedup-{component.name}"


def test_a_port_disabled_by_automation_needs_exactly_one_open_ticket() -> None:
    components = {"p1": LINK, "p2": OTHER, "p3": OTHER}
    one = [ticket("L-1", key(LINK), TicketStatus.OPEN)]
    assert disabled_without_one_ticket(["p1"], components, {"p1"}, one, key) == []
    problems = disabled_without_one_ticket(["p1", "p2", "p9"], components, {"p1", "p2"}, one, key)
    assert problems == [f"UFM shows p2 ({OTHER}) disabled by automation with 0 open tickets",
                        "UFM shows p9 (None) disabled, and no intent of automation names it"]
    assert disabled_without_one_ticket(["p2"], components, {"p2"}, one, key, frozenset({OTHER})) == []


def row(id_: int, state: TicketState, external: str | None, dedup: str = "d1") -> TicketRecord:
    return TicketRecord(id_, dedup, "local", external, state, LINK, "summary", T0, T0, None)


def test_store_and_backend_must_agree_on_every_ticket() -> None:
    backend = [ticket("L-1", "d1", TicketStatus.RESOLVED), ticket("L-2", "d2", TicketStatus.OPEN)]
    agreeing = [row(1, TicketState.RESOLVED, "L-1"), row(2, TicketState.OPEN, "L-2", "d2")]
    assert ticket_disagreements(agreeing, backend) == []
    drifted = ticket_disagreements([row(1, TicketState.OPEN, "L-1"), row(2, TicketState.CREATING, None, "d2")],
                                   backend)
    assert drifted == [f"L-1 ({LINK}): open in the store, resolved in the backend",
                       f"the store is still creating {LINK}'s ticket while the backend has L-2 open for it",
                       "L-2 (summary, open in the backend) is unknown to the store"]
