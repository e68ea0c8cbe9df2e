"""The ports a ``FabricView`` has UFM Telemetry's samples judged for (``watched``), and the feed's window made of them.

``watched`` is worked out once a view (the feed asks at every poll; on h100-32k it cost most of a poll, see
``benchmarks/bench_telemetry.py``): these check that what is kept is what the plan and UFM's names say, that
it cannot be changed behind the view's back, and that the feed still starts its history again when, and only
when, a new view watches other ports.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.controller.telemetry import TelemetryFeed
from fabric.remediation.view import FabricView, build_view
from fabric.telemetry.settings import TelemetrySettings
from topology.formats.ufm_render import UfmView
from topology.generate import PRESETS, fat_tree
from topology.model import Fabric

T0 = datetime(2026, 4, 1, 10, 0, tzinfo=UTC)
INTERVAL = timedelta(minutes=5)
HEADER = "timestamp,Node_GUID,port_guid,Port_Number,Symbol_Errors,PortRcvPktsExtended,PortRcvErrors," \
         "PortRcvRemotePhysicalErrors,Link_Down_IB,Module_Temperature"
RESTARTED = "the counters' history starts again"


def named_plan(*, leave_out: frozenset[int] = frozenset(), renamed: int | None = None) -> Fabric:
    """The tiny plan with UFM's GUIDs and port names set on it (it stands for UFM's reading too); ``leave_out``:
    indexes of ports UFM does not list; ``renamed``: the index of one port UFM names differently (its GUID
    replaced)."""
    plan = fat_tree(PRESETS["tiny"])
    ufm = UfmView(plan)
    for key, guid in ufm.guids.items():
        plan.devices[key].guid = guid
    for index, (end, ref) in enumerate(ufm.ports.items()):
        if index not in leave_out:
            plan.port_names[f"{int(ref.guid, 16) + 1:016x}_{ref.number}" if index == renamed else ref.name] = end
    return plan


PORTS = len(UfmView(fat_tree(PRESETS["tiny"])).ports)


@settings(max_examples=30, deadline=None)
@given(st.frozensets(st.integers(0, PORTS - 1)))
def test_watched_is_each_planned_cables_ends_ufm_lists_at_its_rate_the_same_object_each_time(
        left_out: frozenset[int]) -> None:
    plan = named_plan(leave_out=left_out)
    view = build_view(plan, plan)
    watched = view.watched()
    assert view.watched() is watched
    names = {end: name for name, end in plan.port_names.items()}
    listed = [(names.get(cable.a), names.get(cable.b), cable) for cable in plan.cables]
    assert watched.ports == tuple(name for a, b, _ in listed for name in (a, b) if name is not None)
    assert dict(watched.rates) == {name: (cable.speed_gbps or 0.0) * 1e9 for a, b, cable in listed
                                   for name in (a, b) if name is not None}
    assert watched.cables == tuple((a, b) for a, b, _ in listed if a is not None and b is not None)


def test_what_the_view_keeps_cannot_be_changed_by_a_caller() -> None:
    plan = named_plan()
    view = build_view(plan, plan)
    rates = view.watched().rates
    with pytest.raises(TypeError):
        rates[next(iter(rates))] = 0.0  # type: ignore[index]
    assert view.watched().rates == build_view(plan, plan).watched().rates


def body(view: FabricView, at: datetime) -> bytes:
    """A sample of every watched port, its counters at zero."""
    time_us = int(at.timestamp() * 1_000_000)
    lines = [HEADER]
    for name in view.watched().ports:
        guid, number = name.split("_")
        lines.append(f"{time_us},0x{guid},0x{guid},{number},0,0,0,0,0,40")
    return ("\n".join(lines) + "\n").encode()


def test_the_feed_starts_its_history_again_only_when_a_new_view_watches_other_ports(
        caplog: pytest.LogCaptureFixture) -> None:
    plan, replaced, rebooting = named_plan(), named_plan(renamed=0), named_plan(leave_out=frozenset(range(8)))
    views = [build_view(plan, plan)] * 2 + [build_view(plan, plan), build_view(rebooting, rebooting),
                                            build_view(plan, plan), build_view(replaced, replaced)]
    bodies = [body(view, T0 + step * INTERVAL) for step, view in enumerate(views)]

    async def read() -> bytes:
        return bodies.pop(0)

    async def polls() -> list[bool]:
        feed = TelemetryFeed(read, TelemetrySettings(), "test", interval=INTERVAL)
        restarted: list[bool] = []
        for step, view in enumerate(views):
            caplog.clear()
            outcome, _ = await feed.poll(view, T0 + step * INTERVAL)
            assert outcome.outcome == "accepted", outcome.reason
            restarted.append(RESTARTED in caplog.text)
        return restarted

    with caplog.at_level(logging.INFO, logger="fabric.controller.telemetry"):
        # the first poll makes the window; the same view, one built again of the same ports, one that lost ports
        # for a while (a switch rebooting) and the one that lists them again keep it; a port renamed does not
        assert asyncio.run(polls()) == [False, False, False, False, False, True]
