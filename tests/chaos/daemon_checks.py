"""What must hold however the daemon is killed (issue 20), as functions of what the daemon's database, the local
tickets and UFM (the simulator's state, read in this process) show. Each returns one line per violation, empty when
it holds. The checks on a finding's evidence and on the store agreeing with the backend are the engine chaos run's
(``chaos_invariants``); these add what the daemon's run compares with its uninterrupted control.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from fabric.remediation.domain import ActionKind, ComponentId, ComponentRecord, Finding, Lifecycle
from fabric.store.records import DecisionRecord, IntentRecord, IntentState, TicketRecord, TicketState

HOLDING_OUT = frozenset({Lifecycle.DISABLED, Lifecycle.AWAITING_REPAIR, Lifecycle.QUARANTINED})
"""The states in which a component's cable may be out of service by automation's hand."""
CONVERGENCE = "reconcile"
"""The rule of a disable that re-asserts one already counted (design, rule 9): not a new take-out."""

INVARIANTS = {  # the name each check's violations are kept under, and what it says
    "held out": "every port UFM shows out is held out by exactly one component with one open ticket",
    "taken out twice": "no port taken out twice without a put-back between (nothing taken out twice for one finding)",
    "hourly limit": "no sliding hour with more disables decided than the hourly limit (from the decision log)",
    "guard and cap": "no disable over the cap or below a leaf's minimum of paths to core",
    "rolled back, done in UFM": "no disable rolled back as not carried out while UFM shows it done",
    "tickets agree": "the store and the ticket backend agree on every ticket",
    "pending intents": "no intent left pending at the end",
}


@dataclass(frozen=True, slots=True, order=True)
class Decided:
    """A decision as two runs of one program can be compared: when (simulated), what, on what, by which rule."""

    at: datetime
    kind: str
    component: str
    rule: str

    def __str__(self) -> str:
        return f"{self.at:%H:%M:%S} {self.kind} {self.component} ({self.rule})"


def decided(records: Iterable[DecisionRecord], tick: Callable[[datetime], datetime]) -> list[Decided]:
    """The decisions, each at the ``tick`` it was taken in."""
    return sorted(Decided(tick(r.action.at), r.action.kind.value, str(r.action.component or "the fabric"),
                          r.action.rule) for r in records)


def differences(control: Sequence[Decided], run: Sequence[Decided], *, converged: bool = False) -> list[str]:
    """The decisions one run made and the other did not (as multisets). ``converged``: a convergence write in
    ``run`` that re-asserts a decision of the control's on its component, in its tick or before, is not a
    difference: a kill between the cycle that decided and its side effect leaves the write to reconciliation,
    which records it so. Whether UFM was sent it twice is the "taken out twice" check's (UFM's own jobs)."""
    want, got = Counter(control), Counter(run)
    extra = got - want
    if converged:
        decided_before = [d for d in control if d.rule != CONVERGENCE]
        for d in list(extra.elements()):
            if d.rule == CONVERGENCE and any(c.component == d.component and c.kind == d.kind and c.at <= d.at
                                             for c in decided_before):
                extra[d] -= 1
    return ([f"missing: {d}" for d in sorted((want - got).elements())]
            + [f"extra:   {d}" for d in sorted(extra.elements())])


def found(findings: Iterable[Finding], tick: Callable[[datetime], datetime]) -> list[Decided]:
    """Findings as decisions are compared: a duplicate row is one more, an event counted twice or skipped changes
    its evidence's size. Not the evidence's ids: a run that sends UFM one more port action than another shifts
    every later event's id by one (UFM raises an event for it)."""
    return sorted(Decided(tick(f.at), f"finding of {len(f.evidence)} events", str(f.component), f.rule)
                  for f in findings)


def held_out_without_one_ticket(out: Iterable[str], components: Mapping[str, ComponentId],
                                records: Mapping[ComponentId, ComponentRecord], tickets: Sequence[TicketRecord],
                                awaiting_resume: frozenset[ComponentId] = frozenset(),
                                putting_back: frozenset[ComponentId] = frozenset()) -> list[str]:
    """Every port UFM shows out (disabled, or listed unhealthy) is held out by exactly one component (its cable's, in
    a state that holds it out) with exactly one open ticket. ``awaiting_resume``: repaired while the breaker halted
    automation, whose enable waits for the resume (their ticket is resolved, by design). ``putting_back``: released,
    their put-back in flight (its intent pending, as when a kill cut it short: settled by reading UFM)."""
    open_tickets = Counter(t.component for t in tickets if t.state is TicketState.OPEN and t.component is not None)
    problems = []
    for port in sorted(out):
        component = components.get(port)
        record = records.get(component) if component is not None else None
        if component is None:
            problems.append(f"UFM shows {port} out, a port of no planned cable")
        elif component in putting_back:
            continue
        elif record is None or record.lifecycle not in HOLDING_OUT:
            state = record.lifecycle.value if record is not None else "no record"
            problems.append(f"UFM shows {port} ({component}) out and no component holds it out ({state})")
        elif component not in awaiting_resume and (count := open_tickets[component]) != 1:
            problems.append(f"UFM shows {port} ({component}) out, held out ({record.lifecycle.value}) with "
                            f"{count} open tickets")
    return problems


