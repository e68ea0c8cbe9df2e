"""``observe()``: what the shell saw of UFM and the ticket system between cycles, turned into state by the policy.

``decide`` is the policy's answer to a cycle (findings, repairs, the clock's timers). Some of what moves a
component's record, or what the capacity guard counts, is not a finding but an observation the controller makes
outside a cycle: UFM's topology read again (which planned cables are down), a restart (what UFM shows disabled,
which disables are still in flight, what the decision log counts in the last hour, the resets it counts within the
reset ladder's window), convergence (UFM confirmed a
disable while its ticket is open; UFM shows a port disabled by a write of ours that the state lost; a disable
given up while UFM shows the cable up). The controller hands each over as an ``Observed`` record and the policy
alone changes records and the guard, so replay and tests can feed the same records and get the same state.

Observing runs no timer (no probation ends, no deferred link is reconsidered, the breaker does not resume): what
it decides is recorded, never carried out by itself. A disable it decides is one UFM already shows, or one
reconciliation converges to within its attempts and backoff.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime

from fabric.remediation.domain import CONVERGE_RULE, HELD, OUT_OF_SERVICE, ActionKind, ComponentId, Lifecycle
from fabric.remediation.policy import Cycle, Decision, FabricContext, PolicyConfig, PolicyState
from topology.guard import CableKey, CapacityGuard


@dataclass(frozen=True, slots=True)
class Restart:
    """What the controller found at start-up, for counting again what automation holds out of service."""

    disables: tuple[tuple[datetime, ComponentId | None], ...]
    """The disables the decision log holds within the guard's sliding hour (a dry run's: those since its scope
    began, and live mode's before), oldest first: the hourly rate is rebuilt from them, not from what is out."""
    shown_out: frozenset[ComponentId]
    """Components whose port UFM shows out of service: disabled, or isolated (by either method, whichever is
    configured now)."""
    in_flight: frozenset[ComponentId] = frozenset()
    """Components whose disable is still in flight (its intent pending after the restart settled what it could:
    a job UFM may still be running)."""
    converge: bool = True
    """Live mode: a cable automation holds out that UFM shows up will be disabled again by reconciliation, so it
    must pass the guard again. A dry run converges nothing: it counts what it would be holding out."""
    resets: tuple[tuple[datetime, ComponentId | None], ...] = ()
    """The resets the decision log holds within the reset ladder's window (a dry run's chosen as its disables),
    oldest first: the ladder counts them again."""


@dataclass(frozen=True, slots=True)
class Observed:
    down: frozenset[CableKey] | None = None
    """Planned cables UFM does not show up (``None``: no new reading of UFM's topology)."""
    restart: Restart | None = None
    confirmed_out: tuple[ComponentId, ...] = ()
    """Disabled components whose port UFM shows disabled and whose ticket is open: they await their repair."""
    adopt: tuple[tuple[ComponentId, str], ...] = ()
    """(component, port): UFM shows the port disabled by automation's own write while the state does not hold the
    component out (a crash cut the write's bookkeeping short)."""
    shown_up: tuple[CableKey, ...] = ()
    """Cables whose disable reconciliation gave up while UFM shows them up: capacity counts what UFM shows (they
    still count against the blast radius and the hourly rate)."""


def observe(state: PolicyState, observed: Observed, guard: CapacityGuard, context: FabricContext,
            config: PolicyConfig, now: datetime) -> Decision:
    cycle = Cycle(state, guard, context, config, now)
    if observed.down is not None:
        _topology(guard, observed.down)
    if observed.restart is not None:
        _restart(cycle, observed.restart)
    for cable in observed.shown_up:
        guard.mark_up(cable)
    for component in observed.confirmed_out:
        record = cycle.get(component)
        if record is not None and record.lifecycle is Lifecycle.DISABLED:
            cycle.changed[component] = replace(record, lifecycle=Lifecycle.AWAITING_REPAIR)
    for component, port in observed.adopt:
        _adopt(cycle, component, port)
    return cycle.decision()


def _topology(guard: CapacityGuard, down: frozenset[CableKey]) -> None:
    """The guard counts planned cables UFM does not show up as down, and those it shows again as up (unless
    automation holds them out)."""
    for cable in down:
        guard.mark_down(cable)
    for cable in guard.out - down:
        if cable not in guard.disabled:
            guard.mark_up(cable)


