"""After a restart: settle what a crash left half-done, and count again what automation holds out of service."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from fabric.controller.effects import UFM_WRITES
from fabric.controller.ticketing import Ticketing
from fabric.controller.writes import PortWrites
from fabric.remediation.domain import OUT_OF_SERVICE, Action, ActionKind, ComponentId, ComponentRecord, Lifecycle
from fabric.remediation.policy import FabricContext, PolicyState
from fabric.remediation.view import FabricView
from fabric.store import Store
from fabric.store.records import IntentState
from topology.guard import RATE_WINDOW, CableKey, CapacityGuard


async def settle_intents(store: Store, writes: PortWrites, disabled_ports: set[str], now: datetime) -> None:
    """Settle side effects a crash left pending. A port write is settled from UFM: its job is waited for until
    its deadline (a job still running is not a write that did not happen), then the port read (``writes``)."""
    for intent in store.unfinished_intents():
        if intent.kind not in UFM_WRITES or not (intent.payload or {}).get("port"):
            # Ticket writes are settled by the ticket reconciliation (claims are adopted, not redone).
            store.finish_intent(intent.id, IntentState.ROLLED_BACK, "recovered after a restart")
    await writes.recover(now, store.components(), disabled_ports)


def rebuild_guard(state: PolicyState, view: FabricView, context: FabricContext, guard: CapacityGuard,
                  disabled_ports: set[str], store: Store, ticketing: Ticketing,
                  now: datetime) -> dict[ComponentId, ComponentRecord]:
    """Count what automation holds out of service, and the disables of the last hour; returns the records this
    changed.

    The hourly rate is rebuilt from the decision log, not from what is still out: a cable disabled and repaired
    within the hour still counts, as it did before the restart. A cable UFM already shows disabled, or whose
    disable is still in flight (its intent pending after ``settle_intents``: a job UFM may still be running), is
    simply counted, all of them first. One UFM shows up (the action was cut short by a crash, or someone enabled
    it by hand) will be disabled again by reconciliation, so it must then pass the guard, against today's capacity
    and what is already counted (the hourly rate cannot refuse a disable it already counts): if it does, the
    decision is logged (a new disable unless one of the last hour already counts it); if not, it is kept up,
    deferred like any finding the guard refuses, or still quarantined (only an operator releases a quarantine).
    """
    decided = store.disables_since(now - RATE_WINDOW)
    guard.remember_disables(at for at, _ in decided)
    counted = {component for _, component in decided}
    in_flight = {i.component for i in store.unfinished_intents() if i.kind is ActionKind.DISABLE}
    changed: dict[ComponentId, ComponentRecord] = {}
    recheck: list[tuple[ComponentId, ComponentRecord, CableKey]] = []
    for component, record in sorted(state.components.items()):
        cable = context.cables.get(component)
        if cable is None or record.lifecycle not in OUT_OF_SERVICE:
            continue
        port = view.port_to_act_on(component)
        if (port is not None and port in disabled_ports) or component in in_flight:
            guard.restore(cable)
        else:
            recheck.append((component, record, cable))
    for component, record, cable in recheck:
        verdict = guard.verdict(cable, now, rate_counted=component in counted)
        if verdict.allowed:
            if component in counted:
                guard.restore(cable)
            else:
                guard.take_out(cable, now)
                store.record_decision(Action(ActionKind.DISABLE, now, record.rule, (
                    f"{record.reason}; after a restart UFM shows it up: taken out again, {verdict.reason}"),
                    component, dict(verdict.figures), dry_run=False))
            continue
        reason = f"{record.reason}; after a restart UFM shows it up and the guard keeps it so: {verdict.reason}"
        quarantined = record.lifecycle is Lifecycle.QUARANTINED
        lifecycle, kind = (Lifecycle.QUARANTINED, ActionKind.RECORD) if quarantined else (
            Lifecycle.DEFERRED, ActionKind.DEFER)
        changed[component] = replace(record, lifecycle=lifecycle, since=record.since if quarantined else now,
                                     reason=reason)
        store.record_decision(Action(kind, now, record.rule, reason, component, dict(verdict.figures), dry_run=False))
        store.put_component(component, changed[component], ticket_dedup_key=ticketing.key(component))
    return changed
