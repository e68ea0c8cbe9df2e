"""``fabricctl replay``: a recorded UFM event log through the policy, dry — what would have been done, and why.

The fabric model is a UFM snapshot directory (``systems.json``, ``links.json``, optional ``ports.json``), or a
wiring plan joined with the snapshot's GUIDs and port names (``fabric.remediation.view.build_view``, as the engine
does). Events come from ``fabric.replay.events`` (``event.log``, a REST event list of either shape, JSON lines).

A virtual clock runs the engine's own :class:`~fabric.remediation.pipeline.Pipeline` (signals -> detectors ->
correlation -> ``decide``): it steps at every ``interval`` boundary of event time (multiples of the interval since
the Unix epoch, UTC), each step taking the events stamped after the previous boundary and up to this one, as a
daemon cycling at that interval would have seen them, and on to the first boundary at or after the last event plus
the longest the detectors let evidence settle (``settle``, plus ``boot_time`` for the links of a device that may be
rebooting), so that windowed rules waiting for evidence to settle can fire. Boundaries with no events at which
nothing can happen are skipped: ``decide`` would return no action and the same state there.
When nothing waits at all (nothing to settle, no deferred link, no link on probation or watched after a reset, no
breaker that resumes by itself) they are not counted as steps; when something waits but no timer of it can fire
before the next event (a probation's end, a watch's, a breaker's quiet period, the guard's sliding hour), the clock
jumps to the first boundary where one can, and the boundaries jumped over count as steps (a daemon would have
cycled through them), so that an event years after the others costs nothing (a Hypothesis property holds the
decisions to those of stepping every boundary). The interval is at least ``MIN_INTERVAL``.

The events stream: an event file (an event.log, JSON lines, a JSON list) is read as the clock reaches its events
(``fabric.replay.events.stream_events``), each cycle's events taken when the clock steps at its boundary and sorted
among themselves, so that nothing of the log is held but the cycle in hand and the one event read ahead. The
decisions go as they are taken to a ``DecisionSink`` (``fabric.replay.report``: a temporary file for the JSON
document, or JSON lines). A file out of time order by more than a cycle (an event of a cycle the clock has passed,
or jumped over because the event it saw next was later) cannot be streamed: ``OutOfOrder``, and ``run_replay``
starts again from the events sorted in bounded memory (``fabric.replay.timesort``: sorted runs spilled to temporary
files, merged as the clock reads them), as long as the sink can take back what it was given.

Every event counts once, as in the engine: an event the input holds more than once (the same id, time, type and
object: a list saved twice, a line repeated) is dropped by the pipeline after the first (``skipped_events``:
``event counted already``), so that replay decides what production would on the same input.

Always dry: the policy runs with ``dry_run = true`` whatever the configuration says, and nothing is written
anywhere (no database, no UFM, no tickets). The same input always gives the same output.

Output: a ``summary``, every ``decision`` (the policy's actions, ``record`` included) and the link-downs the
detectors ``explained`` by a reboot, a node down/up or a silence instead of counting them (written to a file
of their own as the clock leaves them behind, in order). A cable is shown
as ``{"a", "a_port", "b", "b_port"}`` by device display name; ports read as the plan's ``Port N`` (``Port
1/3/1`` for split ports, ``Blade B_Port U/P`` for director blades, ``Port 1`` for a host adapter); the lower
tier's end is ``a`` (host, then leaf, spine, core).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from heapq import heappop, heappush
from pathlib import Path
from typing import Any

from fabric.remediation.detectors import Explained
from fabric.remediation.domain import Action, ActionKind, ComponentId, ComponentKind, Finding
from fabric.remediation.observe import Observed
from fabric.remediation.pipeline import Pipeline, Step
from fabric.remediation.policy import PolicyConfig, PolicyState
from fabric.remediation.rules import STORM_BREAKER, RuleSettings
from fabric.remediation.signals import DEFAULT_EVENT_KINDS, EventLike
from fabric.remediation.view import FabricView, build_view
from fabric.replay.events import BY_TIME, EventStream, LoadedEvents, stream_events
from fabric.replay.report import DecisionSink, ExplainedLog, KeptDecisions, ReplayReport, encode_entry
from fabric.replay.samples import RecordedTelemetry
from topology import strictjson
from topology.errors import InputError
from topology.guard import CableKey, GuardSettings
from topology.model import TIER_RANK, End, Fabric
from topology.ports import display_port

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MIN_INTERVAL = timedelta(seconds=1)
"""The shortest virtual cycle: a daemon does not cycle faster, and a shorter one only multiplies the steps."""
REPEATED = "event counted already"
"""Why an event delivered again (same id, time, type and object) is skipped: the pipeline counts it once."""


# --- the fabric model --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReplayModel:
    model: Fabric
    """Names, tiers and cables the policy reasons about: the plan, or the snapshot itself."""
    view: FabricView
    source: str
    down_at_start: frozenset[CableKey] = frozenset()
    """Planned cables the snapshot does not show cabled as planned: out of service from the start."""


def load_model(as_built: Path, plan: Path | None = None) -> ReplayModel:
    """The snapshot alone, or ``plan`` joined with the snapshot's GUIDs and port names. Raises ``InputError``."""
    from topology.formats.ufm_snapshot import read_ufm_snapshot

    actual = read_ufm_snapshot(as_built)
    if plan is None:
        if not actual.infer_tiers():
            raise InputError("the snapshot has no host links, so the switches' tiers are unknown: give --plan",
                             source=str(as_built))
        view = build_view(actual, actual)
        return ReplayModel(actual, view, str(as_built))
    from topology.formats.ndt import read_ndt

    planned = read_ndt(plan)
    view = build_view(planned, actual)
    if not view.resolver.guids:
        raise InputError(f"no device of the snapshot {as_built} is in the plan: are they the same fabric?",
                         source=str(plan))
    return ReplayModel(planned, view, f"{plan} + {as_built}", frozenset(view.plan_keys - view.live_cables(actual)))


