"""UFM Telemetry on the largest preset: a sample of h100-32k parsed and judged, and the window's memory.

``python -m benchmarks.run telemetry`` (or ``python -m benchmarks.bench_telemetry [ROUNDS]``). Setup: every port
of h100-32k's plan (196,608: both ends of its 98,304 cables) as UFM names them (``UfmView``), their rates from
the plan's width and speed, the cables as pairs; written once by the parent to ``h100-32k-ports.npz``. Each
measurement runs in a child process of its own, which makes its samples as UFM Telemetry serves them (the PDR
plugin simulator's 14 columns; counters advancing with the clock, a few hundred ports with symbol errors and
drops, a few link-downs and hot modules; rows timestamped over 3 s) with pyarrow's CSV writer, in memory.

- **one sample, parsed and judged**: ``parse_sample`` on the body's bytes, then ``TelemetryWindow.observe``,
  timed per sample over ``ROUNDS`` samples after the first (the baseline); median against ``TARGET_S``.
- **the window's memory**: a 125-minute window filled, and 10 minutes more, at 300 s and at the shortest interval,
  60 s. Growth is the resident memory (``VmRSS``, read after each sample) at its highest, less what it was once the
  first sample was made, parsed and observed (numpy, pyarrow and the allocators' pools warm, the window's fixed
  arrays made): what the history adds, against ``MEMORY_TARGET_MIB``. The window's own arrays are counted too.
- **through the feed**: what the daemon does each interval, ``TelemetryFeed.poll(view, now)``, end to end: a real
  ``TelemetryClient`` fetching over loopback HTTP from a child serving the samples (``telemetry_server``: each made
  before it is asked for, never while a poll is timed), parsed and judged against the windows made from
  ``view.watched()``, the ``FabricView`` of h100-32k as the engine builds it (``build_view``, UFM's GUIDs and port
  names, ``UfmView``'s, set on the plan). The measuring child runs as the daemon does: the collector's policy
  applied once the view is built, freed memory given back after each poll (``fabric.daemon.gcpolicy``). Each
  poll is split into fetch, parse, judge, ``watched()``, the window made (a first poll's) and the rest (the
  watched ports compared with the last poll's) by timers wrapped around those functions in that child. Timed: ``ROUNDS``
  polls after the first; memory: the 125-minute window and 10 minutes more at 300 s, ``VmRSS`` after each poll.
- **the first poll through the feed**: the poll that makes the window (after the daemon starts, or once the
  fabric's ports change), reported apart from the steady polls: the timing child's first poll and
  ``FIRST_ROUNDS - 1`` more after its steady polls, each by a new ``TelemetryFeed`` on a new ``FabricView`` of the
  same fabric (``watched()`` not yet worked out), as after a restart, without the imports.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from benchmarks.measure import Measurement

if TYPE_CHECKING:
    from fabric.remediation.view import FabricView

PRESET = "h100-32k"
TARGET_S = 2.0
MEMORY_TARGET_MIB = 100.0
WINDOW_S = 125 * 60
ROUNDS = 7
FIRST_ROUNDS = 5
INTERVAL_S = 300
T0_US = 1_764_547_200_000_000
_COLUMNS = ("timestamp", "source_id", "tag", "Node_GUID", "port_guid", "Port_Number", "Symbol_Errors",
            "PortRcvPktsExtended", "PortRcvErrors", "PortRcvRemotePhysicalErrors", "Link_Down_IB",
            "Module_Temperature", "phy_symbol_errors", "fec_mode_active")


def prepare(workdir: Path) -> Path:
    """h100-32k's watched ports, their rates and cables, as arrays in a file (made once)."""
    import numpy as np

    from topology.formats.ufm_render import UfmView
    from topology.generate import PRESETS, fat_tree

    path = workdir / f"{PRESET}-ports.npz"
    if path.exists():
        return path
    fabric = fat_tree(PRESETS[PRESET])
    view = UfmView(fabric)
    slot = {end: index for index, end in enumerate(view.ports)}
    refs = list(view.ports.values())
    rates = np.zeros(len(refs))
    pairs = []
    for cable in fabric.cables:
        for end in (cable.a, cable.b):
            rates[slot[end]] = (cable.speed_gbps or 0) * 1e9
        pairs.append((slot[cable.a], slot[cable.b]))
    np.savez(path, guids=np.array([int(ref.guid, 16) for ref in refs], dtype=np.uint64),
             numbers=np.array([ref.number for ref in refs], dtype=np.uint16), rates=rates,
             cables=np.array(pairs, dtype=np.int64))
    return path


