"""What makes a telemetry sample a condition, and what makes a sample unusable: the thresholds, with defaults.

The defaults are NVIDIA's PDR plugin's (``MAX_PDR``, ``TMAX``, ``D_TMAX``) and the NDR link-validation procedure's
BER windows: 2.88 symbol errors in 12 minutes and 3 in 125 minutes at 400 Gb/s, which are a BER of 1e-14 and 1e-15.
The windows here are BERs, so the same thresholds hold at every speed and width a plan uses (the procedure's
counts scale with the link's rate; the PDR plugin checks NDR ports only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

__all__ = ["BerWindow", "TelemetrySettings"]


@dataclass(frozen=True, slots=True)
class BerWindow:
    """A bit error rate over a sliding window: symbol errors over the bits the port carried in it."""

    name: str
    """How records and reasons call it (``12min``)."""
    length: timedelta
    max_ber: float
    """A BER above this over the window is a condition."""
    resolution: timedelta
    """How far apart the window's history points may be, at most one per this span (``window.BerHistory``): the
    window measured spans between ``length`` and ``length`` plus a sample interval or this, whichever is larger.
    Memory is one array of the fabric's ports per point: ``length / resolution`` of them at any sample rate."""

    def __post_init__(self) -> None:
        if self.length <= timedelta(0) or self.resolution <= timedelta(0):
            raise ValueError(f"BER window {self.name}: its length and resolution must be positive")
        if not self.max_ber > 0:
            raise ValueError(f"BER window {self.name}: its threshold must be a positive BER")


def _default_windows() -> tuple[BerWindow, ...]:
    return (BerWindow("12min", timedelta(minutes=12), 1e-14, timedelta(minutes=1)),
            BerWindow("125min", timedelta(minutes=125), 1e-15, timedelta(minutes=5)))


@dataclass(frozen=True, slots=True)
class TelemetrySettings:
    max_pdr: float = 1e-12
    """Packet drop rate: (ΔPortRcvErrors + ΔPortRcvRemotePhysicalErrors) / ΔPortRcvPktsExtended above this is a
    condition, judged only when packets were received."""
    tmax: float = 70.0
    """A module above this temperature (°C) is a condition."""
    d_tmax: float = 10.0
    """A module whose temperature rose by more than this (°C) since the port's previous reading is a condition."""
    ber_windows: tuple[BerWindow, ...] = field(default_factory=_default_windows)
    partial_fraction: float = 0.2
    """A sample missing more than this fraction of the watched ports acts on nothing (the feed is failing)."""
    implausible_fraction: float = 1 / 3
    """A sample in which more than this fraction of the ports present cross a threshold acts on nothing: a third
    of a fabric does not fail at once; a counter or a reader went wrong."""

    @property
    def clean_after(self) -> timedelta:
        """How long after a given time a sample's longest BER window lies wholly after it: a sample accepted that
        long after a port came back judged its BER over a window of its own (none of it from before)."""
        return max((w.length + w.resolution for w in self.ber_windows), default=timedelta(0))

    def __post_init__(self) -> None:
        for name in ("partial_fraction", "implausible_fraction"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be a fraction between 0 and 1")
        names = [window.name for window in self.ber_windows]
        if len(set(names)) != len(names):
            raise ValueError(f"BER windows named twice: {names}")
