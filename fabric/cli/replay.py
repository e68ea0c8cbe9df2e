"""``fabricctl replay``: what the policy would have done with a recorded event log."""

from __future__ import annotations

import errno
import gc
import sys
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from fabric.cli.common import EXIT_FINDINGS, EXIT_OK, fail
from fabric.durations import CYCLE, format_duration
from topology.errors import InputError


class ReplayFormat(StrEnum):
    TABLE = "table"
    JSON = "json"
    JSONL = "jsonl"
    """JSON lines, written as the replay goes: {"decision": ...} lines, {"explained": ...} lines, {"summary": ...}."""


def replay(
    as_built: Annotated[Path, typer.Option(
        "--as-built", "-a", help="UFM snapshot directory (systems.json, links.json, optional ports.json): the "
                                 "fabric's names, GUIDs and ports, and its model unless --plan is given.")],
    events: Annotated[Path | None, typer.Option(
        "--events", "-e", help="Recorded UFM events: an event.log (.gz too), a GET /app/events JSON list "
                               "(bare or {\"data\": [...]}, either UFM payload shape) or JSON lines; a file, "
                               "a pipe (<(zcat week.log.gz)) or - for the standard input. Optional with "
                               "--telemetry.")] = None,
    telemetry: Annotated[Path | None, typer.Option(
        "--telemetry", "-t", help="Recorded UFM Telemetry: a directory of CSV files as UFM Telemetry serves them, one "
                                  "sample per file, any names, replayed in the order of their timestamp column "
                                  "beside the events, judged by the configuration's [telemetry] thresholds.")] = None,
    plan: Annotated[Path | None, typer.Option(
        "--plan", "-p", help="The wiring plan (NDT CSV) as the model, joined with the snapshot's GUIDs.")] = None,
    config: Annotated[Path | None, typer.Option(
        "--config", "-c", help="Service configuration (TOML) whose rules, guard and policy to replay; "
                               "FABRIC_* variables apply. Always a dry run.")] = None,
    interval: Annotated[str | None, typer.Option(
        help="Virtual cycle length, at least 1s, e.g. 60s (default: the configuration's daemon.interval, "
             f"{format_duration(CYCLE)} unless it says otherwise).")] = None,
    output_format: Annotated[ReplayFormat, typer.Option(
        "--format", "-f", help="Report format: table, json (one document), jsonl (JSON lines, each decision "
                               "written as it is taken, the summary last).")] = ReplayFormat.TABLE,
) -> None:
    """Replay a recorded UFM event log (and UFM Telemetry's samples) through the policy, dry: every decision it
    would have taken, and why.

    Exit 0 when no action would be taken, 1 when some would, 2 on bad input.
    """
    from fabric.config import ConfigError
    from fabric.replay.render import render_table
    from fabric.replay.report import DecisionLines, SpooledDecisions
    from fabric.replay.run import run_replay

    try:
        sink = DecisionLines(sys.stdout) if output_format is ReplayFormat.JSONL else SpooledDecisions()
        # The model's objects live until exit, and the replay's own are freed as it goes (by reference count: its
        # objects hold no cycles worth a collector pass over the model's millions; see verify).
        gc.disable()
        try:
            if events is None and telemetry is None:
                fail("nothing to replay: give --events, --telemetry or both")
            report = run_replay(as_built, events, plan=plan, config=config, interval=interval, decisions=sink,
                                telemetry=telemetry)
        except (InputError, ConfigError) as exc:
            fail(str(exc))
        finally:
            gc.enable()
        if output_format is ReplayFormat.JSONL:
            report.write_jsonl_end(sys.stdout)
        elif output_format is ReplayFormat.JSON:
            report.write_json(sys.stdout)
        else:
            from fabric.terminal import console

            render_table(report, console())
    except OSError as exc:
        # A disk that filled: the likeliest the temporary files' (the decisions, a log's events sorted out of
        # order: hundreds of MB for a month), so they are named. Anything else is no operator's to fix here.
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        fail(f"{exc.strerror} while replaying; its temporary files (the decisions, and the events of a log out of "
             f"time order) are written to {tempfile.gettempdir()}: set TMPDIR to a directory with room")
    raise typer.Exit(EXIT_FINDINGS if report.would_act else EXIT_OK)
