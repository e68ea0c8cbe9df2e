"""``decide()``: the policy of docs/design.md as one pure function of its inputs.

Given the desired state of every component, this cycle's findings and repairs, and the capacity guard,
it returns the actions to take and the next state. It performs no I/O and reads no clock: replay, the
simulator and production run exactly this code, and the same inputs always give the same decisions.

The capacity guard is the capacity view of the state: ``decide`` updates it in step with the lifecycle
(a link it disables is taken out of the guard, a link it enables is put back, a link it resets is out for the rest
of the cycle that resets it).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import NamedTuple

from fabric.durations import format_duration
from fabric.remediation.domain import (
    Action,
    ActionKind,
    ComponentId,
    ComponentKind,
    ComponentRecord,
    Finding,
    Lifecycle,
)
from fabric.remediation.escalation import ResetLadder
from fabric.remediation.rules import STORM_BREAKER, SWITCH_FAULT, deferral_rank
from topology.guard import CableKey, CapacityGuard


@dataclass(frozen=True, slots=True)
class PolicyConfig:
    dry_run: bool = True
    host_links_ticket_only: bool = True
    max_strikes: int = 3
    probation: timedelta = timedelta(hours=2)
    storm_components: int = 25
    storm_window: timedelta = timedelta(minutes=15)
    storm_quiet_period: timedelta | None = None
    """Resume by itself after this long without findings; None = wait for ``fabricctl resume``."""
    clean_window: timedelta | None = None
    """With UFM Telemetry read: a cable's probation ends healthy only once a sample taken at least this long after
    its re-enable was accepted, which judged its BER over the longest window with none of it from before (a BER
    over it is a finding, and a strike, as any fault on probation). ``None``: the probation's length alone."""
    resets: ResetLadder = field(default_factory=ResetLadder)
    """Which findings reset their link before it is taken out, how often, and how long it is watched after."""


@dataclass(frozen=True, slots=True)
class FabricContext:
    """What the policy needs of the fabric model."""

    cables: Mapping[ComponentId, CableKey]
    """Every planned cable's component id -> its key in the capacity guard."""
    host_links: frozenset[ComponentId]
    """Cables with a host adapter at one end."""


@dataclass(frozen=True, slots=True)
class Breaker:
    halted: bool = False
    since: datetime | None = None
    reason: str = ""
    last_held: datetime | None = None
    """The newest finding held while halted: the quiet period runs from it (from ``since`` before any)."""


HELD_SHOWN = 200
"""Findings held during a storm that the state keeps for operators to see (all are counted)."""


@dataclass(frozen=True, slots=True)
class PolicyState:
    components: Mapping[ComponentId, ComponentRecord] = field(default_factory=dict)
    breaker: Breaker = Breaker()
    recent: Mapping[ComponentId, datetime] = field(default_factory=dict)
    """Components with findings inside the storm window, with their first finding's time (storm breaker)."""
    held: tuple[Finding, ...] = ()
    """The newest findings that arrived while automation was halted (dropped on resume)."""
    held_count: int = 0
    waiting: frozenset[ComponentId] | None = None
    """Components on probation or deferred: the ones ``decide`` revisits every cycle. Derived from
    ``components`` when not given, so that callers building a state need not maintain it."""
    deferred_seen: tuple[int, int] | None = None
    """The guard's ``generation`` and the disables of its sliding hour when the deferred links were last
    reconsidered; those that were not taken out then did not fit. While both stay the same (and no switch's record
    changes) their verdicts cannot change either, so they are not asked again: a week of 60 s steps with 150 deferred
    links asked the guard 751,000 times for nothing (``None``: reconsider at the next cycle)."""

    revisit_due: RevisitDue | None = None
    """``waiting`` summed up for the clock, kept with it (``None``, or ``waiting`` not given: derived when asked)."""
    resets: Mapping[ComponentId, tuple[datetime, ...]] = field(default_factory=dict)
    """The resets decided of each component, oldest first, those within the reset ladder's window at least (older
    ones are dropped when the component is reset again): what the ladder counts. Not stored: a restart rebuilds
    it from the decision log (``fabric.remediation.observe.Restart``)."""

    def revisit(self) -> frozenset[ComponentId]:
        if self.waiting is not None:
            return self.waiting
        return frozenset(c for c, r in self.components.items() if r.lifecycle in _REVISITED)

    def due(self) -> RevisitDue:
        """When the first probation ends and whether a link is deferred: what a cycle without findings could act
        on. Kept from cycle to cycle and derived again only in a cycle that changed a waiting component's record,
        so that a step costs nothing per waiting component (a week of 60 s steps with 400 deferred links read
        every one of them at every step)."""
        if self.revisit_due is not None and self.waiting is not None:  # the one without the other is stale
            return self.revisit_due
        return RevisitDue.of(self.revisit(), self.components)


