"""The decision pipeline in-process: a 100,000-event storm through ``Pipeline.step``, and the capacity guard.

Setup (not timed): the simulator's storm generator (``fabric.simulator.faults.Storm``, as in
``examples/scenarios/event-storm.toml``: 100,000 threshold events 110/111/112/113 on random ports of h100-4k
over ten minutes, in 100 batches) records its events; they are saved as the JSON list ``GET /app/events``
answers (UFM 6.17+ shape), grouped by the 60 s cycle that would first see them. Each measurement runs in a
child process that builds the model and the pipeline, then goes through the cycles: a cycle's events are parsed
into ``Event`` objects just before its step (not timed) and dropped after it, as a daemon does; only the steps
are timed:

- ``pipeline``: ``Pipeline.step`` once per 60 s boundary of event time, exactly as the engine and replay call
  it (signals -> detectors -> ``decide``, default rules, guard and policy), with the cyclic garbage collector
  on, as in a daemon; the time its collections took inside the timed part is reported alongside;
- ``pipeline-gc``: the same with the daemon's garbage-collector policy applied once the pipeline is built
  (``fabric.daemon.gcpolicy``: ``gc.freeze()`` and a young generation of 50,000), run alternately with
  ``pipeline`` so that the two are compared side by side on the same host load;
- ``classify``: the same steps without ``decide`` (``SignalMapper.map`` + ``Detectors.observe`` +
  ``Detectors.evaluate``), to show where the time goes;
- ``guard``: ``CapacityGuard.verdict`` on random switch-switch cables of h100-4k, and ``take_out`` +
  ``put_back`` pairs, each call timed alone (``perf_counter_ns``), with about 1 % of the cables out of service.

Peak memory is the child's own ``VmHWM`` (the whole process: model, the storm's JSON text and the pipeline's state;
not ``ru_maxrss``, which counts what a parent held when it forked); the child also reports its RSS before the
timed part.
"""

from __future__ import annotations

import json
import random
import resource
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.measure import Measurement

PRESET = "h100-4k"
STORM_EVENTS = 100_000
INTERVAL = timedelta(seconds=60)
TARGET_EVENTS_PER_S = 100_000
TARGET_GUARD_US = 50.0
GUARD_CALLS = 20_000


def prepare(workdir: Path) -> Path:
    """The storm as a ``GET /app/events`` JSON list (UFM 6.17+ shape), written once."""
    path = workdir / f"storm-{PRESET}-{STORM_EVENTS}.json"
    if path.exists():
        return path
    from fabric.simulator import SimClock, SimSettings, SimState
    from fabric.simulator.events import EventShape
    from fabric.simulator.faults import Storm
    from topology.generate import PRESETS, fat_tree

    state = SimState.from_plan(fat_tree(PRESETS[PRESET]), clock=SimClock(datetime(2026, 5, 1, 8, tzinfo=UTC)),
                               settings=SimSettings(max_events=STORM_EVENTS, seed=3))
    Storm(count=STORM_EVENTS, duration=600.0, batches=100).apply(state)
    state.advance(660)
    records = state.events.records()
    assert len(records) == STORM_EVENTS, len(records)
    with path.open("w") as handle:
        json.dump([record.to_rest(EventShape.CURRENT) for record in records], handle, separators=(",", ":"))
    return path


# --- the child -------------------------------------------------------------------------------------------