class Ports:
    """The watched ports, their rates and the cables, from ``prepare``'s file."""

    def __init__(self, path: Path) -> None:
        import numpy as np

        arrays = np.load(path)
        self.guids, self.numbers = arrays["guids"], arrays["numbers"]
        self.rates, self.cables = arrays["rates"], arrays["cables"]
        self.names = [f"{guid:016x}_{number}" for guid, number in zip(self.guids.tolist(), self.numbers.tolist(),
                                                                      strict=True)]

    def window(self) -> Any:
        from fabric.telemetry.window import TelemetryWindow

        pairs = [(self.names[a], self.names[b]) for a, b in self.cables.tolist()]
        return TelemetryWindow(self.names, rates=self.rates, cables=pairs)


class Feed:
    """Counters of every port, advanced a sample at a time and written as UFM Telemetry's CSV."""

    def __init__(self, ports: Ports) -> None:
        import numpy as np
        import pyarrow as pa

        self.rates = ports.rates
        size = len(ports.names)
        self._random = np.random.default_rng(22)
        guid_text = pa.array([f"0x{guid:016x}" for guid in ports.guids.tolist()])
        self._fixed = {"source_id": guid_text, "tag": pa.nulls(size, pa.string()), "Node_GUID": guid_text,
                       "port_guid": guid_text, "Port_Number": pa.array(ports.numbers),
                       "fec_mode_active": pa.array(np.zeros(size, dtype=np.int64))}
        self.counters = {name: np.zeros(size, dtype=np.uint64) for name in (*_COLUMNS[6:11], "phy_symbol_errors")}
        self.counters["PortRcvPktsExtended"] += np.uint64(10**12)
        self._degrees = self._random.integers(35, 58, size)

    def body(self, time_us: int, interval_s: float) -> bytes:
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pacsv

        size = len(self.rates)
        draw = self._random
        self.counters["PortRcvPktsExtended"] += (self.rates * interval_s / 8 / 4096 * 0.3).astype(np.uint64)
        for name, ports, most in (("Symbol_Errors", 300, 20), ("PortRcvErrors", 100, 5),
                                  ("Link_Down_IB", 10, 1), ("phy_symbol_errors", size, 1000)):
            chosen = draw.choice(size, ports, replace=False)
            self.counters[name][chosen] += draw.integers(1, most + 1, ports, dtype=np.uint64)
        degrees = self._degrees + draw.integers(-1, 2, size)
        degrees[draw.choice(size, 20, replace=False)] = 72
        columns = dict(self._fixed)
        columns["timestamp"] = pa.array(time_us - draw.integers(0, 3_000_000, size))
        columns["Module_Temperature"] = pc.cast(pa.array(degrees), pa.string())
        for name, values in self.counters.items():
            columns[name] = pa.array(values)
        sink = pa.BufferOutputStream()
        pacsv.write_csv(pa.table({name: columns[name] for name in _COLUMNS}), sink,
                        pacsv.WriteOptions(quoting_style="none"))
        return bytes(sink.getvalue())


def child_feed(path: Path, interval_s: int, samples: int) -> None:
    """Write ``samples`` bodies to the standard output, each after its length (8 bytes): the measured process
    receives bytes, as from UFM, and makes none of them."""
    feed = Feed(Ports(path))
    out = sys.stdout.buffer
    for step in range(samples):
        body = feed.body(T0_US + step * interval_s * 1_000_000, interval_s)
        out.write(len(body).to_bytes(8, "little"))
        out.write(body)
        out.flush()


def _received() -> Iterator[bytes]:
    source = sys.stdin.buffer
    while size := source.read(8):
        yield source.read(int.from_bytes(size, "little"))