class RevisitDue(NamedTuple):
    probation_ends: datetime | None
    """The earliest ``probation_until`` of the components on probation (``None``: none is)."""
    deferred: bool
    """Some link is deferred (the guard may let it go out when capacity returns or the hourly rate allows)."""
    watches_began: datetime | None
    """When the oldest watch after a reset began (``None``: no link is watched); it ends ``resets.settle`` later."""

    @staticmethod
    def of(waiting: Collection[ComponentId], records: Mapping[ComponentId, ComponentRecord]) -> RevisitDue:
        ends = [r.probation_until for c in waiting if (r := records[c]).lifecycle is Lifecycle.PROBATION
                and r.probation_until is not None]
        deferred = any(records[c].lifecycle is Lifecycle.DEFERRED for c in waiting)
        watched = [r.since for c in waiting if (r := records[c]).lifecycle is Lifecycle.RESET]
        return RevisitDue(min(ends, default=None), deferred, min(watched, default=None))


_REVISITED = frozenset({Lifecycle.PROBATION, Lifecycle.DEFERRED, Lifecycle.RESET})
OPEN_TICKET = frozenset({Lifecycle.TICKETED, Lifecycle.QUARANTINED})
"""A switch's record in these: its ticket is open (by ``switch_fault``: its cables' findings are folded into it)."""
_STORM_COUNTED = frozenset({Lifecycle.HEALTHY, Lifecycle.PROBATION, Lifecycle.RESET})


@dataclass(frozen=True, slots=True)
class CycleInput:
    now: datetime
    findings: tuple[Finding, ...] = ()
    repaired: tuple[ComponentId, ...] = ()
    """Components whose ticket was resolved since the last cycle."""
    resume: bool = False
    """An operator ran ``fabricctl resume``."""
    cleared: tuple[ComponentId, ...] = ()
    """Quarantined components an operator cleared."""
    failed_repairs: tuple[FailedRepair, ...] = ()
    """Components re-enabled on probation whose link UFM has not shown up at its planned width and speed within
    the time it is given to train (the controller's link check): backed out."""
    telemetry_judged: datetime | None = None
    """The time of the newest UFM Telemetry sample accepted (``None``: none was), for ``clean_window``."""
    undone_resets: tuple[UndoneReset, ...] = ()
    """Components whose reset UFM did not carry out (its job failed, or no answer by its deadline; never sent):
    taken out, as they would have been without the ladder."""
    resets_unsettled: frozenset[ComponentId] = frozenset()
    """Components whose reset UFM has not carried out yet (its job runs): their watch cannot end before it has."""
    settling: tuple[Finding, ...] = ()
    """Findings held back this cycle for a minute (``fabric.remediation.settling``): decided on later, counted
    toward a storm now, as they come."""


LINK_CHECK = "link_check"
"""The rule of the decisions of the check that a re-enabled link came back up as planned."""
RESET_WATCH = "reset_watch"
"""The rule of the decision ending a link's watch after its reset, healthy again."""


class UndoneReset(NamedTuple):
    component: ComponentId
    reason: str
    """What UFM made of the reset, e.g. ``UFM job 7 ended 'Completed With Errors'``."""


class FailedRepair(NamedTuple):
    component: ComponentId
    reason: str
    """What UFM shows instead of the planned link, e.g. ``re-enabled, but the link came up at 1x/NDR instead of
    4x/NDR: backed out``."""


