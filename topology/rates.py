"""Link width and speed as UFM, ibnetdiscover and wiring plans write them.

A link's rate is lanes x per-lane rate. Plans give either a width, a speed name (``NDR``), or a total in
Mb/s or Gb/s (``200000``, ``400G``); the as-built side gives a width (``4x``, ``IB_4x``) and a speed name.
A width above ``MAX_LANES`` or a total above ``MAX_LINK_GBPS`` (or of zero) is not a rate: it reads as None.
"""

from __future__ import annotations

import re

from topology.readcaches import read_cache

# Per-lane data rate in Gb/s, by InfiniBand generation.
LANE_GBPS: dict[str, float] = {
    "SDR": 2.5,
    "DDR": 5.0,
    "QDR": 10.0,
    "FDR10": 10.0,
    "FDR": 14.0,
    "EDR": 25.0,
    "HDR": 50.0,
    "NDR": 100.0,
    "XDR": 200.0,
}
DEFAULT_LANES = 4
MAX_LANES = 12
"""The widest InfiniBand link (1x, 2x, 4x, 8x or 12x)."""
MAX_LINK_GBPS = MAX_LANES * max(LANE_GBPS.values())
NOT_GIVEN = frozenset({"", "n/a", "na", "none", "unknown"})
"""What sources write for a width or speed they do not know (case-folded)."""

_WIDTH = re.compile(r"^(?:ib_)?(\d+)x$", re.IGNORECASE)
_TOTAL = re.compile(r"^(\d+(?:\.\d+)?)\s*(g|gb|gbps|gb/s|m|mb|mbps|mb/s)?$", re.IGNORECASE)
_WIDTH_SPEED = re.compile(r"^(\d+)x([a-z0-9]+)$", re.IGNORECASE)


@read_cache(maxsize=256)
def parse_width(text: str | int | None) -> int | None:
    """Lanes from ``4x``, ``IB_4x``, ``4`` or 4; None when absent or unreadable."""
    if text is None:
        return None
    if isinstance(text, int):
        return text if 0 < text <= MAX_LANES else None
    value = text.strip()
    if value.isdecimal():
        return _lanes(value)
    m = _WIDTH.match(value)
    return _lanes(m.group(1)) if m else None


def _lanes(digits: str) -> int | None:
    significant = digits.lstrip("0")
    lanes = int(significant) if 0 < len(significant) <= 2 else 0
    return lanes if 0 < lanes <= MAX_LANES else None


@read_cache(maxsize=64)
def lane_gbps(speed: str | None) -> float | None:
    if not speed:
        return None
    return LANE_GBPS.get(speed.strip().upper())


@read_cache(maxsize=256)
def parse_total_gbps(text: str | None, lanes: int | None = None) -> float | None:
    """Total link rate in Gb/s from ``NDR``, ``400G``, ``400``, ``200000`` (Mb/s) or ``200G HDR cable``."""
    if not text:
        return None
    value = text.strip()
    for word in value.replace("_", " ").split():
        if (rate := lane_gbps(word)) is not None:
            return rate * (lanes or DEFAULT_LANES)
    m = _TOTAL.match(value.split(maxsplit=1)[0]) if value else None
    if not m:
        return None
    number = float(m.group(1))
    unit = (m.group(2) or "").lower()
    if unit.startswith("m") or (not unit and number >= 10_000):
        number /= 1000.0
    return number if 0 < number <= MAX_LINK_GBPS else None


def parse_width_speed(text: str) -> tuple[int | None, float | None]:
    """ibnetdiscover's ``4xHDR`` -> (4, 200.0); (None, None) when it is not a width (``99xHDR`` included)."""
    m = _WIDTH_SPEED.match(text.strip())
    lanes = _lanes(m.group(1)) if m else None
    if m is None or lanes is None:
        return None, None
    rate = lane_gbps(m.group(2))
    return lanes, rate * lanes if rate is not None else None