def _rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def child_time(ports: Path, rounds: int) -> dict[str, Any]:
    """Parse and judge ``rounds`` samples after the first, each timed."""
    from fabric.telemetry.parse import parse_sample

    watched = Ports(ports)
    feed = Feed(watched)
    window = watched.window()
    report: dict[str, Any] = {"ports": len(watched.names), "parse": [], "observe": [], "conditions": [], "bytes": 0}
    for step in range(rounds + 1):
        body = feed.body(T0_US + step * 300_000_000, 300)
        started = time.perf_counter()
        sample = parse_sample(body, "bench")
        parsed = time.perf_counter()
        verdict = window.observe(sample)
        done = time.perf_counter()
        if step:
            report["parse"].append(parsed - started)
            report["observe"].append(done - parsed)
            report["conditions"].append(len(verdict.conditions))
        report["bytes"] = len(body)
        report["verdict"] = verdict.verdict.value
    report["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return report


def child_memory(ports: Path) -> dict[str, Any]:
    """Observe the samples arriving on the standard input (``child_feed``'s): resident memory after each."""
    from fabric.telemetry.parse import parse_sample

    start_mib = _rss_mib()
    watched = Ports(ports)
    window = watched.window()
    made_mib = _rss_mib()
    rss: list[float] = []
    for body in _received():
        verdict = window.observe(parse_sample(body, "bench"))
        del body
        rss.append(_rss_mib())
    history_mib = sum(history._increments.nbytes + history._read.nbytes + history._counted.nbytes
                      for history in window._histories) / 2**20
    counters = window._counters
    state_mib = sum(array.nbytes for array in (*counters.last.values(), counters.row_time_us, counters.seen,
                                               counters.temperature, counters.errors)) / 2**20
    return {"samples": len(rss), "start_mib": start_mib, "window_made_mib": made_mib, "after_first_mib": rss[0],
            "peak_mib": max(rss), "growth_mib": max(rss) - rss[0], "end_mib": rss[-1], "rss_mib": rss,
            "history_mib": history_mib, "points": [len(history) for history in window._histories],
            "state_mib": state_mib, "verdict": verdict.verdict.value,
            "hwm_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def child_serve(path: Path, samples: int) -> None:
    """UFM Telemetry on loopback: ``samples`` samples a ``INTERVAL_S`` apart, announced on the standard output."""
    from benchmarks.telemetry_server import serve

    feed = Feed(Ports(path))
    serve((feed.body(T0_US + step * INTERVAL_S * 1_000_000, INTERVAL_S) for step in range(samples)), sys.stdout)


def engine_view() -> FabricView:
    """h100-32k's ``FabricView`` as the engine builds it from the plan and UFM's reading (its GUIDs and port names:
    ``UfmView``'s, the ones the samples carry, set on the plan, which then stands for UFM's reading too)."""
    from fabric.remediation.view import build_view
    from topology.formats.ufm_render import named_as_ufm
    from topology.generate import PRESETS, fat_tree

    plan = fat_tree(PRESETS[PRESET])
    named_as_ufm(plan)  # what UFM reports of the plan, joined with it as the engine does
    return build_view(plan, plan)


class Phases:
    """Seconds of one poll spent in each production function named, by timers wrapped around them (in the
    measuring child only): ``fetch`` the feed's read, then whatever ``wrap`` adds."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def _add(self, name: str, started: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started

    def wrap(self, owner: object, attribute: str, name: str) -> None:
        function = getattr(owner, attribute)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self._add(name, started)

        setattr(owner, attribute, timed)

    def fetch(self, read: Callable[[], Awaitable[bytes]]) -> Callable[[], Awaitable[bytes]]:
        async def timed() -> bytes:
            started = time.perf_counter()
            try:
                return await read()
            finally:
                self._add("fetch", started)

        return timed

    def split(self, total: float) -> dict[str, float]:
        """This poll's phases and ``total``, the rest as ``other``; the next poll starts from nothing."""
        found, self.seconds = self.seconds, {}
        return found | {"other": total - sum(found.values()), "total": total}


def child_polls(samples: int, firsts: int) -> dict[str, Any]:
    """Poll ``samples`` samples through ``TelemetryFeed``, then ``firsts - 1`` first polls, from the server
    announced on the standard input."""
    import asyncio

    from fabric.daemon.gcpolicy import apply_gc_policy

    view = engine_view()
    apply_gc_policy()
    return asyncio.run(_polls(view, samples, firsts, sys.stdin))


async def _polls(view: FabricView, samples: int, firsts: int, announcements: IO[str]) -> dict[str, Any]:
    import fabric.telemetry.parse
    from fabric.controller.telemetry import TelemetryFeed
    from fabric.daemon.gcpolicy import release_freed_memory
    from fabric.remediation.view import FabricView
    from fabric.telemetry.settings import TelemetrySettings
    from fabric.telemetry.window import TelemetryWindow
    from fabric.ufm.telemetry import TelemetryClient

    phases = Phases()
    phases.wrap(fabric.telemetry.parse, "parse_sample", "parse")
    phases.wrap(TelemetryWindow, "observe", "judge")
    phases.wrap(TelemetryWindow, "__init__", "window")
    phases.wrap(FabricView, "watched", "watched")
    port = int(announcements.readline().split()[1])
    client = TelemetryClient(f"http://127.0.0.1:{port}")

    def new_feed() -> TelemetryFeed:
        return TelemetryFeed(phases.fetch(client.sample), TelemetrySettings(), client.url + client.path,
                             interval=timedelta(seconds=INTERVAL_S))

    async def timed_poll(feed: TelemetryFeed, polled: FabricView, step: int) -> dict[str, float]:
        if announcements.readline().strip() != "ready":
            raise RuntimeError("the telemetry server stopped before its last sample")
        now = datetime.fromtimestamp(T0_US / 1e6 + step * INTERVAL_S, UTC)
        started = time.perf_counter()
        outcome, _ = await feed.poll(polled, now)
        split = phases.split(time.perf_counter() - started)
        report["outcomes"].append(outcome.outcome)
        report["conditions"].append(outcome.conditions)
        release_freed_memory()
        return split

    report: dict[str, Any] = {"ports": len(view.resolver.ports), "polls": [], "outcomes": [], "conditions": [],
                              "rss_mib": [], "view_mib": _rss_mib()}
    feed = new_feed()
    for step in range(samples):
        report["polls"].append(await timed_poll(feed, view, step))
        report["rss_mib"].append(_rss_mib())
    rss = report["rss_mib"]
    report |= {"growth_mib": max(rss) - rss[0], "peak_mib": max(rss),
               "hwm_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    del feed  # its window goes before the next is made, as when the daemon restarts
    report["firsts"] = report["polls"][:1]
    for step in range(samples, samples + firsts - 1):  # a fabric built anew: watched() not worked out yet
        report["firsts"].append(await timed_poll(new_feed(), dataclasses.replace(view), step))
    await client.aclose()
    return report


def _through_feed(ports: Path, samples: int, firsts: int = 1) -> dict[str, Any]:
    """``samples`` polls by one child, then ``firsts - 1`` first polls, of samples served by another."""
    command = [sys.executable, "-m", "benchmarks.bench_telemetry", "--child"]
    served = str(samples + firsts - 1)
    with subprocess.Popen([*command, "serve", str(ports), served], stdout=subprocess.PIPE) as server:
        measured = subprocess.run([*command, "polls", str(ports), str(samples), str(firsts)], stdin=server.stdout,
                                  capture_output=True, text=True, check=False)
        if measured.returncode:
            server.kill()
    if measured.returncode or server.returncode:
        raise RuntimeError(f"bench_telemetry through the feed: {measured.stderr[-800:]}")
    report: dict[str, Any] = json.loads(measured.stdout.strip().splitlines()[-1])
    return report


def _memory(ports: Path, interval_s: int) -> dict[str, Any]:
    """A 125-minute window and 10 minutes more at ``interval_s``, made by one child and observed by another."""
    samples = (WINDOW_S + 600) // interval_s + 1
    command = [sys.executable, "-m", "benchmarks.bench_telemetry", "--child"]
    with subprocess.Popen([*command, "feed", str(ports), str(interval_s), str(samples)],
                          stdout=subprocess.PIPE) as feed:
        measured = subprocess.run([*command, "memory", str(ports), "0"], stdin=feed.stdout, capture_output=True,
                                  text=True, check=False)
    if measured.returncode or feed.returncode:
        raise RuntimeError(f"bench_telemetry memory at {interval_s} s: {measured.stderr[-800:]}")
    report: dict[str, Any] = json.loads(measured.stdout.strip().splitlines()[-1])
    return report | {"interval_s": interval_s}


def _child(*argv: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "benchmarks.bench_telemetry", "--child", *argv],
                          capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"bench_telemetry {' '.join(argv)}: exit {done.returncode}: {done.stderr[-800:]}")
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def run(workdir: Path, rounds: int = ROUNDS) -> list[Measurement]:
    ports = prepare(workdir)
    timed = _child("time", str(ports), str(rounds))
    runs = [p + o for p, o in zip(timed["parse"], timed["observe"], strict=True)]
    found = [Measurement(
        f"telemetry: one {PRESET} sample ({timed['ports']:,} ports, {timed['bytes'] / 2**20:.0f} MiB of CSV) parsed "
        "and judged", runs, timed["peak_mib"], TARGET_S,
        note=f"parse median {statistics.median(timed['parse']):.3f} s, judge {statistics.median(timed['observe']):.3f}"
             f" s; {statistics.median(timed['conditions']):.0f} conditions a sample; the samples made in the child",
        output=json.dumps(timed))]
    found.extend(_feed_measurements(ports, rounds))
    for interval_s in (300, 60):
        started = time.perf_counter()
        memory = _memory(ports, interval_s)
        found.append(Measurement(
            f"telemetry: RSS growth over a 125-minute window of {PRESET} samples every {interval_s} s",
            [time.perf_counter() - started], memory["peak_mib"],
            note=f"+{memory['growth_mib']:.0f} MiB after the first sample (target at most {MEMORY_TARGET_MIB:g}); "
                 f"history {memory['points']} points, {memory['history_mib']:.0f} MiB; per-port state "
                 f"{memory['state_mib']:.0f} MiB; {memory['samples']} samples",
            met=memory["growth_mib"] <= MEMORY_TARGET_MIB, output=json.dumps(memory)))
    return found


def _phase_medians(polls: list[dict[str, float]]) -> str:
    return ", ".join(f"{name} {statistics.median(poll.get(name, 0.0) for poll in polls):.3f}"
                     for name in ("fetch", "parse", "judge", "watched", "window", "other"))


def _feed_measurements(ports: Path, rounds: int) -> list[Measurement]:
    timed = _through_feed(ports, rounds + 1, FIRST_ROUNDS)
    firsts, polls = timed["firsts"], timed["polls"][1:]
    found = [Measurement(
        f"telemetry: one {PRESET} sample through TelemetryFeed.poll (loopback HTTP fetch, parse, judge)",
        [poll["total"] for poll in polls], timed["hwm_mib"], TARGET_S,
        note=f"steady polls, medians (s): {_phase_medians(polls)}; "
             f"{', '.join(sorted(set(timed['outcomes'])))}, {statistics.median(timed['conditions'][1:]):.0f} "
             "conditions a sample", output=json.dumps(timed)),
        Measurement(
        f"telemetry: the first {PRESET} poll through TelemetryFeed.poll (the window made, watched() worked out)",
        [poll["total"] for poll in firsts], timed["hwm_mib"], TARGET_S,
        note=f"medians (s): {_phase_medians(firsts)}; steady polls {statistics.median(p['total'] for p in polls):.3f}"
             f" s; a new feed on a new view of the same fabric each", output=json.dumps(timed))]
    started = time.perf_counter()
    memory = _through_feed(ports, (WINDOW_S + 600) // INTERVAL_S + 1)
    found.append(Measurement(
        f"telemetry: RSS growth over a 125-minute window of {PRESET} samples every {INTERVAL_S} s through "
        "TelemetryFeed.poll", [time.perf_counter() - started], memory["hwm_mib"],
        note=f"+{memory['growth_mib']:.0f} MiB after the first poll (target at most {MEMORY_TARGET_MIB:g}); "
             f"{memory['rss_mib'][0]:.0f} MiB then ({memory['view_mib']:.0f} with the view built), peak "
             f"{memory['peak_mib']:.0f}; {len(memory['polls'])} polls, median {_phase_medians(memory['polls'][1:])}",
        met=memory["growth_mib"] <= MEMORY_TARGET_MIB, output=json.dumps(memory)))
    return found


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        mode, ports, value = argv[1], Path(argv[2]), int(argv[3])
        if mode == "feed":
            child_feed(ports, value, int(argv[4]))
        elif mode == "serve":
            child_serve(ports, value)
        elif mode == "polls":
            print(json.dumps(child_polls(value, int(argv[4]))))
        else:
            print(json.dumps(child_time(ports, value) if mode == "time" else child_memory(ports)))
        return 0
    workdir = Path("out/bench-telemetry")
    workdir.mkdir(parents=True, exist_ok=True)
    for measurement in run(workdir, int(argv[0]) if argv else ROUNDS):
        print(f"{measurement.name}: median {measurement.median_s:.3f} s (runs "
              f"{', '.join(f'{r:.3f}' for r in measurement.runs)}), peak RSS {measurement.peak_rss_mib:.0f} MiB, "
              f"{measurement.verdict or '-'}; {measurement.note}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