def _memory_mib(field: str) -> float:
    """``VmRSS`` (now) or ``VmHWM`` (peak) of this process image; ``ru_maxrss`` would include what the parent
    held when it forked us."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _rss_mib() -> float:
    return _memory_mib("VmRSS")


def _peak_mib() -> float:
    return _memory_mib("VmHWM")


def _view() -> Any:
    from fabric.remediation.view import build_view
    from topology.formats.ufm_render import named_as_ufm
    from topology.generate import PRESETS, fat_tree

    plan = fat_tree(PRESETS[PRESET])
    named_as_ufm(plan)  # what UFM reports of the plan, joined with it as the engine does
    return build_view(plan, plan)


def _batches(path: Path) -> list[tuple[datetime, str]]:
    """The storm's events grouped by the 60 s boundary of event time at which a cycle would first see them,
    each group kept as the JSON text UFM would answer with: parsed only when its step comes, as a daemon
    parses each cycle's events and drops them after, so that the harness does not hold 100,000 parsed events
    for the garbage collector to traverse while the steps are timed."""
    from fabric.ufm.models import Event, parse_list

    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    payloads = json.loads(path.read_text())
    events = parse_list(Event, payloads)
    groups: dict[datetime, list[Any]] = {}
    for event, payload in sorted(zip(events, payloads, strict=True), key=lambda pair: pair[0].timestamp):
        boundary = epoch + -((epoch - event.timestamp) // INTERVAL) * INTERVAL
        groups.setdefault(boundary, []).append(payload)
    return [(boundary, json.dumps(group)) for boundary, group in sorted(groups.items())]


def child_pipeline(path: Path, mode: str) -> dict[str, Any]:
    """Step through the storm, timing the steps and, inside them, the garbage collector's passes."""
    import gc

    from fabric.remediation.pipeline import Pipeline
    from fabric.remediation.policy import PolicyConfig
    from fabric.remediation.rules import RuleSettings
    from fabric.ufm.models import Event, parse_list
    from topology.guard import GuardSettings

    batches = _batches(path)
    view = _view()
    pipeline = Pipeline(view, PolicyConfig(), RuleSettings(), GuardSettings())
    mapper = pipeline.mapper
    gc.collect()
    if mode == "pipeline-gc":
        from fabric.daemon.gcpolicy import apply_gc_policy

        apply_gc_policy()
    rss_before = _rss_mib()
    collector = {"passes": 0, "seconds": 0.0, "started": 0.0, "timing": False}

    def time_collections(phase: str, info: dict[str, Any]) -> None:
        if not collector["timing"]:
            return
        if phase == "start":
            collector["started"] = time.perf_counter()
        else:
            collector["passes"] += 1
            collector["seconds"] += time.perf_counter() - collector["started"]

    count = findings = actions = 0
    per_step: list[float] = []
    gc.callbacks.append(time_collections)
    for now, text in batches:
        batch = parse_list(Event, json.loads(text))
        count += len(batch)
        collector["timing"] = True
        step_started = time.perf_counter()
        if mode in ("pipeline", "pipeline-gc"):
            step = pipeline.step(batch, now)
            findings += len(step.findings)
            actions += len(step.decision.actions)
        else:
            found = pipeline.detectors.observe(mapper.map(batch)) + pipeline.detectors.evaluate(now)
            findings += len(found)
        per_step.append(time.perf_counter() - step_started)
        collector["timing"] = False
    elapsed = sum(per_step)
    gc.callbacks.remove(time_collections)
    return {"mode": mode, "events": count, "steps": len(batches), "seconds": elapsed,
            "events_per_s": count / elapsed, "findings": findings, "actions": actions,
            "slowest_step_s": max(per_step), "skipped": dict(mapper.skipped),
            "gc_passes": collector["passes"], "gc_seconds": collector["seconds"],
            "rss_before_mib": rss_before, "rss_peak_mib": _peak_mib()}


def child_parse(path: Path, mode: str) -> dict[str, Any]:
    """The storm's whole event list, as one body of 43 MB, into ``Event`` objects: ``parse`` the daemon's way
    (``jsonlist.list_items`` in pieces by ``topology.strictjson``, ``parse_list`` with the model's ``EventReader``);
    ``parse-validated`` with neither (``json.loads``, then every element validated by the model), the way the
    events were read before; the two alternate, so that their figures share the host's load. The garbage
    collector runs with the daemon's policy, as in a daemon."""
    import gc

    from fabric.daemon.gcpolicy import apply_gc_policy
    from fabric.ufm.models import Event, parse_list
    from topology.jsonlist import list_items

    body = path.read_bytes()
    apply_gc_policy()
    gc.collect()
    started = time.perf_counter()
    if mode == "parse":
        events = parse_list(Event, list_items(body))
    else:
        events = [Event.model_validate(item, context={"tz": UTC}) for item in json.loads(body)]
    seconds = time.perf_counter() - started
    return {"mode": mode, "events": len(events), "seconds": seconds, "events_per_s": len(events) / seconds,
            "body_mib": len(body) / 2**20, "rss_peak_mib": _peak_mib()}


