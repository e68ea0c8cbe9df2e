"""Two fabrics, one database: a daemon sees and touches only its own fabric's rows, and a restart of one never
changes the other's UFM. Generated plans share device names, so a row of the wrong fabric would name a real
port of this one."""

from __future__ import annotations

from pathlib import Path

from engine_support import disabled_ports, restart, rig

from fabric.remediation.domain import ActionKind, Lifecycle
from topology.generate import PRESETS, fat_tree

TINY = fat_tree(PRESETS["tiny"])


def test_a_restart_of_one_fabric_leaves_the_other_fabrics_ufm_alone(tmp_path: Path) -> None:
    shared = f"sqlite:///{tmp_path / 'shared.db'}"
    with rig(TINY, tmp_path, fabric="east", store_url=shared) as east, \
            rig(TINY, tmp_path, fabric="west", store_url=shared) as west:
        east.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        east.advance(300)
        report = east.cycle()
        assert [a.kind for a in report.actions if a.kind is ActionKind.DISABLE] == [ActionKind.DISABLE]
        east_disabled = disabled_ports(east)
        assert len(east_disabled) == 1
        held = east.store.components()

        west.advance(300)
        restart(west)  # recovery and reconciliation read the store: they must see west's rows only
        west.advance(60)
        west.cycle()
        assert disabled_ports(west) == []
        assert west.store.components() == {} and west.store.tickets() == []
        assert west.store.unfinished_intents() == [] and west.store.decisions() == []
        assert west.tickets.list() != []  # the local backend holds east's ticket, which west's store does not name

        # And east is as east left it.
        east.advance(60)
        east.cycle()
        assert disabled_ports(east) == east_disabled
        assert east.store.components() == held
        assert {r.lifecycle for r in east.store.components().values()} == {Lifecycle.AWAITING_REPAIR}
