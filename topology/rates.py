"""Link width and speed as UFM, ibnetdiscover and wiring plans write them.

A link's rate is lanes x per-lane rate. Plans give either a width, a speed name (``NDR``), or a total in
Mb/s or Gb/s (``200000``, ``400G``); the as-built side gives a width (``4x``, ``IB_4x``) and a speed name.
"""

from __future__ import annotations

import re
from functools import lru_cache

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

_WIDTH = re.compile(r"^(?:ib_)?(\d+)x$", re.IGNORECASE)
_TOTAL = re.compile(r"^(\d+(?:\.\d+)?)\s*(g|gb|gbps|gb/s|m|mb|mbps|mb/s)?$", re.IGNORECASE)
_WIDTH_SPEED = re.compile(r"^(\d+)x([a-z0-9]+)$", re.IGNORECASE)


@lru_cache(maxsize=256)
def parse_width(text: str | int | None) -> int | None:
    """Lanes from ``4x``, ``IB_4x``, ``4`` or 4; None when absent or unreadable."""
    if text is None:
        return None
    if isinstance(text, int):
        return text if text > 0 else None
    value = text.strip()
    if value.isdigit():
        return int(value) or None
    m = _WIDTH.match(value)
    return int(m.group(1)) if m else None


def lane_gbps(speed: str | None) -> float | None:
    if not speed:
        return None
    return LANE_GBPS.get(speed.strip().upper())


@lru_cache(maxsize=256)
def parse_total_gbps(text: str | None, lanes: int | None = None) -> float | None:
    """Total link rate in Gb/s from ``NDR``, ``400G``, ``400``, ``200000`` (Mb/s) or ``200G HDR cable``."""
    if not text:
        return None
    value = text.strip()
    for word in value.replace("_", " ").split():
        if (rate := lane_gbps(word)) is not None:
            return rate * (lanes or DEFAULT_LANES)
    first = value.split()[0]
    m = _TOTAL.match(first)
    if not m:
        return None
    number = float(m.group(1))
    unit = (m.group(2) or "").lower()
    if unit.startswith("m") or (not unit and number >= 10_000):
        return number / 1000.0
    return number


def parse_width_speed(text: str) -> tuple[int | None, float | None]:
    """ibnetdiscover's ``4xHDR`` -> (4, 200.0)."""
    m = _WIDTH_SPEED.match(text.strip())
    if not m:
        return None, None
    lanes = int(m.group(1))
    rate = lane_gbps(m.group(2))
    return lanes, rate * lanes if rate is not None else None
