"""What judging a telemetry sample yields: conditions found on ports, and the sample's verdict."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import NamedTuple

__all__ = ["ConditionKind", "SampleVerdict", "TelemetryCondition", "Verdict"]


class ConditionKind(StrEnum):
    BER = "ber"
    """Symbol errors over a BER window above its threshold; ``figures["window_s"]`` says which window."""
    PACKET_DROPS = "packet_drops"
    LINK_DOWN_BOTH_ENDS = "link_down_both_ends"
    """LinkDownedCounter moved on both ends of a planned cable within one sample interval."""
    MODULE_TEMPERATURE = "module_temperature"
    TEMPERATURE_RISE = "temperature_rise"


class TelemetryCondition(NamedTuple):
    """One condition found in one sample. It is reported on every sample in which it holds, with that sample's
    figures: a condition that stays true is evidence again each sample, as a UFM event raised again is."""

    kind: ConditionKind
    ports: tuple[str, ...]
    """UFM port names (``<guid>_<n>``): one, or both ends of the cable for ``LINK_DOWN_BOTH_ENDS``."""
    time: datetime
    """The sample's time (UTC): its newest row's."""
    figures: Mapping[str, float]
    """The numbers behind it (the BER and its threshold, the window, the deltas), for logs and tickets."""
    reason: str
    """One line an operator understands."""


class Verdict(StrEnum):
    ACCEPTED = "accepted"
    STALE = "stale"
    """The sample's time did not move since the last sample: nothing new was read."""
    PARTIAL = "partial"
    """More than ``partial_fraction`` of the watched ports are missing from it (or not read again)."""
    IMPLAUSIBLE = "implausible"
    """More than ``implausible_fraction`` of the ports present crossed a threshold at once."""


@dataclass(frozen=True, slots=True)
class SampleVerdict:
    """What became of one sample: its conditions when accepted, none and why not otherwise (for the log, a
    metric and ``/status``)."""

    verdict: Verdict
    time: datetime
    conditions: tuple[TelemetryCondition, ...]
    reason: str
    """One line: what was judged, or why the sample acts on nothing."""
    watched: int
    """Ports the window watches (the planned ports)."""
    fresh: int
    """Watched ports read anew in this sample."""
    unknown: int
    """Rows of ports the window does not watch (ignored)."""
    crossing: int
    """Ports that crossed a threshold (before the gate: for an implausible sample, how many)."""
    since: datetime | None = None
    """The previous sample's time: the conditions are of what happened after it, up to ``time`` (``None`` for the
    first sample, which has no interval and no condition)."""
