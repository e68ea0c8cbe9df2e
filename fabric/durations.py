"""Durations as operators write them in config files, scenarios and commands: ``90s``, ``10m``, ``1h30m``, ``2d``."""

from __future__ import annotations

import math
import re
from datetime import timedelta

from fabric.errors import quoted

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"\s*(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
LONGEST = timedelta(days=3650)
"""No setting, silence or window means more than ten years; a longer one is a typo (and Python's ``timedelta``
overflows not far beyond)."""
CYCLE = timedelta(seconds=30)
"""The daemon's cycle unless ``[daemon] interval`` says otherwise, and so ``replay``'s step: here, where the command
line's help can read it without loading the configuration's machinery."""


def parse_duration(value: object) -> timedelta:
    """``"12h"``, ``"10m"``, ``"7s"``, ``"500ms"``, ``"2d"``, ``"1h30m"``, a number of seconds (``90``,
    ``"90"``, ``2.5``) or a ``timedelta``. Raises ``ValueError`` for anything else, negative values included."""
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, bool):
        raise ValueError(f"not a duration: {quoted(value)}")
    elif isinstance(value, int | float):
        try:
            seconds = float(value)
        except OverflowError:  # an integer with more digits than a float holds
            seconds = math.inf
        if not math.isfinite(seconds):
            raise ValueError(f"not a duration: {quoted(value)}")
    elif isinstance(value, str):
        seconds = _parse_duration_text(value)
    else:
        raise ValueError(f"not a duration: {quoted(value)}")
    if seconds < 0:
        raise ValueError(f"a duration cannot be negative: {quoted(value)}")
    if not seconds <= LONGEST.total_seconds():
        raise ValueError(f"not a duration: {quoted(value)} is longer than {LONGEST.days} days")
    return timedelta(seconds=seconds)


def _parse_duration_text(value: str) -> float:
    text = value.strip().lower()
    if text.startswith("-"):
        raise ValueError(f"a duration cannot be negative: {quoted(value)}")
    if _NUMBER.fullmatch(text):
        return float(text)
    total, position = 0.0, 0
    for match in _PART.finditer(text):
        if match.start() != position:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if not text or position != len(text):
        raise ValueError(f"not a duration: {quoted(value)} (write e.g. 90s, 10m, 12h, 1h30m, 2d or a number of "
                         "seconds)")
    return total


def format_duration(value: timedelta) -> str:
    """The shortest way to write ``value`` that :func:`parse_duration` reads back: ``12h``, ``1h30m``, ``2.5s``."""
    milliseconds = round(value.total_seconds() * 1000)
    if milliseconds == 0:
        return "0s"
    parts: list[str] = []
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000)):
        count, milliseconds = divmod(milliseconds, size)
        if count:
            parts.append(f"{count}{unit}")
    if milliseconds:
        parts.append(f"{milliseconds}ms" if milliseconds % 1000 else f"{milliseconds // 1000}s")
    return "".join(parts)