# --- the report --------------------------------------------------------------------------------------------


def iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat()


class _Describer:
    """Components as operators read them: display names from the model, ports as the plan writes them."""

    def __init__(self, replay_model: ReplayModel) -> None:
        self.model = replay_model.model
        self.cables = replay_model.view.context.cables
        self._targets: dict[ComponentId, dict[str, Any]] = {}

    def name(self, device: str) -> str:
        found = self.model.devices.get(device)
        return found.name if found is not None else device

    def _rank(self, end: End) -> tuple[int, str, str]:
        found = self.model.devices.get(end.device)
        return (TIER_RANK.get(found.tier, 9) if found is not None else 9, end.device, end.port)

    def link(self, cable: CableKey) -> dict[str, str]:
        a, b = sorted(cable, key=self._rank)
        return {"a": self.name(a.device), "a_port": display_port(a.port),
                "b": self.name(b.device), "b_port": display_port(b.port)}

    def target(self, component: ComponentId) -> dict[str, Any]:
        """``{"link": {...}}``, ``{"port": {...}}`` or ``{"device": name}`` (shared: do not modify)."""
        found = self._targets.get(component)
        if found is None:
            found = self._targets[component] = self._target(component)
        return found

    def _target(self, component: ComponentId) -> dict[str, Any]:
        cable = self.cables.get(component)
        if cable is not None:
            return {"link": self.link(cable)}
        if component.kind is ComponentKind.PORT:
            device, _, port = component.name.rpartition("/")
            return {"port": {"device": self.name(device), "port": display_port(port)}}
        if component.kind is ComponentKind.SWITCH:
            return {"device": self.name(component.name)}
        return {"device": component.name}


# --- the replay --------------------------------------------------------------------------------------------


