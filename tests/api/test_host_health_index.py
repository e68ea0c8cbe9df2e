"""Host health from the plan's index equals a scan of every host against every record and cable.

The index (``PlanIndex``: a component's hosts, the hosts behind each switch, the hosts by name) and the store's
read of the records out of service only are what make host health cheap on a large fabric; the scan below is what
they must agree with: for each planned host, every record, and for a link or a switch fault every cable of the plan.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.api.health import UNUSABLE, host_health, hosts_health, unhealthy
from fabric.api.models import HostHealth
from fabric.api.plan_index import plan_index
from fabric.remediation.domain import ComponentId, ComponentKind, ComponentRecord, Lifecycle
from fabric.remediation.rules import SWITCH_FAULT
from fabric.remediation.signals import end_name, link_id
from topology.generate import PRESETS, fat_tree
from topology.model import Fabric
from topology.ports import Kind

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _renamed(plan: Fabric) -> Fabric:
    """``plan`` with its hosts named in the opposite order to their adapters' (``Node-08``'s adapters first) and
    spelled in either case (``node-07`` on one adapter, ``NODE-07`` on the other): order and case by name."""
    hosts = sorted({device.host_name for device in plan.devices.values() if device.kind is Kind.ADAPTER})
    names = {host: f"Node-{len(hosts) - i:02d}" for i, host in enumerate(hosts)}
    renamed = Fabric("renamed", plan=True)
    for device in plan.devices.values():
        host = None
        if device.kind is Kind.ADAPTER:
            host = names[device.host_name]
            host = host.upper() if device.name.endswith("mlx5_1") else host.lower() if "7" in host else host
        renamed.add_device(device.name, device.kind, tier=device.tier, host=host)
    for cable in plan.cables:
        renamed.add_cable(cable)
    return renamed


TINY = fat_tree(PRESETS["tiny"])
PLANS = {"tiny": TINY, "renamed": _renamed(TINY)}


def _adapters(plan: Fabric) -> dict[str, str]:
    return {key: device.host_name.casefold() for key, device in plan.devices.items() if device.kind is Kind.ADAPTER}


def _components(plan: Fabric) -> list[ComponentId]:
    return (
        [link_id(cable.key) for cable in plan.cables]
        + [ComponentId(ComponentKind.PORT, end_name(end)) for cable in plan.cables for end in cable.key]
        + [ComponentId(ComponentKind.HOST, host) for host in sorted(set(_adapters(plan).values()))]
        + [ComponentId(ComponentKind.SWITCH, key) for key, device in plan.devices.items()
           if device.kind is Kind.SWITCH]
        # not in the plan: they make no host unhealthy
        + [ComponentId(ComponentKind.HOST, "gpu-9999"), ComponentId(ComponentKind.SWITCH, "leaf-9999"),
           ComponentId(ComponentKind.PORT, "gpu-9999 mlx5_0/1"), ComponentId(ComponentKind.LINK, "a/1|b/1")]
    )


records = st.builds(
    ComponentRecord,
    lifecycle=st.sampled_from(list(Lifecycle)),
    since=st.integers(0, 600).map(lambda minutes: T0 - timedelta(minutes=minutes)),
    rule=st.sampled_from([SWITCH_FAULT, "ber", "link_flap"]),
    reason=st.sampled_from(["", "flapped 3 times", "4 cables failed. Cables: a, b", "two\nlines"]),
)


def _stored(plan: Fabric) -> st.SearchStrategy[dict[ComponentId, ComponentRecord]]:
    """Records of ``plan``'s components, with a switch fault or a few most of the time (a switch is one
    component in forty)."""
    components = _components(plan)
    return st.tuples(
        st.dictionaries(st.sampled_from(components), records, max_size=40),
        st.dictionaries(st.sampled_from([c for c in components if c.kind is ComponentKind.SWITCH]),
                        records.map(lambda r: ComponentRecord(Lifecycle.TICKETED, r.since, SWITCH_FAULT, r.reason)),
                        max_size=3),
    ).map(lambda parts: parts[0] | parts[1])


def scan(plan: Fabric, components: dict[ComponentId, ComponentRecord]
         ) -> list[tuple[str, list[str], datetime | None]]:
    """Each planned host (by name: its adapter's that comes first) with what makes it unhealthy (its components out
    of service by id, with their state, then the switches with an open switch fault it is behind) and since when:
    every record and cable looked at per host."""
    adapters = _adapters(plan)

    def belongs(component: ComponentId, host: str) -> bool:
        """Whether ``component`` is of ``host``: the host itself, or a cable or port of one of its adapters."""
        mine = [key for key, owner in adapters.items() if owner == host]
        if component.kind is ComponentKind.HOST:
            return component.name == host
        if component.kind is ComponentKind.LINK:
            return any(link_id(cable.key) == component and (cable.a.device in mine or cable.b.device in mine)
                       for cable in plan.cables)
        if component.kind is ComponentKind.PORT:
            return any(component.name.startswith(f"{adapter}/") for adapter in mine)
        return False

    def behind(switch: str, host: str) -> bool:
        return any(switch == near.device and adapters.get(far.device) == host
                   for cable in plan.cables for near, far in ((cable.a, cable.b), (cable.b, cable.a)))

    out = [c for c, r in sorted(components.items()) if r.lifecycle not in (Lifecycle.HEALTHY, Lifecycle.PROBATION,
                                                                           Lifecycle.RESET)]
    faulty = [c for c in out if c.kind is ComponentKind.SWITCH and components[c].rule == SWITCH_FAULT
              and components[c].lifecycle in (Lifecycle.TICKETED, Lifecycle.QUARANTINED)]
    names = {host: plan.devices[min(k for k, owner in adapters.items() if owner == host)].host_name
             for host in set(adapters.values())}
    found = []
    for host in sorted(names, key=names.__getitem__):
        mine = ([(f"{c} {components[c].lifecycle.value}", components[c].since) for c in out if belongs(c, host)]
                + [(f"behind {s}", components[s].since) for s in faulty if behind(s.name, host)])
        found.append((names[host], [text for text, _ in mine], min((since for _, since in mine), default=None)))
    return found


def _seen(health: HostHealth) -> tuple[str, list[str], datetime | None]:
    """What ``scan`` says of a host, read from its answer: each reason up to the time it names."""
    named = [reason.split(", which has", 1)[0] if reason.startswith("behind ") else reason.split(" since ", 1)[0]
             for reason in health.reasons]
    return health.host, named, health.since


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(PLANS)).flatmap(lambda name: st.tuples(st.just(name), _stored(PLANS[name]))))
def test_the_index_answers_as_a_scan_of_every_host(case: tuple[str, dict[ComponentId, ComponentRecord]]) -> None:
    plan, components = PLANS[case[0]], case[1]
    index = plan_index(plan)
    expected = scan(plan, components)
    # as the endpoints read them: the store hands over the records out of service only
    read = {c: r for c, r in components.items() if r.lifecycle in UNUSABLE}
    assert [_seen(h) for h in hosts_health(index, read)] == expected
    assert [_seen(h) for h in hosts_health(index, read, healthy=False)] == [e for e in expected if e[1]]
    assert [_seen(h) for h in hosts_health(index, read, healthy=True)] == [e for e in expected if not e[1]]
    assert [h.healthy for h in hosts_health(index, read)] == [not e[1] for e in expected]
    found = unhealthy(index, read)
    assert [_seen(host_health(index, host.casefold(), found)) for host, _, _ in expected] == expected
    # and the records in service change nothing
    assert hosts_health(index, components) == hosts_health(index, read)


_NAMES = st.text(alphabet="ab|- ", min_size=1, max_size=6).map(str.strip).filter(bool)


@settings(max_examples=200, deadline=None)
@given(st.lists(_NAMES, min_size=2, max_size=6, unique_by=str.casefold), st.data())
def test_a_cable_s_devices_are_read_back_from_its_name(names: list[str], data: st.DataObject) -> None:
    """The index keeps the planned cables' names, not their devices: read back from a name, they are the plan's
    own, whatever '|' the devices' names hold; a cable the plan does not have has none."""
    from topology.model import Cable, End

    plan = Fabric("names", plan=True)
    for name in names:
        plan.add_device(name, Kind.SWITCH)
    keys = list(plan.devices)
    pairs = data.draw(st.lists(st.tuples(st.sampled_from(keys), st.sampled_from(keys)).filter(lambda p: p[0] != p[1]),
                               min_size=1, max_size=8))
    for port, (a, b) in enumerate(pairs, start=1):
        plan.add_cable(Cable(End(a, str(port)), End(b, str(port + 100))))
    index = plan_index(plan)
    for cable in plan.cables:
        assert index.devices_of(link_id(cable.key)) == tuple(sorted((cable.a.device, cable.b.device)))
    unplanned = link_id((End(keys[0], "999"), End(keys[1], "998")))
    assert index.devices_of(unplanned) == ()
    assert not index.known(unplanned)
