"""A dry run's would-be state, kept across restarts so that its report says what live mode would really do.

A dry run decides as live mode would and writes nothing to UFM or the ticket system. The desired state it reaches
(the links it would have disabled, the breaker's halt, the storm window) is kept in a scope of its own
(``Store.dry_run_scope``), never in the fabric's: live mode reads only what is real, and starts from what UFM
shows. After a restart the dry run goes on from its would-be state: it does not disable again what it would have
disabled, its guard counts those against the cap and the hourly rate, and a halt lasts until resumed.

Switching modes: a live start drops the dry run's scope, and a dry run with none kept begins it as a copy of live
mode's state (recorded as a decision, the first line of its report). A dry run after a live period thus starts
from what live mode really holds, not from a would-be state that live mode has since made stale.
"""

from __future__ import annotations

import logging
from datetime import datetime

from fabric.controller.ports_out import PortsOut
from fabric.controller.recovery import shown_out
from fabric.remediation.domain import Action, ActionKind, Lifecycle
from fabric.remediation.observe import Restart
from fabric.remediation.policy import PolicyState
from fabric.remediation.view import FabricView
from fabric.store import ScopedStore, Store
from topology.guard import RATE_WINDOW

log = logging.getLogger(__name__)

DRY_RUN_RULE = "dry_run"
"""The rule of the decision that records where a dry run's would-be state began."""


def state_store(store: Store, *, dry_run: bool, now: datetime) -> Store | ScopedStore:
    """Where this start reads the desired state from: live mode's own, after dropping a dry run's; a dry run's
    scope, begun from live mode's state if none is kept."""
    if not dry_run:
        if store.drop_dry_run():
            log.info("fabric %s: live mode starts from what UFM shows; the dry run's would-be state is dropped",
                     store.fabric)
        return store
    if not store.dry_run_kept():
        with store.transaction() as tx:
            tx.begin_dry_run()
            held = tx.dry_run_scope()
            out = sum(1 for r in held.components().values() if r.lifecycle is not Lifecycle.HEALTHY)
            halted = held.breaker_state().halted
            tx.record_decision(Action(ActionKind.RECORD, now, DRY_RUN_RULE, (
                f"dry run begins from live mode's state ({out} components held, automation "
                f"{'halted' if halted else 'running'}): from here on its states are what live mode would reach"),
                dry_run=True))
    return store.dry_run_scope()


def observed_restart(state: PolicyState, view: FabricView, out: PortsOut, store: Store, now: datetime, *,
                     resets_since: datetime) -> Restart:
    """What a dry run's start-up needs for its guard to count as its uninterrupted run did
    (``fabric.remediation.observe``): its disables of the last hour (those since its scope began) and live
    mode's before, the ports UFM shows out, disabled or isolated (a would-be quarantine counts as out only when
    UFM shows it so: a dry run re-enables nothing on a resolved ticket, so its would-be quarantines are live
    mode's, copied when it began), and the resets since ``resets_since`` chosen as the disables. Nothing is
    converged: a dry run has nothing to converge."""
    began = store.last_decided(ActionKind.RECORD, DRY_RUN_RULE) or now
    return Restart(disables=tuple(store.decided_since(ActionKind.DISABLE, now - RATE_WINDOW, dry_run_since=began)),
                   shown_out=shown_out(state, view, out), converge=False,
                   resets=tuple(store.decided_since(ActionKind.RESET, resets_since, dry_run_since=began)))
