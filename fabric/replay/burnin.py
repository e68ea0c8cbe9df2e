"""A burn-in window watched on a live UFM (``fabricctl burnin watch``), judged as the daemon's policy would judge it.

At the window's start: UFM's topology (the planned cables not up then are ``down``: never loaded), the event cursor
primed on UFM's history, and a UFM Telemetry sample when a feed is given. At its end: the events raised since and a
second sample. The events go through the engine's own pipeline on a virtual clock (``fabric.replay.run.replay``,
dry): signals, the detectors with ``[burnin]``'s stricter thresholds, correlation, and ``decide`` with the
configuration's guard, cap and breaker, so the decisions are the ones the daemon would take, not those of a second
rule engine. The samples tell the ports that carried no traffic (received packets grew by less than
``min_packets``), the events those that crossed UFM's utilisation alert; ``fabric.remediation.burnin.survivors``
makes the report.

Always dry: nothing is written to UFM or a ticket system. The running daemon acts on a window of its own
(``POST /api/v1/burnin``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from fabric.config import ServiceConfig
from fabric.remediation.burnin import (
    Decided,
    PortReport,
    SwitchReport,
    WindowFacts,
    failures_decided,
    idle_ends,
    survivors,
)
from fabric.remediation.domain import ActionKind, ComponentId
from fabric.remediation.view import FabricView, build_view
from fabric.replay.events import BY_TIME, LoadedEvents
from fabric.replay.run import ReplayModel, replay
from fabric.ufm.client import UfmClient
from fabric.ufm.cursor import EventCursor
from fabric.ufm.snapshot import read_topology, spooled_topology
from topology.guard import CableKey
from topology.model import End, Fabric

SOURCE = "UFM"


@dataclass(frozen=True, slots=True)
class WindowReport:
    started: datetime
    ended: datetime
    events: int
    """UFM events raised during the window."""
    telemetry: bool
    """Whether UFM Telemetry's samples told which ports carried traffic."""
    ports: list[PortReport]
    switches: list[SwitchReport]
    decisions: list[dict[str, Any]]
    """The policy's decisions on the window (``fabricctl replay``'s entries), in the order they were taken."""


async def watch_window(ufm: UfmClient, plan: Fabric, config: ServiceConfig, duration: timedelta, *,
                       telemetry: Callable[[], Awaitable[bytes]] | None = None,
                       wait: Callable[[float], Awaitable[None]] = asyncio.sleep,
                       opened: Callable[[datetime, datetime], None] | None = None) -> WindowReport:
    """Watch ``duration`` of UFM (see the module docstring); ``opened`` is told when the window opens and when it
    will close, once UFM's history is behind the cursor. Raises ``UfmError`` and ``TelemetryInputError``."""
    from fabric.telemetry.parse import parse_sample

    view, down = await _read_view(ufm, plan)
    cursor = EventCursor()
    cursor.prime(await ufm.events())
    first = parse_sample(await telemetry(), "UFM Telemetry") if telemetry is not None else None
    started = datetime.now(UTC)
    if opened is not None:
        opened(started, started + duration)
    await wait(duration.total_seconds())
    events = cursor.advance(await ufm.events())
    last = parse_sample(await telemetry(), "UFM Telemetry") if telemetry is not None else None
    ended = datetime.now(UTC)
    burnin = config.burnin.build()
    idle: frozenset[End] = frozenset()
    if first is not None and last is not None:
        idle = idle_ends(view.resolver.ports, first.received_packets(), last.received_packets(), burnin.min_packets)
    alerted = frozenset(end for event in events if event.event_id in burnin.utilisation_events
                        and (end := view.resolver.ports.get(event.object_name or "")) is not None)
    judged = replay(ReplayModel(plan, view, SOURCE, down),
                    LoadedEvents(SOURCE, "json", sorted(events, key=BY_TIME), records=len(events)),
                    policy=burnin.strict_policy(config.policy_config()), rules=burnin.strict(config.rule_settings()),
                    guard=config.guard_settings(), interval=config.daemon.interval)
    entries = list(judged.decision_entries())
    ports, switches = survivors(plan, view.context, failures_decided(_decided(entries)),
                                WindowFacts(down, idle, alerted))
    return WindowReport(started, ended, len(events), telemetry is not None, ports, switches, entries)


async def _read_view(ufm: UfmClient, plan: Fabric) -> tuple[FabricView, frozenset[CableKey]]:
    """The plan joined with UFM's GUIDs and port names, and the planned cables UFM does not show up."""
    async with spooled_topology(ufm) as lists:
        actual = read_topology(lists, SOURCE).fabric
    view = build_view(plan, actual)
    return view, frozenset(view.plan_keys - view.live_cables(actual))


def _decided(entries: Iterable[dict[str, Any]]) -> list[Decided]:
    return [Decided(ComponentId.parse(entry["component"]), ActionKind(entry["action"]), entry["rule"],
                    entry["reason"]) for entry in entries if "component" in entry]
