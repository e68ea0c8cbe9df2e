"""Level-triggered convergence: UFM and the ticket system brought to the desired state every cycle.

Reconciliation never undoes an operator: it takes out again only what automation holds out, and puts back only
what automation itself released (on probation), the way automation took it out; every component automation holds
has one open ticket. A port UFM shows out (disabled, or isolated) that no component holds out is never left
unexplained (``explain_unheld``).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from fabric.controller.effects import CycleReport
from fabric.controller.outbox import TicketOutbox
from fabric.controller.ports_out import PortsOut
from fabric.controller.writes import PortWrites, Progress, last_taken_out
from fabric.remediation.domain import (
    CONVERGE_RULE,
    HELD,
    Action,
    ActionKind,
    ComponentId,
    ComponentRecord,
    Lifecycle,
)
from fabric.remediation.policy import PolicyState
from fabric.remediation.signals import link_id
from fabric.remediation.view import FabricView
from fabric.store import Store
from fabric.store.records import TicketState
from topology.guard import CableKey, GuardReading

WAITING = (Lifecycle.DISABLED, Lifecycle.AWAITING_REPAIR, Lifecycle.DEFERRED, Lifecycle.TICKETED)
"""Lifecycles in which a component waits for its ticket to be resolved."""
OUTSIDE_RULE = "disabled_outside"
"""The rule of the record saying UFM shows a port out (disabled, or isolated) that automation did not take out: an
operator's action."""


async def reconcile_ports(state: PolicyState, view: FabricView, guard: GuardReading, out: PortsOut,
                          live: set[CableKey], store: Store, writes: PortWrites, now: datetime,
                          report: CycleReport) -> list[CableKey]:
    """A cable automation holds out must be out in UFM, by any method (a crash may have cut the action short, or
    someone put it back by hand: it is taken out by the configured one), and one it released must not be out the
    way automation took it out. ``out`` is kept in step.

    Each write is sent only when due (``writes.progress``): never while one is in flight, after a backoff once
    UFM left one unconfirmed, and not at all once ``attempts`` were. Returns the cables whose disable was given
    up while UFM shows them up (``live``), for the policy to stop counting them against capacity (they still
    count against the blast radius and the rate).
    """
    shown_up: list[CableKey] = []
    for component, record in list(state.components.items()):
        cable = view.context.cables.get(component)
        port = view.port_to_act_on(component)
        if cable is None or port is None:
            continue
        want_out = cable in guard.disabled
        kind = ActionKind.DISABLE if want_out else ActionKind.ENABLE
        # Put back only what automation itself released (on probation), and only the way it took it out: a healthy
        # cable out in UFM, out by another method, or out again after automation put it back, may be an operator's
        # maintenance, which automation must not undo.
        if want_out:
            if port in out:
                continue
        elif (record.lifecycle is not Lifecycle.PROBATION or port not in out
              or (method := last_taken_out(store, component)) is None or not out.shows(port, method)):
            continue
        progress = writes.progress(component, kind, record.since, now)
        status = progress.status
        if status is Progress.IN_FLIGHT:
            continue
        if status is Progress.BACKING_OFF:
            report.writes_backing_off += 1
            continue
        if status is Progress.GIVEN_UP:
            report.writes_given_up += 1
            if want_out and cable in live:
                shown_up.append(cable)  # capacity counts what UFM shows
            continue
        action = Action(kind, now, CONVERGE_RULE, f"UFM shows {port} {out.describe(port)}, "
                        f"the desired state is {record.lifecycle.value}: converging", component, dry_run=False)
        if progress.failed and (job := await writes.still_running(component, kind)) is not None:
            writes.wait_out(action, port, job, state.components, now, report)
            continue
        store.record_decision(action)
        report.actions.append(action)
        await writes.post(action, port, out, report)
    return shown_up


