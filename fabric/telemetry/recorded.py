"""Recorded telemetry for replay: a directory of CSV files as UFM Telemetry serves them, one sample per file.

The files may have any names (hidden ones and subdirectories aside); they are ordered by their samples' time,
the newest ``timestamp`` of each (files of the same time by name: the window takes the second as stale). Listing
reads each file's timestamp column alone and keeps its time and path; a sample is parsed whole when it is loaded,
one at a time, so a week of samples is never held at once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from fabric.telemetry.body import DEFAULT_LIMITS, BodyLimits
from fabric.telemetry.errors import TelemetryInputError
from fabric.telemetry.parse import read_sample, sample_time
from fabric.telemetry.sample import Sample, instant

__all__ = ["RecordedSample", "recorded_samples"]


@dataclass(frozen=True, slots=True)
class RecordedSample:
    time_us: int
    path: Path

    @property
    def time(self) -> datetime:
        return instant(self.time_us)

    def load(self, limits: BodyLimits = DEFAULT_LIMITS) -> Sample:
        return read_sample(self.path, limits)


def recorded_samples(directory: str | os.PathLike[str], limits: BodyLimits = DEFAULT_LIMITS) -> list[RecordedSample]:
    """The samples in ``directory``, oldest first; ``TelemetryInputError`` naming the file, line and column of the
    first whose time cannot be read, or the directory when it holds none."""
    folder = Path(directory)
    try:
        files = sorted(entry for entry in folder.iterdir() if not entry.name.startswith(".") and entry.is_file())
    except OSError as exc:
        raise TelemetryInputError(f"cannot list the directory: {exc.strerror or exc}", source=str(folder)) from None
    if not files:
        raise TelemetryInputError("no telemetry sample in the directory", source=str(folder))
    found = [RecordedSample(sample_time(path, limits), path) for path in files]
    found.sort(key=lambda recorded: (recorded.time_us, recorded.path.name))
    return found