@dataclass(frozen=True, slots=True)
class Decision:
    actions: tuple[Action, ...]
    state: PolicyState
    changed: frozenset[ComponentId] = frozenset()
    """The components whose record this decision changed, with an action or without one (a deferred cable whose
    ticket was resolved goes on probation with nothing to enable): what the caller must persist."""


class Cycle:
    """The working memory of one ``decide`` (or ``fabric.remediation.observe``) call.

    It costs what changes, not the size of the state: component records are read through to the previous
    state and copied only when one changed, and the components to revisit each cycle (probation, deferred)
    are kept as their own set.
    """

    def __init__(self, state: PolicyState, guard: CapacityGuard, context: FabricContext,
                 config: PolicyConfig, now: datetime) -> None:
        self.base = state.components
        self.changed: dict[ComponentId, ComponentRecord] = {}
        self.waiting: frozenset[ComponentId] | set[ComponentId] = state.revisit()
        """The state's own set until a component joins, leaves or changes in it (then a copy, and ``due`` is
        derived again at the end)."""
        self.due = state.due()
        self.waiting_changed = False
        self.breaker = state.breaker
        window = config.storm_window
        self.recent = state.recent if all(now - at <= window for at in state.recent.values()) else {
            c: at for c, at in state.recent.items() if now - at <= window}
        self.new_recent: dict[ComponentId, datetime] = {}
        self.held = list(state.held)
        self.held_count = state.held_count
        self.recorded_held: set[ComponentId] = set()
        """Components whose held finding was recorded this cycle (one record per component per storm window)."""
        self.guard, self.context, self.config, self.now = guard, context, config, now
        self.actions: list[Action] = []
        self.deferred_seen = state.deferred_seen
        self.resets: Mapping[ComponentId, tuple[datetime, ...]] = state.resets
        self._resets_copied = False
        self.resetting: list[CableKey] = []
        """Cables reset this cycle that the guard counts out until it ends (``_reset``)."""

    def get(self, component: ComponentId) -> ComponentRecord | None:
        found = self.changed.get(component)
        return found if found is not None else self.base.get(component)

    def distinct_recent(self) -> int:
        return len(self.recent) + len(self.new_recent)

    def note_recent(self, component: ComponentId, at: datetime) -> None:
        if component not in self.recent and component not in self.new_recent:
            self.new_recent[component] = at

    def act(self, kind: ActionKind, rule: str, reason: str, component: ComponentId | None = None,
            guard: Mapping[str, object] | None = None) -> None:
        self.actions.append(Action(kind, self.now, rule, reason, component, dict(guard or {}), self.config.dry_run))

    def set(self, component: ComponentId, lifecycle: Lifecycle, rule: str, reason: str, **changes: object) -> None:
        previous = self.get(component)
        base = previous or ComponentRecord(lifecycle, self.now, rule, reason)
        self.changed[component] = replace(base, lifecycle=lifecycle, since=self.now, rule=rule, reason=reason,
                                          **changes)  # type: ignore[arg-type]
        revisited = lifecycle in _REVISITED
        if not revisited and component not in self.waiting:
            return
        if not self.waiting_changed:
            self.waiting, self.waiting_changed = set(self.waiting), True
        assert isinstance(self.waiting, set)
        if revisited:
            self.waiting.add(component)
        else:
            self.waiting.discard(component)

    def resets_of(self, component: ComponentId) -> tuple[datetime, ...]:
        """The resets of ``component`` the ladder counts now."""
        return self.config.resets.within(self.resets.get(component, ()), self.now)

    def remember_resets(self, resets: Mapping[ComponentId, tuple[datetime, ...]]) -> None:
        """The resets decided before a restart (the decision log's), as the ladder counts them."""
        self.resets, self._resets_copied = {**self.resets, **resets}, True

    def note_reset(self, component: ComponentId) -> None:
        if not self._resets_copied:
            self.resets, self._resets_copied = dict(self.resets), True
        assert isinstance(self.resets, dict)
        self.resets[component] = (*self.resets_of(component), self.now)

    def hold(self, finding: Finding) -> None:
        last = self.breaker.last_held
        if last is None or finding.at > last:
            self.breaker = replace(self.breaker, last_held=finding.at)
        self.held.append(finding)
        del self.held[:-HELD_SHOWN]
        self.held_count += 1

    def decision(self) -> Decision:
        return Decision(tuple(self.actions), self.state(), frozenset(self.changed))

    def state(self) -> PolicyState:
        components = {**self.base, **self.changed} if self.changed else self.base
        recent = {**self.recent, **self.new_recent} if self.new_recent else self.recent
        waiting = frozenset(self.waiting)
        due = RevisitDue.of(waiting, components) if self.waiting_changed else self.due
        return PolicyState(components, self.breaker, recent, tuple(self.held), self.held_count, waiting,
                           self.deferred_seen, due, self.resets)