def ask_for_tickets(state: PolicyState, store: Store, outbox: TicketOutbox) -> None:
    """Every component automation holds needs an open ticket: one it has not is asked for in the outbox (once:
    a second ask while the first waits is the first)."""
    for component, record in state.components.items():
        if record.lifecycle not in WAITING and record.lifecycle is not Lifecycle.QUARANTINED:
            continue
        key = outbox.ticketing.key(component)
        active = store.active_ticket(key)
        if active is None or active.external_key is None:
            if record.lifecycle is not Lifecycle.QUARANTINED and _resolved_since(store, key, record.since):
                continue  # repaired: the policy moves it to probation next cycle
            outbox.queue_open(component, f"{record.rule}: {component}", record.reason, record.rule)


def confirmed_out(state: PolicyState, view: FabricView, out: PortsOut, store: Store,
                  outbox: TicketOutbox) -> tuple[ComponentId, ...]:
    """Disabled components whose port UFM shows out and whose ticket is open: the policy has them await their
    repair (until UFM shows the port out, it has not confirmed the component is out of service)."""
    return tuple(component for component, record in state.components.items()
                 if record.lifecycle is Lifecycle.DISABLED and view.port_to_act_on(component) in out
                 and (active := store.active_ticket(outbox.ticketing.key(component))) is not None
                 and active.external_key is not None)


def _resolved_since(store: Store, key: str, since: datetime) -> bool:
    """A ticket of ``key`` was resolved (repaired, not merely closed) since ``since``."""
    return any(t.state is TicketState.RESOLVED and t.resolved_at is not None and t.resolved_at >= since
               for t in store.tickets(dedup_key=key))


def adoptable(state: PolicyState, view: FabricView, out: PortsOut,
              store: Store) -> tuple[tuple[ComponentId, str], ...]:
    """(component, port) for every planned cable's port UFM shows out that no component holds out, where the
    intent log shows automation's own take-out did it, by the method UFM shows (a write a crash cut short and the
    restart lost track of): the policy adopts it, within the guard (``fabric.remediation.observe``)."""
    found: list[tuple[ComponentId, str]] = []
    for port, component, record in _out_planned(state, view, out):
        if record is None or record.lifecycle in HELD or port != view.port_to_act_on(component):
            continue
        method = last_taken_out(store, component, since=record.since)
        if method is not None and out.shows(port, method):
            found.append((component, port))
    return tuple(found)


def explain_unheld(state: PolicyState, view: FabricView, out: PortsOut, store: Store, now: datetime,
                   report: CycleReport, reported: set[str]) -> None:
    """Every planned cable UFM shows out (a port disabled or isolated) that no component holds out (once
    ``adoptable``'s were adopted) is recorded once as an operator's action (``reported``: the ports already
    recorded, kept by the caller) and left alone. ``report.ports_out_unheld`` counts those left alone."""
    for port, component, record in _out_planned(state, view, out):
        if record is not None and record.lifecycle in HELD:
            reported.discard(port)  # held out, or released by automation and being enabled (``reconcile_ports``)
            continue
        report.ports_out_unheld += 1
        if port in reported:
            continue
        reported.add(port)
        last = store.decisions(component=component, limit=1)
        if last and last[0].action.rule == OUTSIDE_RULE:
            continue  # recorded before a restart
        held = "not held by automation" if record is None else f"automation holds it {record.lifecycle.value}"
        action = Action(ActionKind.RECORD, now, OUTSIDE_RULE, f"UFM shows {port} {out.describe(port)} and {held}: "
                        "an operator's (or another tool's) action, left alone", component, dry_run=False)
        store.record_decision(action)
        report.actions.append(action)


def _out_planned(state: PolicyState, view: FabricView,
                 out: PortsOut) -> Iterator[tuple[str, ComponentId, ComponentRecord | None]]:
    """(port, component, record) for every planned cable UFM shows out, once a cable, in port order: the port
    automation would act on when UFM shows it out, else the first of the cable's ports out (an isolation names both
    ends of its cable)."""
    seen: set[ComponentId] = set()
    for port in out:
        cable = view.cable_at_port(port)
        if cable is None:
            continue
        component = link_id(cable)
        if component in seen:
            continue
        seen.add(component)
        acting = view.port_to_act_on(component)
        yield (acting if acting is not None and acting in out else port), component, state.components.get(component)