def _restart(cycle: Cycle, restart: Restart) -> None:
    """Count what automation holds out of service, the disables of the last hour and the resets the ladder counts.

    A cable UFM already shows disabled, or whose disable is still in flight, is simply counted, all of them
    first. One UFM shows up (the action was cut short by a crash, or someone enabled it by hand) will be disabled
    again by reconciliation, so it must then pass the guard, against today's capacity and what is already counted
    (the hourly rate cannot refuse a disable it already counts): if it does, the disable is decided again (a new one
    unless one of the last hour already counts it); if not, it is kept up, deferred like any finding the guard
    refuses, or still quarantined (only an operator releases a quarantine).

    A dry run counts the links it would have disabled, and a quarantined one only when UFM shows it disabled: a dry
    run re-enables nothing on a resolved ticket, so its would-be quarantines are live mode's, copied when it began.
    """
    guard = cycle.guard
    guard.remember_disables(at for at, _ in restart.disables)
    resets: dict[ComponentId, list[datetime]] = {}
    for at, reset in restart.resets:
        if reset is not None:
            resets.setdefault(reset, []).append(at)
    cycle.remember_resets({component: cycle.config.resets.within(times, cycle.now)
                           for component, times in resets.items()})
    counted = {component for _, component in restart.disables}
    recheck: list[tuple[ComponentId, CableKey]] = []
    for component, cable in _held_cables(cycle):
        record = cycle.base[component]
        if not restart.converge:
            if record.lifecycle is not Lifecycle.QUARANTINED or component in restart.shown_out:
                guard.restore(cable)
        elif component in restart.shown_out or component in restart.in_flight:
            guard.restore(cable)
        else:
            recheck.append((component, cable))
    for component, cable in recheck:
        _recheck(cycle, component, cable, counted=component in counted)


def _held_cables(cycle: Cycle) -> Iterable[tuple[ComponentId, CableKey]]:
    """The planned cables automation holds out (in dry run, would hold out), in component order."""
    for component, record in sorted(cycle.base.items()):
        cable = cycle.context.cables.get(component)
        if cable is not None and record.lifecycle in OUT_OF_SERVICE:
            yield component, cable


def _recheck(cycle: Cycle, component: ComponentId, cable: CableKey, *, counted: bool) -> None:
    record = cycle.base[component]
    guard, now = cycle.guard, cycle.now
    verdict = guard.verdict(cable, now, rate_counted=counted)
    if verdict.allowed:
        if counted:
            guard.restore(cable)
        else:
            guard.take_out(cable, now)
            cycle.act(ActionKind.DISABLE, record.rule,
                      f"{record.reason}; after a restart UFM shows it up: taken out again, {verdict.reason}",
                      component, verdict.figures)
        return
    reason = f"{record.reason}; after a restart UFM shows it up and the guard keeps it so: {verdict.reason}"
    if record.lifecycle is Lifecycle.QUARANTINED:
        cycle.changed[component] = replace(record, reason=reason)  # quarantined as it was, since it was
        cycle.act(ActionKind.RECORD, record.rule, reason, component, verdict.figures)
    else:
        cycle.set(component, Lifecycle.DEFERRED, record.rule, reason)
        cycle.act(ActionKind.DEFER, record.rule, reason, component, verdict.figures)


def _adopt(cycle: Cycle, component: ComponentId, port: str) -> None:
    """Hold out a component whose port UFM shows disabled by automation's own write, within the guard (whose hourly
    rate counted that disable when it was decided); left alone when the guard refuses it (the controller then
    records it as an operator's action)."""
    record = cycle.get(component)
    cable = cycle.context.cables.get(component)
    if record is None or cable is None or record.lifecycle in HELD:
        return
    verdict = cycle.guard.verdict(cable, cycle.now, rate_counted=True)
    if not verdict.allowed:
        return
    cycle.guard.restore(cable)
    reason = (f"UFM shows {port} disabled by automation's own write while the desired state was "
              f"{record.lifecycle.value}: adopted, held out ({verdict.reason}); {record.reason}")
    cycle.set(component, Lifecycle.DISABLED, record.rule, reason)
    cycle.act(ActionKind.DISABLE, CONVERGE_RULE, reason, component, verdict.figures)