def decide(state: PolicyState, cycle_input: CycleInput, guard: CapacityGuard, context: FabricContext,
           config: PolicyConfig) -> Decision:
    cycle = Cycle(state, guard, context, config, cycle_input.now)
    _resume(cycle, cycle_input)
    _expire_probation(cycle, cycle_input.telemetry_judged)
    _foresee_storm(cycle, cycle_input)
    for component in cycle_input.cleared:
        _clear(cycle, component)
    for component in cycle_input.repaired:
        _repaired(cycle, component)
    for finding in cycle_input.findings:
        _finding(cycle, finding)
    if not cycle.breaker.halted:
        # After the findings: a finding on the same component is a strike, and takes it out first.
        for failed in cycle_input.failed_repairs:
            _failed_repair(cycle, failed)
        for undone in cycle_input.undone_resets:
            _undone_reset(cycle, undone)
        _end_watches(cycle, cycle_input.resets_unsettled)
        _reconsider_deferred(cycle)
    for cable in cycle.resetting:  # retrained by the next cycle; a reading of UFM that shows it down says so
        cycle.guard.mark_up(cable)
    return cycle.decision()


# --- the breaker ---------------------------------------------------------------------------------------

def _resume(cycle: Cycle, cycle_input: CycleInput) -> None:
    breaker = cycle.breaker
    if not breaker.halted:
        return
    quiet = cycle.config.storm_quiet_period
    # This cycle's findings on components the breaker would hold count too: the storm goes on while they come.
    arriving = [f.at for f in cycle_input.findings if _holdable(cycle, f.component)]
    last_finding = max([t for t in (breaker.since, breaker.last_held, *arriving) if t is not None], default=None)
    quiet_enough = quiet is not None and last_finding is not None and cycle.now - last_finding >= quiet
    if cycle_input.resume or quiet_enough:
        why = "an operator resumed automation" if cycle_input.resume else f"quiet for {quiet}"
        # Findings held during the storm are what tripped it: they are dropped, not replayed. A fault that
        # is real keeps producing events, and the detectors raise it again from that new evidence.
        dropped = cycle.held_count
        cycle.breaker, cycle.recent, cycle.new_recent, cycle.held, cycle.held_count = Breaker(), {}, {}, [], 0
        cycle.act(ActionKind.RECORD, STORM_BREAKER,
                  f"automation resumed: {why}; {dropped} findings held during the storm were dropped")


def _foresee_storm(cycle: Cycle, cycle_input: CycleInput) -> None:
    """Count this cycle's components toward the storm window before anything is acted on: a cycle whose findings
    trip the breaker writes nothing (no disable, no enable, no ticket but the storm's), instead of spending the
    blast radius on the first findings of the storm and halting after them."""
    if cycle.breaker.halted:
        return
    repaired = set(cycle_input.repaired)  # back on probation this cycle, where a finding counts toward a storm
    for finding in (*cycle_input.findings, *cycle_input.settling):
        if finding.component in repaired or _holdable(cycle, finding.component):
            cycle.note_recent(finding.component, finding.at)
    _trip_if_storm(cycle)


def _storm(cycle: Cycle, finding: Finding) -> bool:
    """Count the component; trip the breaker when too many distinct components went bad at once."""
    cycle.note_recent(finding.component, finding.at)
    return _trip_if_storm(cycle)


