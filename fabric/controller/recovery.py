"""After a restart: settle what a crash left half-done, and observe what the policy needs to count again what
automation holds out of service."""

from __future__ import annotations

from datetime import datetime

from fabric.controller.effects import UFM_WRITES
from fabric.controller.ports_out import PortsOut
from fabric.controller.writes import PortWrites
from fabric.remediation.domain import ActionKind, ComponentId
from fabric.remediation.observe import Restart
from fabric.remediation.policy import PolicyState
from fabric.remediation.view import FabricView
from fabric.store import Store
from fabric.store.records import IntentState
from topology.guard import RATE_WINDOW


async def settle_intents(store: Store, writes: PortWrites, out: PortsOut, now: datetime) -> None:
    """Settle side effects a crash left pending. A port write is settled from UFM: its job is waited for until
    its deadline (a job still running is not a write that did not happen), then the port read, or the
    unhealthy-ports list for an isolation (``writes``)."""
    for intent in store.unfinished_intents():
        if intent.kind not in UFM_WRITES or not (intent.payload or {}).get("port"):
            # Ticket writes are settled by the ticket reconciliation (claims are adopted, not redone).
            store.finish_intent(intent.id, IntentState.ROLLED_BACK, "recovered after a restart")
    await writes.recover(now, store.components(), out)


def observed_restart(state: PolicyState, view: FabricView, out: PortsOut, store: Store, now: datetime, *,
                     resets_since: datetime) -> Restart:
    """What a live start-up found, for the policy to count again what automation holds out
    (``fabric.remediation.observe``): the disables of the decision log's last hour, the ports UFM shows out
    (disabled or isolated, whatever the method configured now), the take-outs still in flight after
    ``settle_intents`` (a job UFM may still be running), and the resets decided since ``resets_since`` (the reset
    ladder's window)."""
    return Restart(disables=tuple(store.decided_since(ActionKind.DISABLE, now - RATE_WINDOW)),
                   shown_out=shown_out(state, view, out),
                   in_flight=frozenset(i.component for i in store.unfinished_intents()
                                       if i.kind is ActionKind.DISABLE and i.component is not None),
                   resets=tuple(store.decided_since(ActionKind.RESET, resets_since)))


def shown_out(state: PolicyState, view: FabricView, out: PortsOut) -> frozenset[ComponentId]:
    """The components of ``state`` whose port UFM shows out, disabled or isolated."""
    return frozenset(component for component in state.components
                     if (port := view.port_to_act_on(component)) is not None and port in out)
