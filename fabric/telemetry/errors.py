"""The one error of unusable telemetry."""

from __future__ import annotations

from topology.errors import InputError

__all__ = ["TelemetryInputError"]


class TelemetryInputError(InputError):
    """A telemetry sample that cannot be used: its ``str`` is one line naming the source (a URL or file), the line
    and the column (or, with no line, the field). ``fabric.errors.as_fabric_error`` adopts it as bad input (exit 2
    for a command); the daemon logs it, counts it and skips the sample."""