def _trip_if_storm(cycle: Cycle) -> bool:
    distinct = cycle.distinct_recent()
    if cycle.breaker.halted or distinct < cycle.config.storm_components:
        return cycle.breaker.halted
    reason = (f"{distinct} distinct components had findings within {cycle.config.storm_window} "
              f"(storm threshold {cycle.config.storm_components}): all UFM writes stop until "
              "`fabricctl resume`" + (f" or {cycle.config.storm_quiet_period} of quiet"
                                      if cycle.config.storm_quiet_period else ""))
    cycle.breaker = Breaker(True, cycle.now, reason)
    cycle.act(ActionKind.HALT, STORM_BREAKER, reason)
    cycle.act(ActionKind.TICKET, STORM_BREAKER, reason)
    return True


# --- findings ------------------------------------------------------------------------------------------

def _holdable(cycle: Cycle, component: ComponentId) -> bool:
    """A finding on this component counts toward a storm and is held while halted (healthy or on probation)."""
    return may_take_out(cycle.get(component))


def may_take_out(record: ComponentRecord | None) -> bool:
    """Whether a finding on a component with this record is acted on (reset, taken out, deferred), rather than
    recorded: it is in service, healthy, on probation or watched after a reset."""
    return record is None or record.lifecycle in _STORM_COUNTED


def _finding(cycle: Cycle, finding: Finding) -> None:
    component = finding.component
    record = cycle.get(component)
    lifecycle = record.lifecycle if record else Lifecycle.HEALTHY
    if _holdable(cycle, component) and _storm(cycle, finding):
        cycle.hold(finding)
        # One record per component per storm window: a storm must not become a flood of decisions either.
        if component not in cycle.recent and component not in cycle.recorded_held:
            cycle.recorded_held.add(component)
            cycle.act(ActionKind.RECORD, finding.rule, f"held, automation is halted: {finding.reason}", component)
        return
    if lifecycle is Lifecycle.HEALTHY:
        if not _reset(cycle, finding):
            _take_out(cycle, finding, strikes=(record.strikes if record else 0) + 1, reopen=False)
    elif lifecycle is Lifecycle.RESET:
        assert record is not None
        _found_after_reset(cycle, finding, record)
    elif lifecycle is Lifecycle.PROBATION:
        assert record is not None
        strikes = record.strikes + 1
        if strikes >= cycle.config.max_strikes:
            _quarantine(cycle, finding, strikes)
        else:
            _take_out(cycle, finding, strikes=strikes, reopen=True)
    else:
        cycle.act(ActionKind.RECORD, finding.rule, f"already {lifecycle.value}: {finding.reason}", component)


def _ticket_only(cycle: Cycle, finding: Finding) -> str | None:
    component = finding.component
    if finding.ticket_only:
        return "the rule opens a ticket only"
    if component.kind is not ComponentKind.LINK:
        return f"a {component.kind.value} is ticketed, never disabled automatically"
    if component in cycle.context.host_links and cycle.config.host_links_ticket_only:
        return "host links are ticket-only (the scheduler drains the host)"
    if component not in cycle.context.cables:
        return "not a planned cable"
    return None


def _take_out(cycle: Cycle, finding: Finding, *, strikes: int, reopen: bool) -> None:
    component = finding.component
    ticket = ActionKind.REOPEN if reopen else ActionKind.TICKET
    extra = {"strikes": strikes, "never_auto_restore": finding.never_auto_restore, "probation_until": None}
    if (why := _ticket_only(cycle, finding)) is not None:
        cycle.set(component, Lifecycle.TICKETED, finding.rule, finding.reason, **extra)
        cycle.act(ticket, finding.rule, f"{finding.reason}; {why}", component)
        return
    cable = cycle.context.cables[component]
    verdict = cycle.guard.verdict(cable, cycle.now)
    if verdict.allowed:
        cycle.guard.take_out(cable, cycle.now)
        cycle.set(component, Lifecycle.DISABLED, finding.rule, finding.reason, **extra)
        cycle.act(ActionKind.DISABLE, finding.rule, f"{finding.reason}; {verdict.reason}", component, verdict.figures)
        cycle.act(ticket, finding.rule, finding.reason, component)
    else:
        cycle.set(component, Lifecycle.DEFERRED, finding.rule, finding.reason, **extra)
        cycle.act(ActionKind.DEFER, finding.rule, f"{finding.reason}; kept up: {verdict.reason}", component,
                  verdict.figures)
        cycle.act(ticket, finding.rule, f"{finding.reason}; deferred: {verdict.reason}", component)


