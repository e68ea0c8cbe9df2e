"""What became of the port resets the policy decided, read from the intent log for the next cycle's ``decide``.

A reset is sent once, as the policy decides it (``writes``: an intent, ``POST /actions`` reset, settled by its job).
It is not sent again when UFM does not carry it out: the link was faulty, and retrying would stretch its watch over
the attempts' backoff while the fault goes on. The policy takes the link out instead, as it would have without the
ladder (``CycleInput.undone_resets``); and it watches a link on until UFM has carried its reset out
(``CycleInput.resets_unsettled``), so that a watch never ends clean on a reset that has not happened.
"""

from __future__ import annotations

from fabric.remediation.domain import ActionKind, ComponentId, Lifecycle
from fabric.remediation.policy import PolicyState, UndoneReset
from fabric.store import Store
from fabric.store.records import IntentState

NEVER_SENT = "it was never sent (the cycle that decided it was cut short, or UFM showed no port for it)"


def reset_outcomes(state: PolicyState, store: Store) -> tuple[tuple[UndoneReset, ...], frozenset[ComponentId]]:
    """(the resets UFM did not carry out, the components whose reset it has not carried out yet) of the components
    the policy watches after a reset: the newest reset intent of each since its reset was decided says which."""
    undone: list[UndoneReset] = []
    unsettled: set[ComponentId] = set()
    for component in sorted(state.revisit()):
        record = state.components.get(component)
        if record is None or record.lifecycle is not Lifecycle.RESET:
            continue
        intent = next((i for i in store.intents(component=component, limit=20)
                       if i.kind is ActionKind.RESET and i.created_at >= record.since), None)
        if intent is None:
            undone.append(UndoneReset(component, NEVER_SENT))
        elif intent.state is IntentState.PENDING:
            unsettled.add(component)
        elif intent.state is not IntentState.DONE:
            undone.append(UndoneReset(component, intent.outcome or intent.state.value))
    return tuple(undone), frozenset(unsettled)