def child_guard() -> dict[str, Any]:
    from topology.generate import PRESETS, fat_tree
    from topology.guard import CapacityGuard, GuardSettings

    plan = fat_tree(PRESETS[PRESET])
    # Generous blast radius and rate: the benchmark times the checks, it does not want them to stop early.
    guard = CapacityGuard(plan, GuardSettings(cap_fraction=0.05, hourly_limit=10**9))
    cables = sorted(guard.orientation)
    rng = random.Random(7)
    for cable in rng.sample(cables, len(cables) // 100):
        guard.mark_down(cable)  # a fabric with some cables already out of service
    now = datetime(2026, 5, 1, tzinfo=UTC)
    verdicts: list[int] = []
    changes: list[int] = []
    clock = time.perf_counter_ns
    for _ in range(GUARD_CALLS):
        cable = rng.choice(cables)
        start = clock()
        guard.verdict(cable, now)
        verdicts.append(clock() - start)
        if cable in guard.out:
            continue
        start = clock()
        guard.take_out(cable, now)
        guard.put_back(cable)
        changes.append(clock() - start)
        now += timedelta(seconds=1)

    def quantiles(samples: list[int]) -> dict[str, float]:
        ordered = sorted(samples)
        return {"calls": len(ordered), "median_us": statistics.median(ordered) / 1000,
                "p99_us": ordered[int(len(ordered) * 0.99)] / 1000, "max_us": ordered[-1] / 1000}

    return {"mode": "guard", "switch_cables": len(cables), "verdict": quantiles(verdicts),
            "take_out_put_back": quantiles(changes), "rss_peak_mib": _peak_mib()}


# --- the parent ------------------------------------------------------------------------------------------


def _child(args: list[str]) -> tuple[dict[str, Any], float]:
    """Run a child mode; its JSON report and its own peak RSS (MiB)."""
    argv = [sys.executable, "-m", "benchmarks.bench_pipeline", *args]
    result = subprocess.run(argv, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"bench_pipeline {' '.join(args)}: exit {result.returncode}: {result.stderr[-800:]}")
    report: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return report, float(report.get("rss_peak_mib", 0.0))


def _storm_runs(storm: Path, mode: str, repeat: int) -> tuple[list[dict[str, Any]], float]:
    runs: list[dict[str, Any]] = []
    peak = 0.0
    for _ in range(repeat):
        report, rss = _child([mode, str(storm)])
        runs.append(report)
        peak = max(peak, rss)
    return runs, peak


def _alternate(storm: Path, modes: tuple[str, ...], repeat: int) -> dict[str, tuple[list[dict[str, Any]], float]]:
    """Each mode ``repeat`` times, taking turns (a, b, a, b...), so that a noisy host's load falls on all."""
    found: dict[str, tuple[list[dict[str, Any]], float]] = {mode: ([], 0.0) for mode in modes}
    for _ in range(repeat):
        for mode in modes:
            report, rss = _child([mode, str(storm)])
            runs, peak = found[mode]
            found[mode] = ([*runs, report], max(peak, rss))
    return found


def run(workdir: Path, repeat: int = 3) -> list[Measurement]:
    # Prepared in a child of its own: this process stays small, so the children it starts do too.
    storm = Path(_child(["prepare", str(workdir)])[0]["storm"])
    target_s = STORM_EVENTS / TARGET_EVENTS_PER_S
    results: list[Measurement] = []
    alternated = _alternate(storm, ("pipeline", "pipeline-gc"), repeat)
    for mode, title in (("classify", "signals + detectors"), ("pipeline", "Pipeline.step (+ decide)"),
                        ("pipeline-gc", "Pipeline.step, the daemon's GC policy")):
        runs, peak = alternated[mode] if mode in alternated else _storm_runs(storm, mode, repeat)
        last = runs[-1]
        results.append(Measurement(
            f"{title} on the {STORM_EVENTS:,}-event storm ({PRESET})", [r["seconds"] for r in runs], peak, target_s,
            note=f"{statistics.median(r['events_per_s'] for r in runs):,.0f} events/s; {last['steps']} steps of 60 s; "
                 f"{last['findings']:,} findings, {last['actions']:,} decisions; garbage collector "
                 f"{statistics.median(r['gc_seconds'] for r in runs):.2f} s in {last['gc_passes']} passes; slowest "
                 f"step {max(r['slowest_step_s'] for r in runs):.2f} s; RSS before the timed part "
                 f"{last['rss_before_mib']:.0f} MiB",
            output=json.dumps(runs)))
    parsed = _alternate(storm, ("parse", "parse-validated"), repeat)
    for mode, title in (("parse", "the storm's event list decoded in pieces, events built by EventReader"),
                        ("parse-validated", "the same with json.loads and the model's validation")):
        runs, peak = parsed[mode]
        results.append(Measurement(
            f"{title} ({STORM_EVENTS:,} events, one body)", [r["seconds"] for r in runs], peak,
            note=f"{statistics.median(r['events_per_s'] for r in runs):,.0f} events/s; a body of "
                 f"{runs[-1]['body_mib']:.0f} MiB; alternated with the other",
            output=json.dumps(runs)))
    guards = [_child(["guard"]) for _ in range(3)]
    verdicts = [g["verdict"] for g, _ in guards]
    changes = [g["take_out_put_back"] for g, _ in guards]
    results.append(Measurement(
        f"CapacityGuard.verdict p99 ({PRESET}, {guards[0][0]['switch_cables']:,} switch cables)",
        [v["p99_us"] / 1e6 for v in verdicts], max(rss for _, rss in guards), TARGET_GUARD_US / 1e6,
        note=f"median {statistics.median(v['median_us'] for v in verdicts):.1f} us, p99 "
             f"{statistics.median(v['p99_us'] for v in verdicts):.1f} us over {verdicts[0]['calls']:,} random "
             f"cables; take_out+put_back median {statistics.median(c['median_us'] for c in changes):.1f} us, "
             f"p99 {statistics.median(c['p99_us'] for c in changes):.1f} us",
        output=json.dumps([g for g, _ in guards])))
    return results


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "prepare":
        result = {"storm": str(prepare(Path(sys.argv[2])))}
    elif mode == "guard":
        result = child_guard()
    elif mode in ("pipeline", "pipeline-gc", "classify"):
        result = child_pipeline(Path(sys.argv[2]), mode)
    elif mode in ("parse", "parse-validated"):
        result = child_parse(Path(sys.argv[2]), mode)
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    print(json.dumps(result))
