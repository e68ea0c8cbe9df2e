"""What became of the port resets the policy decided, read from the intent log, and the resets a crash cut short.

A reset is sent as the policy decides it (``writes``: an intent, ``POST /actions`` reset, settled by its job). Each
cycle the policy is told what became of the resets of the links it watches: one UFM did not carry out (its job
failed, no answer by its deadline, no port to send it to) takes the link out, as it would have been without the
ladder (``CycleInput.undone_resets``); one not carried out yet keeps the link watched (``resets_unsettled``), so that
a watch never ends clean on a reset that has not happened. A reset UFM did not carry out is never sent again: the
link was faulty, and retrying would stretch its watch over the attempts' backoff while the fault goes on. Only one
that was never sent (a crash between the cycle that decided it and its POST: no intent, or one rolled back as never
carried out) is sent by reconciliation, as a disable a crash cut short is (``send_unsent``).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from fabric.controller.effects import CycleReport
from fabric.controller.ports_out import PortsOut
from fabric.controller.writes import PortWrites, Progress
from fabric.remediation.domain import CONVERGE_RULE, Action, ActionKind, ComponentId, ComponentRecord, Lifecycle
from fabric.remediation.policy import PolicyState, UndoneReset
from fabric.remediation.view import FabricView
from fabric.store import Store
from fabric.store.records import IntentRecord, IntentState

NO_PORT = "UFM shows no port for it"
UNSENT = frozenset({None, IntentState.ROLLED_BACK})
"""The states of the newest reset intent of a watched link (``None``: there is none) saying it was never sent."""


def reset_outcomes(state: PolicyState, view: FabricView,
                   store: Store) -> tuple[tuple[UndoneReset, ...], frozenset[ComponentId]]:
    """(the resets UFM did not carry out, the components whose reset it has not carried out yet) of the links the
    policy watches after a reset."""
    undone: list[UndoneReset] = []
    unsettled: set[ComponentId] = set()
    for component, _, intent in _watched(state, store):
        done = None if intent is None else intent.state
        if done in UNSENT and view.port_to_act_on(component) is None:
            undone.append(UndoneReset(component, NO_PORT))
        elif done in UNSENT or done is IntentState.PENDING:
            unsettled.add(component)
        elif done is not IntentState.DONE:
            assert intent is not None
            undone.append(UndoneReset(component, intent.outcome or intent.state.value))
    return tuple(undone), frozenset(unsettled)


async def send_unsent(state: PolicyState, view: FabricView, store: Store, writes: PortWrites, out: PortsOut,
                      now: datetime, report: CycleReport) -> None:
    """Send the resets the policy decided that were never sent, each recorded as a convergence decision (the
    ladder counted the reset when it was decided); not while a write of the component is in flight."""
    for component, record, intent in _watched(state, store):
        port = view.port_to_act_on(component)
        if (intent is not None and intent.state not in UNSENT) or port is None or \
                writes.progress(component, ActionKind.RESET, record.since, now).status is Progress.IN_FLIGHT:
            continue
        action = Action(ActionKind.RESET, now, CONVERGE_RULE,
                        f"the reset decided at {record.since.isoformat()} was never sent: sending it", component,
                        dry_run=False)
        store.record_decision(action)
        report.actions.append(action)
        await writes.post(action, port, out, report)


def _watched(state: PolicyState, store: Store) -> Iterator[tuple[ComponentId, ComponentRecord, IntentRecord | None]]:
    """(component, record, its newest reset intent since the reset was decided) of every link watched after one."""
    for component in sorted(state.revisit()):
        record = state.components.get(component)
        if record is not None and record.lifecycle is Lifecycle.RESET:
            yield component, record, next((i for i in store.intents(component=component, limit=20)
                                           if i.kind is ActionKind.RESET and i.created_at >= record.since), None)