# --- the reset ladder ------------------------------------------------------------------------------------

def _reset(cycle: Cycle, finding: Finding) -> bool:
    """Answer a finding on a healthy link with a reset of its port when the ladder allows one: its rule is one a reset
    may cure, the link has resets left within the window, the guard sees it (the watch reads whether it came back
    up) and lets it go (it is down while it retrains, so it is asked as for a disable; refused, the finding is
    deferred as any other). The guard counts it out for the rest of the cycle: two links reset at once must fit
    together. Returns whether it was reset."""
    ladder, component = cycle.config.resets, finding.component
    if finding.no_reset or not ladder.resets(finding.rule) or _ticket_only(cycle, finding) is not None:
        return False
    cable, guard = cycle.context.cables[component], cycle.guard
    done = cycle.resets_of(component)
    if not guard.guards(cable) or len(done) >= ladder.max_resets:
        return False
    verdict = guard.verdict(cable, cycle.now)
    if not verdict.allowed:
        return False
    if cable not in guard.out:
        guard.mark_down(cable)
        cycle.resetting.append(cable)
    cycle.note_reset(component)
    cycle.set(component, Lifecycle.RESET, finding.rule, finding.reason, never_auto_restore=finding.never_auto_restore,
              probation_until=None)
    until = cycle.now + ladder.settle
    cycle.act(ActionKind.RESET, finding.rule,
              f"{finding.reason}; reset {len(done) + 1} of {ladder.max_resets} within "
              f"{format_duration(ladder.window)}, watched until {until.isoformat()}: {verdict.reason}",
              component, verdict.figures)
    return True


def _found_after_reset(cycle: Cycle, finding: Finding, record: ComponentRecord) -> None:
    """A finding on a link watched after its reset. Evidence from before the reset is what the reset answered (a
    second rule on the same fault, an event UFM delivered late): recorded. Newer evidence is a fault the reset did
    not cure: the link is taken out and ticketed, whatever resets it has left."""
    reset_at = record.since.isoformat()
    if finding.at <= record.since:
        cycle.act(ActionKind.RECORD, finding.rule, f"found before its reset at {reset_at}: {finding.reason}",
                  finding.component)
        return
    persisted = finding._replace(reason=f"{finding.reason}; the fault persisted after its reset at {reset_at}")
    _take_out(cycle, persisted, strikes=record.strikes + 1, reopen=False)


def _undone_reset(cycle: Cycle, undone: UndoneReset) -> None:
    """UFM did not carry out the reset: the link is taken out, as it would have been without the ladder."""
    record = cycle.get(undone.component)
    if record is not None and record.lifecycle is Lifecycle.RESET:
        _take_out_after_reset(cycle, undone.component, record,
                              f"its reset at {record.since.isoformat()} was not carried out: {undone.reason}")


def _end_watches(cycle: Cycle, unsettled: frozenset[ComponentId]) -> None:
    """Links whose watch after a reset ended, unless UFM has not carried out the reset yet: healthy again when no
    fault was found meanwhile, unless UFM still shows the link down (no new event would say that the reset did not
    bring it back): then it is taken out."""
    settle = cycle.config.resets.settle
    began = cycle.due.watches_began  # of the state the cycle began from: watches begun since end later
    if began is None or cycle.now < began + settle:
        return
    due = [component for component in cycle.waiting
           if (record := cycle.get(component)) is not None and record.lifecycle is Lifecycle.RESET
           and cycle.now >= record.since + settle and component not in unsettled]
    guard = cycle.guard
    for component in sorted(due):
        record = cycle.get(component)
        assert record is not None
        cable = cycle.context.cables.get(component)
        if cable is not None and cable in guard.out:
            _take_out_after_reset(cycle, component, record,
                                  f"UFM still shows the link down {format_duration(settle)} after its reset")
            continue
        reason = f"no fault within {format_duration(settle)} of its reset: healthy again, the reset cured it"
        cycle.set(component, Lifecycle.HEALTHY, RESET_WATCH, reason)
        cycle.act(ActionKind.RECORD, RESET_WATCH, reason, component)


