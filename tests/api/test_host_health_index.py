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
from topology.ports import Kind

PLAN = fat_tree(PRESETS["tiny"])
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
ADAPTERS = {key: device.host_name.casefold() for key, device in PLAN.devices.items() if device.kind is Kind.ADAPTER}
SWITCHES = sorted(key for key, device in PLAN.devices.items() if device.kind is Kind.SWITCH)

COMPONENTS = (
    [link_id(cable.key) for cable in PLAN.cables]
    + [ComponentId(ComponentKind.PORT, end_name(end)) for cable in PLAN.cables for end in cable.key]
    + [ComponentId(ComponentKind.HOST, host) for host in sorted(set(ADAPTERS.values()))]
    + [ComponentId(ComponentKind.SWITCH, switch) for switch in SWITCHES]
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
# Switch faults often enough that most examples have one (a switch is one component in forty).
stored = st.tuples(
    st.dictionaries(st.sampled_from(COMPONENTS), records, max_size=40),
    st.dictionaries(st.sampled_from([c for c in COMPONENTS if c.kind is ComponentKind.SWITCH]),
                    records.map(lambda r: ComponentRecord(Lifecycle.TICKETED, r.since, SWITCH_FAULT, r.reason)),
                    max_size=3),
).map(lambda parts: parts[0] | parts[1])


def _belongs(component: ComponentId, host: str) -> bool:
    """Whether ``component`` is of ``host``: the host itself, or a cable or port of one of its adapters."""
    adapters = [key for key, owner in ADAPTERS.items() if owner == host]
    if component.kind is ComponentKind.HOST:
        return component.name == host
    if component.kind is ComponentKind.LINK:
        return any(link_id(cable.key) == component and (cable.a.device in adapters or cable.b.device in adapters)
                   for cable in PLAN.cables)
    if component.kind is ComponentKind.PORT:
        return any(component.name.startswith(f"{adapter}/") for adapter in adapters)
    return False


def _behind(switch: str, host: str) -> bool:
    return any(switch == near.device and ADAPTERS.get(far.device) == host
               for cable in PLAN.cables for near, far in ((cable.a, cable.b), (cable.b, cable.a)))


def scan(components: dict[ComponentId, ComponentRecord]) -> list[tuple[str, list[str], datetime | None]]:
    """Each planned host (by name) with what makes it unhealthy (its components out of service by id, with their
    state, then the switches with an open switch fault it is behind) and since when: every record and cable looked
    at per host."""
    out = [c for c, r in sorted(components.items()) if r.lifecycle not in (Lifecycle.HEALTHY, Lifecycle.PROBATION,
                                                                           Lifecycle.RESET)]
    faulty = [c for c in out if c.kind is ComponentKind.SWITCH and components[c].rule == SWITCH_FAULT
              and components[c].lifecycle in (Lifecycle.TICKETED, Lifecycle.QUARANTINED)]
    found = []
    for host in sorted(set(ADAPTERS.values())):
        mine = ([(f"{c} {components[c].lifecycle.value}", components[c].since) for c in out if _belongs(c, host)]
                + [(f"behind {s}", components[s].since) for s in faulty if _behind(s.name, host)])
        found.append((host, [text for text, _ in mine], min((since for _, since in mine), default=None)))
    return found


def _seen(health: HostHealth) -> tuple[str, list[str], datetime | None]:
    """What ``scan`` says of a host, read from its answer: each reason up to the time it names."""
    named = [reason.split(", which has", 1)[0] if reason.startswith("behind ") else reason.split(" since ", 1)[0]
             for reason in health.reasons]
    return health.host, named, health.since


@settings(max_examples=300, deadline=None)
@given(components=stored)
def test_the_index_answers_as_a_scan_of_every_host(components: dict[ComponentId, ComponentRecord]) -> None:
    index = plan_index(PLAN)
    expected = scan(components)
    # as the endpoints read them: the store hands over the records out of service only
    read = {c: r for c, r in components.items() if r.lifecycle in UNUSABLE}
    assert [_seen(h) for h in hosts_health(index, read)] == expected
    assert [_seen(h) for h in hosts_health(index, read, healthy=False)] == [e for e in expected if e[1]]
    assert [_seen(h) for h in hosts_health(index, read, healthy=True)] == [e for e in expected if not e[1]]
    assert [h.healthy for h in hosts_health(index, read)] == [not e[1] for e in expected]
    found = unhealthy(index, read)
    assert [_seen(host_health(index, host, found)) for host, _, _ in expected] == expected
    # and the records in service change nothing
    assert hosts_health(index, components) == hosts_health(index, read)
