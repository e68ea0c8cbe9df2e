"""After a repair: is the link really back, up at its planned width and speed?

An enable UFM confirmed says only that the port is no longer disabled. The link must still train, and a repair
that swapped the wrong cable or left a bad module comes up narrow or slow (``2x/HDR`` instead of ``4x/NDR``),
or not at all. Each cycle the engine reads UFM's links (the as-built fabric); a component on probation whose
link is up at its planned rate is confirmed (a decision, read back after a restart), and one that is not
within ``wait`` of its re-enable is a failed repair, which the policy backs out (``policy.FailedRepair``).

The check is made in the controller, not in the policy: it compares UFM's reading with the plan, which only the
controller has, and hands the policy a typed verdict, so the decision that follows stays pure. Once confirmed, a
link that degrades later on probation is the detectors' business (a finding, a strike), not a failed repair.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from datetime import datetime, timedelta

from fabric.durations import format_duration
from fabric.remediation.domain import Action, ActionKind, ComponentId, ComponentRecord, Lifecycle
from fabric.remediation.policy import LINK_CHECK, FailedRepair
from fabric.store import Store
from topology.formats.ufm_render import speed_name
from topology.guard import CableKey
from topology.model import Cable
from topology.verify import below_plan


def rate(cable: Cable) -> str:
    """``4x/NDR``: the width and per-lane generation UFM names (what is known of them)."""
    width = f"{cable.width}x" if cable.width else "?x"
    return f"{width}/{speed_name(cable) or (f'{cable.speed_gbps:g}G' if cable.speed_gbps else '?')}"


def shortfall(planned: Cable, built: Cable | None) -> str | None:
    """How the link UFM shows falls short of the plan (``None``: up as planned)."""
    if built is None:
        return "the link is not up"
    if below_plan(built, planned.width, planned.speed_gbps):
        return f"the link came up at {rate(built)} instead of {rate(planned)}"
    return None


class LinkChecks:
    """The confirmation of re-enabled links, kept in memory and in the decision log (a restart reads it back)."""

    def __init__(self, store: Store, plan: Iterable[Cable], wait: timedelta) -> None:
        self.store, self.wait = store, wait
        self.planned: dict[CableKey, Cable] = {cable.key: cable for cable in plan}
        self._confirmed: dict[ComponentId, datetime] = {}
        """Component -> the ``since`` of the probation its link was confirmed in."""
        self._read_back: dict[ComponentId, datetime] = {}
        """Component -> the ``since`` of the probation whose confirmations were read from the decision log: once
        per probation, not at every cycle a link stays down (later ones this process makes itself)."""

    def check(self, records: Mapping[ComponentId, ComponentRecord], cables: Mapping[ComponentId, CableKey],
              live: Set[CableKey], below: Mapping[CableKey, Cable], now: datetime,
              report_actions: list[Action]) -> list[FailedRepair]:
        """The failed repairs among ``records`` (the components to look at: those on probation), given the planned
        cables UFM shows up (``live``) and those of them it shows below their planned rate, as it shows them
        (``below``); confirmations are recorded as decisions and appended to ``report_actions``."""
        failed: list[FailedRepair] = []
        on_probation = {c: r for c, r in records.items() if r.lifecycle is Lifecycle.PROBATION}
        self._confirmed = {c: s for c, s in self._confirmed.items() if c in on_probation and on_probation[c].since == s}
        self._read_back = {c: s for c, s in self._read_back.items() if c in on_probation and on_probation[c].since == s}
        for component in sorted(on_probation):
            record = on_probation[component]
            key = cables.get(component)
            planned = self.planned.get(key) if key is not None else None
            if planned is None or self._is_confirmed(component, record):
                continue
            missing = shortfall(planned, below.get(planned.key, planned) if planned.key in live else None)
            if missing is None:
                self._confirmed[component] = record.since
                action = Action(ActionKind.RECORD, now, LINK_CHECK, f"re-enabled: the link is up at {rate(planned)} "
                                "as planned", component, dry_run=False)
                self.store.record_decision(action)
                report_actions.append(action)
            elif now - record.since >= self.wait:
                failed.append(FailedRepair(component, f"re-enabled, but {missing} {format_duration(self.wait)} "
                                                      "later: backed out"))
        return failed

    def _is_confirmed(self, component: ComponentId, record: ComponentRecord) -> bool:
        if self._confirmed.get(component) == record.since:
            return True
        if self._read_back.get(component) == record.since:
            return False
        self._read_back[component] = record.since
        # Not seen by this process: a confirmation made before a restart is in the decision log.
        if any(d.action.rule == LINK_CHECK and d.action.kind is ActionKind.RECORD
               for d in self.store.decisions(component=component, since=record.since)):
            self._confirmed[component] = record.since
            return True
        return False
