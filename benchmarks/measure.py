"""Wall time and peak memory of a whole command, as an operator would experience it, or of a call in this process."""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Measurement:
    name: str
    runs: list[float]
    peak_rss_mib: float
    target_s: float | None = None
    note: str = ""
    output: str = ""
    """What the last run printed (children that time their own phases print them)."""
    met: bool | None = None
    """A target that is not a time (memory that stays flat): met or not."""

    @property
    def median_s(self) -> float:
        return statistics.median(self.runs)

    @property
    def verdict(self) -> str:
        if self.met is not None:
            return "ok" if self.met else "MISSED"
        if self.target_s is None:
            return ""
        return "ok" if self.median_s < self.target_s else "MISSED"


def run_command(name: str, argv: list[str], *, repeat: int = 3, target_s: float | None = None,
                expect_codes: tuple[int, ...] = (0,), note: str = "",
                env: dict[str, str] | None = None) -> Measurement:
    """Run ``argv`` ``repeat`` times; wall time per run and the largest peak RSS of any run. ``env``: variables
    added to ours for the command."""
    runs: list[float] = []
    peak_kib = 0
    for _ in range(repeat):
        start = time.perf_counter()
        with tempfile.TemporaryFile() as out, subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE,
                                                                    env={**os.environ, **(env or {})}) as child:
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            stderr = child.stderr.read().decode() if child.stderr else ""
            out.seek(0)
            output = out.read().decode(errors="replace")
        runs.append(time.perf_counter() - start)
        peak_kib = max(peak_kib, usage.ru_maxrss)
        if child.returncode not in expect_codes:
            raise RuntimeError(f"{name}: exit {child.returncode}: {stderr[-500:]}")
    return Measurement(name, runs, peak_kib / 1024, target_s, note, output)


def run_callable(name: str, work: Callable[[], object], *, repeat: int = 5, target_s: float | None = None,
                 note: str = "") -> Measurement:
    """Call ``work`` ``repeat`` times in this process; wall time per call, and this process's peak RSS so far."""
    runs: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        runs.append(time.perf_counter() - start)
    return Measurement(name, runs, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, target_s, note)


def side_by_side(title: str, baseline: str, rows: Sequence[tuple[str, Sequence[float], Sequence[float], str]],
                 digits: int = 1) -> str:
    """A Markdown table of medians, this checkout's against ``baseline``'s, and their ratios; a row is its label,
    this checkout's figures, the baseline's and their unit."""
    lines = [f"| {title} | this checkout | {baseline} | ratio |", "|---|---|---|---|"]
    for label, ours, theirs, unit in rows:
        mine, their = statistics.median(ours), statistics.median(theirs)
        lines.append(f"| {label} | {mine:.{digits}f}{unit} | {their:.{digits}f}{unit} | {mine / their:.2f} |")
    return "\n".join(lines)
