"""What ``fabricctl burnin plan`` writes: a shell script per stage and the whole plan as JSON."""

from __future__ import annotations

import shlex
from typing import Any

from topology.burnin import BurninPlan, Pair, Stage
from topology.model import End, Fabric
from topology.ports import display_port

FIRST_TCP_PORT = 18515
"""``ib_write_bw``'s own default; rail ``r`` uses this plus ``r``, so a host's streams on its rails do not meet."""


def script_name(number: int) -> str:
    return f"stage-{number:02d}.sh"


def _stream_lines(pair: Pair) -> tuple[list[str], list[str]]:
    serve, connect = [], []
    for r in pair.rails:
        server, client = pair.second.rails[r], pair.first.rails[r]
        port = FIRST_TCP_PORT + r
        serve.append(f"serve {shlex.quote(pair.second.name)} {shlex.quote(server.interface)} {port}")
        connect.append(f"connect {shlex.quote(pair.first.name)} {shlex.quote(client.interface)} {port} "
                       f"{shlex.quote(pair.second.name)}")
    return serve, connect


def stage_script(plan: BurninPlan, number: int, duration_s: int) -> str:
    """Stage ``number`` (from 1) as a POSIX shell script: every server first, then every client, then a wait that
    counts the streams that failed (the script's exit status)."""
    stage = plan.stages[number - 1]
    serve: list[str] = []
    connect: list[str] = []
    for pair in stage.pairs:
        served, connected = _stream_lines(pair)
        serve += served
        connect += connected
    header = [
        "#!/bin/sh",
        f"# Burn-in stage {number} of {len(plan.stages)}: {len(stage.pairs)} host pairs, {len(serve)} streams "
        "(fabricctl burnin plan).",
        "# One bidirectional ib_write_bw per rail of each pair: the second host serves, the first connects to it.",
        "# SSH reaches a host by its name; DURATION is each stream's length in seconds; logs go to LOGS.",
        "set -u",
        'SSH=${SSH:-ssh}',
        f'DURATION=${{DURATION:-{duration_s}}}',
        f'LOGS=${{LOGS:-burnin-logs/stage-{number:02d}}}',
        'mkdir -p "$LOGS"',
        'pids=""',
        'serve() { $SSH "$1" ib_write_bw -d "$2" -p "$3" -b -D "$DURATION" --report_gbits '
        '>"$LOGS/$1_$2.server.log" 2>&1 & pids="$pids $!"; }',
        'connect() { $SSH "$1" ib_write_bw -d "$2" -p "$3" -b -D "$DURATION" --report_gbits "$4" '
        '>"$LOGS/$1_$2.client.log" 2>&1 & pids="$pids $!"; }',
    ]
    footer = [
        'sleep "${SETTLE:-5}"  # the servers listen before any client connects',
        *connect,
        "failed=0",
        'for pid in $pids; do wait "$pid" || failed=$((failed + 1)); done',
        'echo "stage ' + str(number) + ': $failed of ' + str(2 * len(serve)) + ' ib_write_bw processes failed" >&2',
        '[ "$failed" -eq 0 ]',
    ]
    return "\n".join([*header, *serve, *footer]) + "\n"


def _figure(load: float) -> float:
    """``load`` to six significant digits: short JSON, and a share however small stays above zero."""
    return float(f"{load:.6g}")


def _end(fabric: Fabric, end: End) -> dict[str, str]:
    device = fabric.devices[end.device]
    return {"device": device.name, "kind": device.kind.value, "port": display_port(end.port)}


def _stage_dict(fabric: Fabric, stage: Stage, number: int) -> dict[str, Any]:
    return {
        "stage": number,
        "script": script_name(number),
        "pairs": [{
            "client": pair.first.name,
            "server": pair.second.name,
            "streams": [{"rail": r, "client": pair.first.rails[r].adapter, "server": pair.second.rails[r].adapter,
                         "tcp_port": FIRST_TCP_PORT + r} for r in pair.rails],
        } for pair in stage.pairs],
        "cables_loaded": len(stage.load),
        "load_max": _figure(max(stage.load.values(), default=0.0)),
    }


def plan_json(plan: BurninPlan, source: str) -> dict[str, Any]:
    """The plan: its stages, then every cable of the fabric with its expected load in each stage (streams per
    direction), then the cables no stage loads."""
    fabric = plan.fabric
    loads = [stage.load for stage in plan.stages]
    return {
        "plan": source,
        "stage_size": plan.stage_size,
        "hosts": len(plan.hosts),
        "cables": len(fabric.cables),
        "covered": len(fabric.cables) - len(plan.uncovered),
        "stages": [_stage_dict(fabric, stage, number) for number, stage in enumerate(plan.stages, start=1)],
        "cable_loads": [{
            "ends": [_end(fabric, cable.a), _end(fabric, cable.b)],
            "load": [_figure(load.get(index, 0.0)) for load in loads],
        } for index, cable in enumerate(fabric.cables)],
        "uncovered": [fabric.describe_cable(fabric.cables[index]) for index in plan.uncovered],
    }