def _take_out_after_reset(cycle: Cycle, component: ComponentId, record: ComponentRecord, why: str) -> None:
    finding = Finding(component, record.rule, cycle.now, f"{record.reason}; {why}",
                      never_auto_restore=record.never_auto_restore)
    _take_out(cycle, finding, strikes=record.strikes + 1, reopen=False)


def _quarantine(cycle: Cycle, finding: Finding, strikes: int) -> None:
    component = finding.component
    reason = (f"{finding.reason}; strike {strikes} of {cycle.config.max_strikes}: "
              "quarantined until an operator clears it")
    cable = cycle.context.cables.get(component)
    if cable is not None and _ticket_only(cycle, finding) is None:
        verdict = cycle.guard.verdict(cable, cycle.now)
        if verdict.allowed:
            cycle.guard.take_out(cable, cycle.now)
            cycle.act(ActionKind.DISABLE, finding.rule, reason, component, verdict.figures)
        else:
            reason += f"; kept up: {verdict.reason}"
    cycle.set(component, Lifecycle.QUARANTINED, finding.rule, reason, strikes=strikes, probation_until=None)
    cycle.act(ActionKind.QUARANTINE, finding.rule, reason, component)
    cycle.act(ActionKind.REOPEN, finding.rule, reason, component)


# --- repairs and recovery --------------------------------------------------------------------------------

def _repaired(cycle: Cycle, component: ComponentId) -> None:
    record = cycle.get(component)
    if record is None or record.lifecycle in (Lifecycle.HEALTHY, Lifecycle.PROBATION, Lifecycle.QUARANTINED):
        if record is not None and record.lifecycle is Lifecycle.QUARANTINED:
            cycle.act(ActionKind.RECORD, "repair", "ticket resolved, but quarantined: an operator must clear it",
                      component)
        return
    until = cycle.now + cycle.config.probation
    reason = f"ticket resolved: back in service, on probation until {until.isoformat()}"
    cable = cycle.context.cables.get(component)
    if record.lifecycle in (Lifecycle.DISABLED, Lifecycle.AWAITING_REPAIR):
        if cycle.breaker.halted:
            _say_once(cycle, component, record, "repair", "ticket resolved; re-enable waits for the breaker")
            return
        if cable is not None:
            cycle.guard.put_back(cable)
        cycle.act(ActionKind.ENABLE, "repair", reason, component)
    cycle.set(component, Lifecycle.PROBATION, "repair", reason, probation_until=until)


def _failed_repair(cycle: Cycle, failed: FailedRepair) -> None:
    """The repair did not bring the link back as planned: out again (within the guard, which counted it back in
    when it was enabled) and its ticket reopened with what UFM showed. No strike: the link did not fail on
    probation, the repair did not take. While halted it waits: the controller reports it again every cycle."""
    record = cycle.get(failed.component)
    if record is None or record.lifecycle is not Lifecycle.PROBATION:
        return
    finding = Finding(failed.component, LINK_CHECK, cycle.now, failed.reason,
                      never_auto_restore=record.never_auto_restore)
    _take_out(cycle, finding, strikes=record.strikes, reopen=True)


def _say_once(cycle: Cycle, component: ComponentId, record: ComponentRecord, rule: str, reason: str) -> None:
    """A move that must wait (a re-enable until automation resumes, a probation's end until telemetry judged a
    clean window): said once, not at every cycle it is asked again. The record keeps its state and since; its
    reason says why."""
    if record.reason == reason:
        return
    cycle.changed[component] = replace(record, reason=reason)
    cycle.act(ActionKind.RECORD, rule, reason, component)