def taken_out_twice(jobs: Iterable[tuple[datetime, str, str, str]]) -> list[str]:
    """No port is taken out by UFM twice without a put-back between: ``jobs`` are UFM's (created, action, port,
    status), a port marked unhealthy or healthy among them as a disable or enable; a second disable for a port
    already out is a take-out sent twice for one finding."""
    out: dict[str, datetime] = {}
    problems = []
    for created, action, port, status in sorted(jobs):
        if action == "enable":
            out.pop(port, None)
        elif action == "disable":
            if port in out:
                problems.append(f"{port}: a second disable job at {created:%H:%M:%S} ({status}), the port out since "
                                f"{out[port]:%H:%M:%S}")
            else:
                out[port] = created
    return problems


def over_the_hourly_limit(records: Iterable[DecisionRecord], limit: int) -> list[str]:
    """At most ``limit`` disables decided in any sliding hour, counted from the decision log (convergence writes
    re-assert one already counted and are left out)."""
    times = sorted(r.action.at for r in records
                   if r.action.kind is ActionKind.DISABLE and r.action.rule != CONVERGENCE and not r.action.dry_run)
    over = {}
    for end in times:
        inside = sum(1 for t in times if end - timedelta(hours=1) < t <= end)
        if inside > limit:
            over[end] = f"{inside} disables decided in the hour up to {end:%H:%M:%S} (limit {limit})"
    return list(over.values())


def over_the_guard(records: Iterable[DecisionRecord]) -> list[str]:
    """No disable decided over the blast-radius cap or below a leaf's minimum of paths to core (the figures each
    disable decision recorded)."""
    problems = []
    for record in records:
        action, guard = record.action, record.action.guard
        if action.kind is not ActionKind.DISABLE or action.rule == CONVERGENCE:
            continue
        if guard.get("disabled", 0) >= guard.get("cap", 1 << 30):
            problems.append(f"{action.at:%H:%M:%S} disable {action.component}: {guard['disabled']} out already, "
                            f"cap {guard['cap']}")
        if guard.get("worst_leaf_paths_after", 1 << 30) < guard.get("worst_leaf_minimum", 0):
            problems.append(f"{action.at:%H:%M:%S} disable {action.component}: {guard['worst_leaf']} left with "
                            f"{guard['worst_leaf_paths_after']} paths to core, minimum {guard['worst_leaf_minimum']}")
    return problems


def over_the_cap(jobs: Iterable[tuple[datetime, str, str, str]], cap: int) -> list[str]:
    """UFM never holds more than ``cap`` ports out by automation's jobs at once (completed jobs, in time order)."""
    out: set[str] = set()
    problems = []
    for created, action, port, status in sorted(jobs):
        if status != "Completed":
            continue
        (out.add if action == "disable" else out.discard)(port)
        if len(out) > cap:
            problems.append(f"{created:%H:%M:%S}: {len(out)} ports out by automation (cap {cap})")
    return problems


def putting_back(intents: Iterable[IntentRecord]) -> frozenset[ComponentId]:
    """The components whose put-back (enable) is in flight: its newest intent pending, or failed (UFM's job did not
    finish by its deadline: the write backs off and is sent again, ``fabric_writes_backing_off`` counts it)."""
    newest: dict[ComponentId, IntentRecord] = {}
    for intent in sorted(intents, key=lambda i: i.id):
        if intent.component is not None and intent.kind in (ActionKind.ENABLE, ActionKind.DISABLE):
            newest[intent.component] = intent
    return frozenset(c for c, i in newest.items() if i.kind is ActionKind.ENABLE and i.state in (
        IntentState.PENDING, IntentState.FAILED))


def pending_intents(intents: Iterable[IntentRecord]) -> list[str]:
    return [f"intent {i.id} ({i.kind.value} {i.component}, epoch {i.epoch}) still pending since "
            f"{i.created_at:%H:%M:%S}" for i in intents if i.state is IntentState.PENDING]


def rolled_back_while_done(intents: Iterable[IntentRecord], out: Iterable[str],
                           components: Mapping[str, ComponentId]) -> list[str]:
    """A disable rolled back as "not carried out" whose port UFM shows out, and no later disable of that component
    done: the intent says the opposite of what UFM did (issue 20, item 1)."""
    shown = {components[p] for p in out if p in components}
    last: dict[ComponentId, IntentRecord] = {}
    for intent in sorted(intents, key=lambda i: i.id):
        if intent.component is not None and intent.kind in (ActionKind.DISABLE, ActionKind.ENABLE):
            last[intent.component] = intent
    return [f"{c}: UFM shows it out, its last port intent ({i.id}, {i.kind.value}) is {i.state.value}: "
            f"{i.outcome}" for c, i in sorted(last.items(), key=lambda item: str(item[0]))
            if c in shown and i.kind is ActionKind.DISABLE and i.state is IntentState.ROLLED_BACK]


def by_component(records: Iterable[DecisionRecord]) -> dict[str, list[str]]:
    """Each component's decisions in order, for a failure's message."""
    story: dict[str, list[str]] = defaultdict(list)
    for r in records:
        story[str(r.action.component)].append(f"{r.action.at:%H:%M:%S} {r.action.kind.value} ({r.action.rule})")
    return story
