"""The golden set (``fabric.remediation.golden``): Hypothesis on the ledger's invariants, and a simulated month of
the engine over the simulator, its store's history folded as the API folds it (``fabric.api.golden``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from engine_support import rig
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.api.golden import GoldenIndex
from fabric.api.plan_index import plan_index
from fabric.remediation.domain import ComponentId, ComponentKind
from fabric.remediation.golden import Ledger
from topology.generate import PRESETS, fat_tree

T0 = datetime(2026, 11, 1, tzinfo=UTC)
N = timedelta(days=14)
HOSTS = [f"h{i}" for i in range(6)]


def _own(component: ComponentId) -> tuple[str, ...]:
    return (component.name,)


# a finding on a host's component at a day of the month, or its quarantine
events = st.lists(st.tuples(st.sampled_from(HOSTS), st.integers(0, 30), st.booleans()), max_size=20)


def _ledger(history: list[tuple[str, int, bool]], until: int) -> Ledger:
    """The ledger of what happened before day ``until``, fed in the order given (not the order of time)."""
    ledger = Ledger(_own)
    for host, day, quarantined in history:
        if day < until:
            ledger.finding(ComponentId(ComponentKind.HOST, host), T0 + timedelta(days=day))
            if quarantined:
                ledger.quarantine(ComponentId(ComponentKind.HOST, host))
    return ledger


@settings(max_examples=200, deadline=None)
@given(events, st.integers(0, 31), st.sets(st.sampled_from(HOSTS)))
def test_a_host_found_faulty_within_n_days_quarantined_or_unhealthy_is_never_golden(
        history: list[tuple[str, int, bool]], day: int, unhealthy: set[str]) -> None:
    now = T0 + timedelta(days=day)
    golden = set(_ledger(history, day + 1).golden(HOSTS, now, N, T0 - N, unhealthy))
    for host, at, quarantined in history:
        if at <= day and (quarantined or now - (T0 + timedelta(days=at)) < N):
            assert host not in golden
    assert golden.isdisjoint(unhealthy)
    # and every other host is golden: clean for N, never quarantined, healthy
    bad = {host for host, at, quarantined in history if at <= day and (quarantined or day - at < N.days)}
    assert golden == set(HOSTS) - bad - unhealthy


@settings(max_examples=200, deadline=None)
@given(events, st.integers(0, 30), st.integers(0, 30))
def test_without_new_findings_the_golden_set_only_grows(history: list[tuple[str, int, bool]], day: int,
                                                        later: int) -> None:
    ledger = _ledger(history, day + 1)  # nothing found after ``day``
    first = set(ledger.golden(HOSTS, T0 + timedelta(days=day), N, T0 - N))
    assert first <= set(ledger.golden(HOSTS, T0 + timedelta(days=day + later), N, T0 - N))


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 30))
def test_nothing_is_golden_before_the_service_watched_for_n(day: int) -> None:
    now = T0 + timedelta(days=day)
    assert (Ledger(_own).golden(HOSTS, now, N, T0) == []) is (day < N.days)


def test_a_ticket_seen_twice_counts_once_and_its_repair_once() -> None:
    ledger = Ledger(_own)
    host = ComponentId(ComponentKind.HOST, "h0")
    for repaired in (False, False, True, True):
        ledger.ticket(7, host, repaired=repaired)
    ledger.strikes(host, 2)
    ledger.strikes(host, 1)  # the record forgotten and written again: the most it carried stays
    history = ledger.host("h0")
    assert (history.tickets, history.repairs, history.strikes) == (1, 1, 2)


TINY = fat_tree(PRESETS["tiny"])
FAULTY = "pod01-node02"
FAULTY_PORT = "pod01-node02 mlx5_1/1"


def test_a_simulated_month_grows_the_golden_set_and_keeps_a_faulty_host_out(tmp_path: Path) -> None:
    index = plan_index(TINY)
    everyone = set(index.hosts)
    golden = GoldenIndex(index)
    sizes: list[int] = []
    with rig(TINY, tmp_path) as r:
        start = r.state.now()
        for day in range(31):
            if day == 3:
                r.critical_ber(FAULTY_PORT)  # a finding on the host's cable, ticketed (a host link)
            r.advance(86_400)
            r.cycle()
            now = r.state.now()
            found = {h.host for h in golden.golden(r.store, now, N)}
            sizes.append(len(found))
            if now - start < N:
                assert not found, f"day {day}: golden before the service watched for {N}"
            else:
                assert found == everyone - {FAULTY}, f"day {day}"
        history = golden.history(r.store, FAULTY, r.state.now(), N)
        # folded a day at a time, or all at once at the end: the same
        assert GoldenIndex(index).history(r.store, FAULTY, r.state.now(), N) == history
        findings = r.store.findings()
    assert sizes == sorted(sizes) and sizes[-1] == len(everyone) - 1  # it grew, and never shrank
    assert findings
    assert {f.component for f in findings} == {ComponentId.parse(c.component) for c in history.components}
    assert (history.golden, history.findings, history.tickets) == (False, len(findings), 1)
    assert history.last_finding == max(f.at for f in findings)
    assert [c.component for c in history.components] == [
        str(c) for c in sorted(ComponentId.parse(c.component) for c in history.components)]


# components a..e, each on one or two hosts (e: a leaf, behind three)
BEHIND = {"a": ("h0",), "b": ("h0",), "c": ("h1",), "d": ("h2",), "e": ("h0", "h1", "h2")}
folds = st.lists(st.tuples(st.sampled_from(["finding", "quarantine", "ticket", "strikes"]),
                           st.sampled_from(sorted(BEHIND)), st.integers(0, 5), st.booleans()), max_size=30)


@settings(max_examples=200, deadline=None)
@given(folds)
def test_a_hosts_history_is_always_its_components_summed(steps: list[tuple[str, str, int, bool]]) -> None:
    ledger = Ledger(lambda component: BEHIND[component.name])
    for kind, name, number, flag in steps:
        component = ComponentId(ComponentKind.SWITCH, name)
        if kind == "finding":
            ledger.finding(component, T0 + timedelta(days=number))
        elif kind == "quarantine":
            ledger.quarantine(component)
        elif kind == "ticket":
            ledger.ticket(number, component, repaired=flag)  # a ticket id is one component's
        else:
            ledger.strikes(component, number)
    for host in HOSTS:
        parts = [ledger.components[c] for c in ledger.of_host(host)]
        total = ledger.host(host)
        for count in ("findings", "tickets", "repairs", "strikes"):
            assert getattr(total, count) == sum(getattr(part, count) for part in parts), count
        assert total.quarantined == any(part.quarantined for part in parts)
        assert total.last_finding == max((p.last_finding for p in parts if p.last_finding), default=None)