def _expire_probation(cycle: Cycle, judged: datetime | None) -> None:
    """``judged``: the newest UFM Telemetry sample accepted (``PolicyConfig.clean_window``)."""
    now, probation = cycle.now, Lifecycle.PROBATION
    ends = cycle.due.probation_ends  # of the state the cycle began from: nothing has changed it yet
    if ends is None or now < ends:
        return
    # Sorted (set order changes with every process), but only the few that are due: many wait every cycle.
    due = [(component, record) for component in cycle.waiting
           if (record := cycle.get(component)) is not None and record.lifecycle is probation
           and record.probation_until and now >= record.probation_until]
    window = cycle.config.clean_window
    soak = f"clean soak of {format_duration(cycle.config.probation)}"
    for component, record in sorted(due, key=lambda item: item[0]):
        said = soak
        if window is not None and component in cycle.context.cables:
            judged_from = record.since + window
            if judged is None or judged < judged_from:
                _say_once(cycle, component, record, "probation", f"{soak}; healthy once a UFM Telemetry sample "
                          f"from {judged_from.isoformat()} on has judged its BER over a window of its own")
                continue
            said += f" and a clean BER window of {format_duration(window)}"
        cycle.set(component, Lifecycle.HEALTHY, "probation", "clean soak: healthy again", probation_until=None)
        # The closing word on the ticket of the repair: operators see there that the repair held.
        cycle.act(ActionKind.COMMENT, "probation", f"{said}: healthy", component)


def _clear(cycle: Cycle, component: ComponentId) -> None:
    record = cycle.get(component)
    if record is None or record.lifecycle is not Lifecycle.QUARANTINED:
        return
    if cycle.breaker.halted:
        _say_once(cycle, component, record, "operator",
                          "quarantine cleared; re-enable waits for the breaker")
        return
    until = cycle.now + cycle.config.probation
    cable = cycle.context.cables.get(component)
    if cable is not None and cable in cycle.guard.disabled:
        cycle.guard.put_back(cable)
        cycle.act(ActionKind.ENABLE, "operator", "quarantine cleared by an operator", component)
    cycle.set(component, Lifecycle.PROBATION, "operator", "quarantine cleared: on probation", strikes=0,
              probation_until=until)


def _behind_switch_fault(cycle: Cycle, cable: CableKey) -> bool:
    """A switch at either end has an open ``switch_fault``: its cables are the switch's fault, and disabling them
    one by one (a link deferred before the switch's fault was found) would fix nothing."""
    for end in cable:
        record = cycle.get(ComponentId(ComponentKind.SWITCH, end.device))
        if record is not None and record.rule == SWITCH_FAULT and record.lifecycle in OPEN_TICKET:
            return True
    return False


def _reconsider_deferred(cycle: Cycle) -> None:
    """Capacity may have come back: disable deferred links that now fit, worst first. Only when it may have:
    the guard changed (a cable out or back, a repair, a reload), its sliding hour let a disable go, or a switch's
    record changed (a deferred link behind an open switch fault waits for it). A take-out here only lowers what is
    left, so the links still deferred after it do not fit in the state it leaves either."""
    guard = cycle.guard
    seen = (guard.generation, guard.disables_within_hour(cycle.now))
    if seen == cycle.deferred_seen and not any(c.kind is ComponentKind.SWITCH for c in cycle.changed):
        return
    _disable_what_fits(cycle)
    cycle.deferred_seen = (guard.generation, guard.disables_within_hour(cycle.now))


def _disable_what_fits(cycle: Cycle) -> None:
    deferred = [(c, r) for c in cycle.waiting if (r := cycle.get(c)) is not None and r.lifecycle is Lifecycle.DEFERRED]
    deferred.sort(key=lambda item: (-deferral_rank(item[1].rule), item[1].since, item[0]))
    for component, record in deferred:
        cable = cycle.context.cables.get(component)
        if cable is None:
            continue
        verdict = cycle.guard.verdict(cable, cycle.now)
        if not verdict.allowed or _behind_switch_fault(cycle, cable):
            continue
        cycle.guard.take_out(cable, cycle.now)
        cycle.set(component, Lifecycle.DISABLED, record.rule, record.reason)
        cycle.act(ActionKind.DISABLE, record.rule, f"deferred link now fits: {verdict.reason}", component,
                  verdict.figures)
        cycle.act(ActionKind.COMMENT, record.rule, "capacity allowed it: the link is now disabled", component)