def _boundary(when: datetime, interval: timedelta) -> datetime:
    """The first multiple of ``interval`` since the epoch at or after ``when``."""
    return _EPOCH + -((_EPOCH - when) // interval) * interval


def _idle(pipeline: Pipeline, policy: PolicyConfig) -> bool:
    """True when a step without events can change nothing: ``decide`` would return no action, same state."""
    detectors = pipeline.detectors
    if detectors.pending or detectors.dirty or pipeline.settling.waiting:
        return False
    state = pipeline.state
    if state.breaker.halted and policy.storm_quiet_period is not None:
        return False
    return not state.revisit()  # nothing on probation, deferred or watched after a reset


def _wake(pipeline: Pipeline, policy: PolicyConfig, now: datetime) -> datetime | None:
    """The earliest time from ``now`` on at which a step without events could act or change the state; None
    when only events can. It mirrors the timers of ``decide``, the guard and the detectors."""
    if pipeline.detectors.pending or pipeline.detectors.dirty:
        return now  # evidence waits to settle: every boundary counts
    state = pipeline.state
    breaker = state.breaker
    times: list[datetime] = []
    if breaker.halted and policy.storm_quiet_period is not None:
        last = max((t for t in (breaker.since, breaker.last_held) if t is not None), default=now)
        times.append(last + policy.storm_quiet_period)
    due = state.due()  # kept with the state: no look at each component on probation or deferred, every step
    if due.deferred and not breaker.halted and pipeline.guard.recent:
        return now  # the guard's hourly rate frees up as its recent disables age: every boundary counts
    if due.probation_ends is not None:
        times.append(due.probation_ends)
    if due.watches_began is not None and not breaker.halted:
        times.append(due.watches_began + policy.resets.settle)
    if (settled := pipeline.settling.due()) is not None:
        times.append(settled)
    return min(times, default=None)


def _check_interval(interval: timedelta, source: str) -> None:
    """Refuse a cycle shorter than ``MIN_INTERVAL``, naming where it was given (``source``)."""
    if interval < MIN_INTERVAL:
        raise InputError(f"must be at least {MIN_INTERVAL.total_seconds():g}s (got {interval.total_seconds():g}s)",
                         source=source)


class OutOfOrder(Exception):
    """An event the file has after events of a later cycle: a replay reading it as it goes has stepped past it."""

    def __init__(self, event: EventLike) -> None:
        super().__init__(event)
        self.event = event


class _InTimeOrder:
    """The events of a stream as the virtual clock reaches them, one read ahead; the earliest and the latest
    timestamps and the number of events taken so far."""

    def __init__(self, events: Iterator[EventLike]) -> None:
        self._events = events
        self.next: EventLike | None = next(events, None)
        """The next event of the stream: the earliest still to come, unless the stream is out of order."""
        self.taken = 0
        self.first: datetime | None = None
        self.last: datetime | None = None

    def take(self, at: datetime, interval: timedelta) -> list[EventLike]:
        """The events of the cycle ending at ``at`` (stamped after ``at - interval``, up to ``at``), sorted by
        timestamp, those with the same one in stream order. Raises ``OutOfOrder`` at an event of an earlier cycle:
        stepped already, or jumped over because the event the clock saw next was later than it."""
        earliest = at - interval
        batch: list[EventLike] = []
        event, events = self.next, self._events
        first, last = self.first, self.last
        while event is not None:
            when = event.timestamp
            if when > at:
                break
            if when <= earliest:
                raise OutOfOrder(event)
            if first is None or when < first:
                first = when
            if last is None or when > last:
                last = when
            batch.append(event)
            event = next(events, None)
        self.next, self.first, self.last = event, first, last
        self.taken += len(batch)
        batch.sort(key=BY_TIME)  # stable, and linear on a file already in time order
        return batch


def replay(replay_model: ReplayModel, events: EventStream | LoadedEvents, *, policy: PolicyConfig | None = None,
           rules: RuleSettings | None = None, guard: GuardSettings | None = None,
           interval: timedelta = timedelta(seconds=60), every_boundary: bool = False,
           decisions: DecisionSink | None = None, telemetry: RecordedTelemetry | None = None) -> ReplayReport:
    """Run ``events`` through a dry :class:`Pipeline` on a virtual clock, each decision into ``decisions`` (a
    list, by default) as it is taken; ``every_boundary`` disables the skipping of idle boundaries (same output,
    slower: for tests). ``telemetry``: recorded samples, each handed to the step of the cycle its time falls in, as
    the events are. Raises ``OutOfOrder`` when a stream not ``in_order`` turns out not to be."""
    _check_interval(interval, "--interval")
    stream = events if isinstance(events, EventStream) else EventStream(
        events, iter(sorted(events.events, key=BY_TIME)), in_order=True)
    sink = decisions if decisions is not None else KeptDecisions()
    policy = replace(policy or PolicyConfig(), dry_run=True)
    rules = rules or RuleSettings()
    view = replay_model.view
    pipeline = Pipeline(view, policy, rules, guard or GuardSettings(), telemetry=telemetry is not None)
    pipeline.observe(Observed(down=frozenset(replay_model.down_at_start)), _EPOCH)
    describe = _Describer(replay_model)
    ahead = _InTimeOrder(stream.events)
    inputs = _Inputs(ahead, telemetry)
    explained = _Explanations(describe, rules.history)
    tally = _Tally()
    try:
        if (first := inputs.upcoming()) is not None:
            at = _boundary(first, interval)
            while True:
                batch = ahead.take(at, interval)
                before = pipeline.state
                step = pipeline.step(batch, at, samples=telemetry.take(at) if telemetry is not None else ())
                tally.add(step, before)
                for entry in _entries(step.decision.actions, step.findings, describe):
                    sink.add(entry)
                explained.add(step.explained, at)
                upcoming = inputs.upcoming()
                if upcoming is None:  # the inputs are over: their last time is known
                    last = inputs.last()
                    assert last is not None
                    end = _boundary(last + rules.longest_settle, interval)
                    if at >= end:
                        break
                at += interval
                if not every_boundary:
                    boundary = _boundary(upcoming if upcoming is not None else end, interval)
                    wake = _wake(pipeline, policy, at)
                    target = max(at, boundary if wake is None else min(boundary, _boundary(wake, interval)))
                    if not _idle(pipeline, policy):
                        tally.steps += (target - at) // interval  # cycles that change nothing: counted, not run
                    at = target
    except OverflowError:  # datetime arithmetic near year 1 or 9999 (events of a single far-off date, say)
        next_at = ahead.next.timestamp if ahead.next is not None else None
        seen = [when for when in (ahead.first, ahead.last, next_at) if when is not None]
        raise InputError(f"the events run from {iso(min(seen))} to {iso(max(seen))} at least: the virtual clock "
                         "cannot step through them (dates out of range)", source=stream.loaded.source) from None
    texts = explained.done()
    summary = _summary(replay_model, stream.loaded, pipeline, tally, ahead, len(texts), interval)
    if telemetry is not None:
        summary["telemetry"] = {**telemetry.summary(), "unplaced": pipeline.sampled.unplaced}
    return ReplayReport(summary, sink, texts, bool(summary["would_act"]))


class _Inputs:
    """What the clock steps towards: the next event, and the next recorded sample when there are any."""

    def __init__(self, events: _InTimeOrder, telemetry: RecordedTelemetry | None) -> None:
        self.events, self.telemetry = events, telemetry

    def upcoming(self) -> datetime | None:
        """The time of the next input not taken yet (``None``: all were)."""
        event = self.events.next.timestamp if self.events.next is not None else None
        sample = self.telemetry.next_time if self.telemetry is not None else None
        return min((t for t in (event, sample) if t is not None), default=None)

    def last(self) -> datetime | None:
        """The time of the last input taken."""
        sample = self.telemetry.last if self.telemetry is not None else None
        return max((t for t in (self.events.last, sample) if t is not None), default=None)


@dataclass(slots=True)
class _Tally:
    """What the summary counts, step by step."""

    steps: int = 0
    findings: int = 0
    repeated: int = 0
    switch_faults: int = 0
    folded: int = 0
    held: int = 0
    kinds: Counter[str] = field(default_factory=Counter)

    def add(self, step: Step, before: PolicyState) -> None:
        self.steps += 1
        self.findings += len(step.findings)
        self.repeated += step.repeated
        self.switch_faults += step.switch_faults
        self.folded += step.folded
        self.held += _newly_held(before.held, step.decision.state.held, step.decision.actions)
        for action in step.decision.actions:
            self.kinds[action.kind.value] += 1


def _summary(replay_model: ReplayModel, loaded: LoadedEvents, pipeline: Pipeline, tally: _Tally,
             ahead: _InTimeOrder, explained: int, interval: timedelta) -> dict[str, Any]:
    mapper, kinds = pipeline.mapper, tally.kinds
    skipped = loaded.skipped + mapper.skipped + Counter({REPEATED: tally.repeated})
    return {
        "events": loaded.records,
        "skipped_events": dict(sorted(skipped.items(), key=lambda item: (-item[1], item[0]))),
        "signals": ahead.taken - tally.repeated - mapper.skipped.total(),
        "findings": tally.findings,
        "decisions": kinds.total(),
        "disabled": kinds[ActionKind.DISABLE.value],
        "reset": kinds[ActionKind.RESET.value],
        "deferred": kinds[ActionKind.DEFER.value],
        "ticketed": kinds[ActionKind.TICKET.value] + kinds[ActionKind.REOPEN.value],
        "quarantined": kinds[ActionKind.QUARANTINE.value],
        "switch_faults": tally.switch_faults,
        "folded": tally.folded,
        "halted": kinds[ActionKind.HALT.value],
        "held": tally.held,
        "recorded": kinds[ActionKind.RECORD.value],
        "explained": explained,
        "would_act": any(kind != ActionKind.RECORD.value for kind in kinds),
        "halted_at_end": pipeline.state.breaker.halted,
        "first_event": iso(ahead.first) if ahead.first is not None else None,
        "last_event": iso(ahead.last) if ahead.last is not None else None,
        "steps": tally.steps,
        "interval_seconds": interval.total_seconds(),
        "input": {"file": loaded.source, "format": loaded.format},
        "model": {"source": replay_model.source, "devices": len(replay_model.model.devices),
                  "cables": len(replay_model.model.cables), "cables_down_at_start": len(replay_model.down_at_start)},
        "dry_run": True,
        "malformed": loaded.examples,
    }


def _newly_held(before: Sequence[Finding], after: Sequence[Finding], actions: Iterable[Action]) -> int:
    resumed = any(a.kind is ActionKind.RECORD and a.rule == STORM_BREAKER for a in actions)
    return len(after) if resumed else len(after) - len(before)


def _entries(actions: Sequence[Action], findings: Sequence[Finding], describe: _Describer) -> list[dict[str, Any]]:
    evidence: dict[tuple[ComponentId, str], set[int]] = defaultdict(set)
    for finding in findings:
        evidence[(finding.component, finding.rule)].update(finding.evidence)
    entries: list[dict[str, Any]] = []
    stamps: dict[datetime, str] = {}
    for action in actions:
        at = stamps.get(action.at)
        if at is None:
            at = stamps[action.at] = iso(action.at)
        entry: dict[str, Any] = {"at": at, "action": action.kind.value, "rule": action.rule, "reason": action.reason}
        if action.component is not None:
            entry["component"] = str(action.component)
            entry |= describe.target(action.component)
            entry["evidence"] = sorted(evidence.get((action.component, action.rule), ()))
        entry["guard"] = dict(action.guard)
        entries.append(entry)
    return entries


class _Explanations:
    """The link-downs explained, each once (the first time it is), encoded as they come, in the report's order:
    time, then component and evidence.

    An explanation is of a link-down in a component's history, and ``Detectors.evaluate`` prunes a history to the
    horizon (``RuleSettings.history``) behind the clock before the flap rule reads it; so once the clock is past
    an explanation's time by the horizon, none can come before it, and it goes to a file (``ExplainedLog``) in its
    place. Should one come earlier all the same, what went to the file is read back and kept with the rest."""

    def __init__(self, describe: _Describer, horizon: timedelta) -> None:
        self._describe, self._horizon = describe, horizon
        self._seen: set[tuple[ComponentId, int]] = set()
        self._waiting: list[tuple[datetime, str, int, int, str]] = []
        """A heap of (time, component, evidence, arrival, encoded entry): the explanations not written yet."""
        self.log = ExplainedLog()
        self._written: tuple[datetime, str, int, int] | None = None
        """The key of the last one written: one that sorts before it came too late."""
        self._late = False

    def add(self, explanations: Iterable[Explained], now: datetime) -> None:
        waiting = self._waiting
        for item in explanations:
            key = (item.component, item.evidence)
            if key in self._seen:
                continue
            self._seen.add(key)
            entry = {"at": iso(item.at), "component": str(item.component), **self._describe.target(item.component),
                     "reason": item.reason, "evidence": item.evidence}
            queued = (item.at, str(item.component), item.evidence, len(self._seen), encode_entry(entry))
            if self._written is not None and queued[:4] < self._written and not self._late:
                self._late = True
                for text in self.log.take_back():
                    read = strictjson.loads(text)
                    heappush(waiting, (datetime.fromisoformat(read["at"]), read["component"], read["evidence"],
                                       0, text))  # (sorted already: arrival order is no longer needed among them)
            heappush(waiting, queued)
        if self._late:
            return
        line = now - self._horizon
        while waiting and waiting[0][0] < line:
            at, component, evidence, arrival, text = heappop(waiting)
            self._written = (at, component, evidence, arrival)
            self.log.add(text)

    def done(self) -> ExplainedLog:
        """Every explanation, in order (those still waiting written after the others)."""
        waiting = self._waiting
        while waiting:
            self.log.add(heappop(waiting)[-1])
        return self.log


# --- the command -------------------------------------------------------------------------------------------


def run_replay(as_built: Path, events: Path | None, *, plan: Path | None = None, config: Path | None = None,
               interval: str | None = None, decisions: DecisionSink | None = None,
               telemetry: Path | None = None) -> ReplayReport:
    """What ``fabricctl replay`` does, each decision into ``decisions`` as it is taken (a list by default).
    Raises ``InputError`` or ``ConfigError`` (both ``ValueError``) on bad input. ``events`` or ``telemetry`` (a
    directory of recorded samples), or both.

    An event file is read as the clock goes, nothing of it kept. One out of time order by more than a cycle is
    replayed again from its events sorted in bounded memory, if ``decisions`` can take back what it was given;
    otherwise it is an ``InputError``."""
    from fabric.config import load_config, parse_duration

    settings = load_config(config)
    step = settings.daemon.interval
    if interval is not None:
        try:
            step = parse_duration(interval)
        except ValueError as exc:  # fabric.durations refuses the unparsable and the absurdly long alike
            raise InputError(str(exc), source="--interval") from None
    _check_interval(step, "--interval" if interval is not None else f"{config or 'the configuration'}: daemon.interval")
    replay_model = load_model(as_built, plan)
    used = frozenset(DEFAULT_EVENT_KINDS)
    sink = decisions if decisions is not None else KeptDecisions()

    def recorded() -> RecordedTelemetry | None:
        """The samples afresh (a replay started again reads them again)."""
        if telemetry is None:
            return None
        return RecordedTelemetry(telemetry, replay_model.view, settings.telemetry.settings())

    policy = settings.policy_config()
    if telemetry is not None:  # replayed samples judge a clean BER window as the daemon's do
        policy = replace(policy, clean_window=settings.telemetry.settings().clean_after)
    run = partial(replay, replay_model, policy=policy, rules=settings.rule_settings(),
                  guard=settings.guard_settings(), interval=step, decisions=sink)
    if events is None:
        return run(LoadedEvents("", "none", []), telemetry=recorded())
    try:
        return run(stream_events(events, used), telemetry=recorded())
    except OutOfOrder as late:
        if not sink.restart():
            raise InputError(f"event {late.event.id} at {iso(late.event.timestamp)} comes after events more than a "
                             "cycle later: JSON lines are written as the log is read, which needs it in time "
                             "order (sort it, or use --format json)", source=str(events)) from None
    return run(stream_events(events, used, sort=True), telemetry=recorded())
