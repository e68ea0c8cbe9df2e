"""The storm breaker against a simulated UFM: the cycle that trips it writes nothing."""

from __future__ import annotations

from pathlib import Path

from engine_support import disabled_ports, rig

from fabric.remediation.domain import ActionKind
from fabric.remediation.rules import RULE_BY_NAME, STORM_BREAKER
from topology.generate import PRESETS, fat_tree
from topology.guard import GuardSettings

TINY = fat_tree(PRESETS["tiny"])
# Six cables of different switches (no switch has more than two of them, so none of it is one switch's fault).
SPREAD = ["pod01-leaf01/5", "pod01-leaf02/7", "pod02-leaf01/5", "pod02-leaf02/7", "pod01-spine01/5",
          "pod02-spine02/7"]


def test_the_cycle_that_trips_the_breaker_disables_nothing(tmp_path: Path) -> None:
    roomy = GuardSettings(c=0.0, cap_fraction=0.05, cap_floor=10, hourly_limit=20)
    with rig(TINY, tmp_path, guard=roomy, storm_components=5) as r:
        for port in SPREAD:
            r.inject(fault="ber", port=port, escalate_after=0)
        r.advance(30)
        report = r.cycle()
        kinds = [a.kind for a in report.actions]
        assert kinds[:2] == [ActionKind.HALT, ActionKind.TICKET], kinds
        assert report.actions[0].rule == STORM_BREAKER and STORM_BREAKER in RULE_BY_NAME  # declared: severity, repair
        assert ActionKind.DISABLE not in kinds and disabled_ports(r) == []
        assert r.store.breaker_state().halted and len(r.tickets.list()) == 1  # the storm's ticket only
