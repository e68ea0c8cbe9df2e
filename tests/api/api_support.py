"""The API tests' runtime (a stand-in for the daemon's) and a tiny-plan fabric with components in every state
that host health reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from fabric.api.context import GuardFigures, Reload, RuntimeStatus
from fabric.remediation.domain import ComponentId, ComponentKind, ComponentRecord, Lifecycle
from fabric.remediation.rules import SWITCH_FAULT
from fabric.remediation.signals import link_id
from fabric.store import ScopedStore, Store
from topology.model import End, Fabric

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
TOKEN = "the-admin-t0ken"


@dataclass
class FakeRuntime:
    """What the running engine would report; ``reloads`` counts ``reload`` calls."""

    live: RuntimeStatus = field(default_factory=lambda: RuntimeStatus(
        started_at=NOW, dry_run=True, interval_seconds=30.0, last_poll_at=NOW, last_cycle_at=NOW,
        ufm_reachable=True, guard=GuardFigures(worst_leaf="pod01-leaf01", worst_leaf_fraction=0.75, disabled=1,
                                               cap=10, disables_last_hour=1, hourly_limit=20),
        counters={"events": 12}))
    reloads: int = 0
    wakes: int = 0
    reloaded: Reload = field(default_factory=lambda: Reload("rules unchanged, 1 silence"))
    """What ``reload`` answers."""

    def status(self) -> RuntimeStatus:
        return self.live

    async def reload(self, by: str, reason: str) -> Reload:
        self.reloads += 1
        return self.reloaded

    def wake(self) -> None:
        self.wakes += 1


def link(a: tuple[str, str], b: tuple[str, str]) -> ComponentId:
    return link_id((End(*a), End(*b)))


NODE1_LINK = link(("pod01-node01 mlx5_0", "1"), ("pod01-leaf01", "1"))
NODE2_LINK = link(("pod01-node02 mlx5_1", "1"), ("pod01-leaf02", "2"))
NODE3_LINK = link(("pod01-node03 mlx5_0", "1"), ("pod01-leaf01", "3"))
FAULTY_LEAF = ComponentId(ComponentKind.SWITCH, "pod02-leaf01")


def uplink(plan: Fabric, leaf: str, spine: str) -> ComponentId:
    cable = next(c for c in plan.cables if {c.a.device, c.b.device} == {leaf, spine})
    return link_id(cable.key)


def seed(store: Store | ScopedStore, plan: Fabric) -> dict[ComponentId, ComponentRecord]:
    """node01's cable disabled, node02's quarantined, node03's on probation, an uplink of pod01-leaf01 awaiting
    repair, and pod02-leaf01 with an open switch fault (its hosts are behind it)."""
    records = {
        NODE1_LINK: ComponentRecord(Lifecycle.DISABLED, NOW - timedelta(minutes=30), "link_flap", "flapped 3 times"),
        NODE2_LINK: ComponentRecord(Lifecycle.QUARANTINED, NOW - timedelta(hours=2), "ber", "BER 1e-9, 3 strikes",
                                    strikes=3),
        NODE3_LINK: ComponentRecord(Lifecycle.PROBATION, NOW - timedelta(hours=1), "ber", "repaired",
                                    probation_until=NOW + timedelta(hours=1)),
        uplink(plan, "pod01-leaf01", "pod01-spine01"): ComponentRecord(
            Lifecycle.AWAITING_REPAIR, NOW - timedelta(hours=3), "ber", "BER 1e-8"),
        FAULTY_LEAF: ComponentRecord(Lifecycle.TICKETED, NOW - timedelta(minutes=10), SWITCH_FAULT,
                                     "4 cables failed within 5m. Cables: a, b, c, d"),
    }
    for component, record in records.items():
        store.put_component(component, record)
    return records
