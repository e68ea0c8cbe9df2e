"""The full-fabric storm on h100-32k: one engine cycle over every cable's ends going down and up (393,216 events).

Setup (not timed): the simulator on h100-32k (``SimState``, its clock frozen) raises, for each of the 98,304
cables, "Link went down" (329) from each of its two ends at one instant, then "Link is up" (328) from each end
10 s later: 393,216 events, saved once as the JSON list ``GET /app/events`` answers (UFM 6.17+ shape).

The events are fed directly, not served over a socket: each run (a child process of its own) builds the engine the
daemon builds (``Engine``, dry run as the daemon's default, the default rules, policy and guard, a SQLite file
store), on the view of the plan as UFM names it (``bench_pipeline``'s), with the event cursor primed on an empty
history; its UFM is a ``UfmClient`` whose transport (``httpx.MockTransport``) answers ``/app/events`` with the
storm's body, so the events are decoded by the client's own path. One ``Engine.cycle`` 30 s after the storm's
start is timed, whole and in phases (wrappers timing the engine's own calls):

- fetch + decode: ``UfmClient.events`` (the body handed over in memory, then decoded into ``Event`` objects);
- ``Pipeline.step``: signals, detectors, correlation, the policy;
- store writes: ``Engine._record`` (findings, decisions, component records, the breaker, the storm window, the
  cursor, in one SQLite transaction);
- the rest of the cycle (the cursor, silences, requests, the report).

Then the next cycle that matters is timed too: 12 minutes on, when every link-down of the storm has settled
(``settle`` + ``boot_time``); it reads UFM's whole history again (none of it decoded again) and the detectors judge
the evidence they held back. Checked after both: the breaker's state and the halts decided, and the decisions as a
digest (kind, rule, component, reason of each), so that two checkouts can be shown to decide the same. Under the
default rules one down/up episode of 10 s per cable is no fault (a flap takes three episodes, or two with 7 s of
downtime; a link down, 10 minutes down), so this storm decides nothing and the breaker stays closed.
With a profile path as the child's last argument the storm's cycle runs under ``cProfile`` (its times then are the
profiler's, not the figures). The garbage collector runs
with the daemon's policy (``fabric.daemon.gcpolicy``), applied once the engine is built, as the daemon does.

``python -m benchmarks.run storm32k`` runs it; ``python -m benchmarks.compare BASE --only storm32k`` runs this
child against another checkout's code, the two taking turns.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

PRESET = "h100-32k"
START = datetime(2026, 5, 1, 8, tzinfo=UTC)
UP_AFTER_S = 10
CYCLE_AT = START + timedelta(seconds=30)
SETTLED_AT = START + timedelta(minutes=12)
TARGET_EVENTS_PER_S = 15_000
CHILD = Path(__file__).resolve()


def prepare(workdir: Path) -> Path:
    """The storm's event list, written once: 329 from both ends of every cable, then 328 from both."""
    path = workdir / f"storm-{PRESET}-full-fabric.json"
    if path.exists():
        return path
    from fabric.simulator import SimClock, SimSettings, SimState
    from fabric.simulator.catalog import spec
    from fabric.simulator.events import EventShape
    from fabric.simulator.naming import link_ends_text, link_object
    from topology.generate import PRESETS, fat_tree

    state = SimState.from_plan(fat_tree(PRESETS[PRESET]), clock=SimClock(START),
                               settings=SimSettings(max_events=500_000, seed=3))
    names = state.fabric.names
    ends = [(names[link.a], names[link.b]) for link in state.fabric.links.values()]
    for event_id in (329, 328):
        for a, b in ends:
            for first, second in ((a, b), (b, a)):
                state.emit(event_id, link_object(first, second), spec(event_id).describe(link_ends_text(first,
                                                                                                          second)))
        state.advance(UP_AFTER_S)
    records = state.events.records()
    assert len(records) == 4 * len(ends), (len(records), len(ends))
    with path.open("wb") as handle:
        handle.write(b"[")
        for index, record in enumerate(records):
            if index:
                handle.write(b",")
            handle.write(json.dumps(record.to_rest(EventShape.CURRENT), separators=(",", ":")).encode())
        handle.write(b"]")
    return path


