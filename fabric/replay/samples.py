"""Recorded UFM Telemetry for ``fabricctl replay --telemetry DIR``: samples judged as the virtual clock reaches
them, beside the event log.

The directory holds CSV files as UFM Telemetry serves them, one sample per file, any names: they are taken in the
order of their ``timestamp`` column (``fabric.telemetry.recorded``), each parsed and judged by a window over the
replayed fabric's ports (``FabricView.watched``) when the clock steps past its time, so a week of samples is
never held at once. A file that is not UFM Telemetry's CSV stops the replay with an ``InputError`` naming the file,
line and column: a replay answers what the daemon would have done with these samples, and it cannot say so of a
sample it cannot read.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from fabric.remediation.view import FabricView
from fabric.telemetry.records import SampleVerdict
from fabric.telemetry.settings import TelemetrySettings


class RecordedTelemetry:
    def __init__(self, directory: Path, view: FabricView, settings: TelemetrySettings | None = None) -> None:
        """``TelemetryInputError`` when the directory holds no sample or a file's time cannot be read."""
        from fabric.telemetry.recorded import recorded_samples
        from fabric.telemetry.window import TelemetryWindow

        self.source = str(directory)
        self._recorded = recorded_samples(directory)
        watched = view.watched()
        self._window = TelemetryWindow(watched.ports, rates=watched.rates, cables=watched.cables, settings=settings)
        self._taken = 0
        self.verdicts: Counter[str] = Counter()
        self.conditions = 0
        self.first: datetime | None = None
        self.last: datetime | None = None

    @property
    def next_time(self) -> datetime | None:
        """The time of the next sample not taken yet (``None``: all were)."""
        return self._recorded[self._taken].time if self._taken < len(self._recorded) else None

    def take(self, at: datetime) -> list[SampleVerdict]:
        """The samples of time up to ``at`` not taken yet, judged in time order."""
        judged: list[SampleVerdict] = []
        while (upcoming := self.next_time) is not None and upcoming <= at:
            verdict = self._window.observe(self._recorded[self._taken].load())
            self._taken += 1
            self.verdicts[verdict.verdict.value] += 1
            self.conditions += len(verdict.conditions)
            self.first = self.first or verdict.time
            self.last = verdict.time
            judged.append(verdict)
        return judged

    def summary(self) -> dict[str, Any]:
        return {"directory": self.source, "samples": self._taken, "verdicts": dict(sorted(self.verdicts.items())),
                "conditions": self.conditions, "first_sample": self.first.isoformat() if self.first else None,
                "last_sample": self.last.isoformat() if self.last else None}