# --- the child -------------------------------------------------------------------------------------------


def _peak_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


class _Phases:
    """Seconds spent inside the wrapped calls, by phase."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def sync(self, name: str, call: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started
        return timed

    def coroutine(self, name: str, call: Any) -> Any:
        async def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await call(*args, **kwargs)
            finally:
                self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started
        return timed


def _engine(storm: Path, database: Path, clock: Any) -> tuple[Any, Any, Any]:
    """The engine, its UFM client and its store, as ``start`` leaves them on a fabric that shows every planned cable
    up, on a first start (no saved cursor, UFM's history empty): the storm is all new to the cycle."""
    import httpx

    from fabric.controller.engine import Engine, EngineSettings
    from fabric.remediation.view import build_view
    from fabric.store import Store
    from fabric.ufm import BasicAuth, UfmClient
    from tickets.local import LocalTicketBackend
    from topology.formats.ufm_render import named_as_ufm
    from topology.generate import PRESETS, fat_tree

    body = storm.read_bytes()
    versions = {"ports_version": 1, "links_version": 1, "switches_version": 1, "servers_version": 1,
                "events_version": 1, "alarms_version": 1}

    def answer(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path.endswith("/app/events"):
            return httpx.Response(200, content=body, headers={"Content-Type": "application/json"})
        if path.endswith("/app/versioning"):
            return httpx.Response(200, json=versions)
        if path.endswith("/app/unhealthy_ports"):
            return httpx.Response(200, json=[])
        return httpx.Response(404, json={"error": path})

    plan = fat_tree(PRESETS[PRESET])
    named_as_ufm(plan)
    view = build_view(plan, plan)
    store = Store.open(f"sqlite:///{database}", fabric="default", clock=clock)
    tickets = LocalTicketBackend(store.engine, clock=clock)
    ufm = UfmClient("http://ufm.invalid", BasicAuth("admin", "123456"), transport=httpx.MockTransport(answer))
    engine = Engine(plan, ufm, store, tickets, EngineSettings(), clock)
    engine.view, engine.live = view, set(view.plan_keys)
    engine._versions = {k: v for k, v in versions.items()
                        if k in ("ports_version", "links_version", "switches_version", "servers_version")}
    engine._pipeline = engine._new_pipeline(engine._load_state(), clock())
    engine.cursor.prime([])
    return engine, ufm, store


def child_cycle(storm: Path, workdir: Path, profile: Path | None) -> dict[str, Any]:
    from fabric.daemon.gcpolicy import apply_gc_policy
    from fabric.remediation.domain import ActionKind

    now = [CYCLE_AT]
    database = workdir / f"storm32k-{os.getpid()}.db"
    engine, ufm, store = _engine(storm, database, lambda: now[0])
    phases = _Phases()
    ufm.events = phases.coroutine("fetch_decode", ufm.events)  # type: ignore[method-assign]
    pipeline = engine.pipeline
    pipeline.step = phases.sync("pipeline_step", pipeline.step)  # type: ignore[method-assign]
    engine._record = phases.sync("store_writes", engine._record)  # type: ignore[method-assign]
    apply_gc_policy()

    async def one_cycle() -> Any:
        return await engine.cycle(poll_tickets=False, send_tickets=False)

    started = time.perf_counter()
    if profile is None:
        report = asyncio.run(one_cycle())
    else:
        import cProfile

        profiler = cProfile.Profile()
        report = profiler.runcall(asyncio.run, one_cycle())
        profiler.dump_stats(str(profile))
    seconds = time.perf_counter() - started
    storm_phases, phases.seconds = phases.seconds, {}
    halted_after_storm = store.dry_run_scope().breaker_state().halted
    # The cycle at which every link-down of the storm has settled (``settle`` + ``boot_time`` past): it reads
    # UFM's whole history again, decodes none of it, and the detectors judge the evidence held back.
    now[0] = SETTLED_AT
    started = time.perf_counter()
    settled = asyncio.run(one_cycle())
    settled_seconds = time.perf_counter() - started
    digest = hashlib.sha256()
    for action in [*report.actions, *settled.actions]:
        digest.update(f"{action.kind}|{action.rule}|{action.component}|{action.reason}\n".encode())
    actions = [*report.actions, *settled.actions]
    halts = sum(1 for a in actions if a.kind is ActionKind.HALT)
    database.unlink()
    return {"events": report.events, "seconds": seconds, "events_per_s": report.events / seconds,
            "phases": storm_phases, "settled_seconds": settled_seconds, "settled_phases": phases.seconds,
            "findings": len(report.findings) + len(settled.findings), "decisions": len(actions),
            "explained": len(report.explained) + len(settled.explained), "halts": halts,
            "halted_after_storm": halted_after_storm, "halted": store.dry_run_scope().breaker_state().halted,
            "decisions_sha256": digest.hexdigest(), "rss_peak_mib": _peak_mib()}


# --- the parent ------------------------------------------------------------------------------------------


def run_child(checkout: Path, storm: Path, workdir: Path, profile: Path | None = None) -> dict[str, Any]:
    """One cycle in a child process on ``checkout``'s code (this file's child, whichever checkout it measures)."""
    argv = [str(checkout / ".venv" / "bin" / "python") if (checkout / ".venv").exists() else sys.executable,
            str(CHILD), "cycle", str(storm), str(workdir)]
    if profile is not None:
        argv.append(str(profile))
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run(argv, cwd=checkout, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"bench_storm32k cycle in {checkout}: exit {done.returncode}: {done.stderr[-1500:]}")
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def describe(runs: list[dict[str, Any]]) -> str:
    """The medians of a set of runs, by phase, and what the last one decided."""
    last = runs[-1]
    names = sorted({name for r in runs for name in r["phases"]})
    parts = [f"{name} {statistics.median(r['phases'].get(name, 0.0) for r in runs):.2f} s" for name in names]
    return (f"{statistics.median(r['events_per_s'] for r in runs):,.0f} events/s over {last['events']:,} events; "
            f"{'; '.join(parts)}; the settled cycle {statistics.median(r['settled_seconds'] for r in runs):.2f} s; "
            f"{last['findings']:,} findings, {last['decisions']:,} decisions, "
            f"{last['halts']} halt, breaker {'halted' if last['halted'] else 'NOT halted'}")


def run(workdir: Path, repeat: int = 3) -> list[Any]:
    from benchmarks.measure import Measurement

    here = CHILD.parents[1]
    storm = Path(_prepare_in_child(workdir))
    runs = [run_child(here, storm, workdir) for _ in range(repeat)]
    events = runs[-1]["events"]
    # What the rules decide of one down/up episode per cable (see above): nothing, the breaker closed.
    as_decided = all(not r["halted"] and r["decisions"] == 0 for r in runs)
    return [Measurement(
        f"the full-fabric storm on {PRESET}: one engine cycle ({events:,} events)", [r["seconds"] for r in runs],
        max(r["rss_peak_mib"] for r in runs), events / TARGET_EVENTS_PER_S, note=describe(runs),
        output=json.dumps(runs), met=None if as_decided else False)]


def _prepare_in_child(workdir: Path) -> str:
    """Prepared in a child of its own, so that this process stays small."""
    done = subprocess.run([sys.executable, str(CHILD), "prepare", str(workdir)], capture_output=True, text=True,
                          check=True, env={**os.environ, "PYTHONPATH": str(CHILD.parents[1])})
    return str(json.loads(done.stdout.strip().splitlines()[-1])["storm"])


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "prepare":
        result: dict[str, Any] = {"storm": str(prepare(Path(sys.argv[2])))}
    elif mode == "cycle":
        result = child_cycle(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]) if len(sys.argv) > 4 else None)
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    print(json.dumps(result))
