"""``fabricctl run``: the remediation daemon (scheduler, HTTP API, metrics) on one configuration file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def run(
    config: Annotated[Path, typer.Option("--config", "-c", help="The service configuration (TOML).")],
    log_format: Annotated[str, typer.Option(
        "--log-format", help="json: one JSON object a line (for a log pipeline); text: for a terminal.")] = "json",
    clock: Annotated[str, typer.Option(
        help="system, or simulator: keep to the clock of the UFM simulator at ufm.url (fabricctl simulate), for a "
             "simulator running faster than real time (--speed): cycles, windows, probation and timestamps then "
             "follow simulated time.")] = "system",
) -> None:
    """Run the remediation service: a cycle every daemon.interval, the HTTP API on api.host and api.port.

    Two processes: this one serves the API, and starts the engine's (started again if it exits unasked).

    Dry run unless policy.dry_run is false. The database must exist at this version's schema (fabricctl store
    migrate). SIGTERM or SIGINT: the running cycle finishes, then exit 0. SIGHUP: re-read the configuration
    (silences apply at every cycle; other changes are reported and take a restart).
    """
    from fabric.cli.common import fail
    from fabric.daemon.clock import ClockKind
    from fabric.daemon.logs import LogFormat, configure
    from fabric.daemon.process import RunOptions
    from fabric.daemon.process import run as run_daemon

    if log_format not in {f.value for f in LogFormat}:
        fail(f"--log-format: {log_format!r}: one of json, text")
    if clock not in {c.value for c in ClockKind}:
        fail(f"--clock: {clock!r}: one of system, simulator")
    configure(LogFormat(log_format))
    run_daemon(RunOptions(config, ClockKind(clock), LogFormat(log_format)))


def engine(
    config: Annotated[Path, typer.Option("--config", "-c")],
    run_dir: Annotated[Path, typer.Option("--run-dir")],
    instance: Annotated[str, typer.Option("--instance")],
    parent: Annotated[int, typer.Option("--parent")],
    api: Annotated[str, typer.Option("--api")],
    log_format: Annotated[str, typer.Option("--log-format")] = "json",
    clock: Annotated[str, typer.Option()] = "system",
) -> None:
    """The engine's process of ``fabricctl run``, started by it (not for operators: not in the help)."""
    from fabric.daemon.clock import ClockKind
    from fabric.daemon.engine_process import EngineOptions, run_engine
    from fabric.daemon.logs import LogFormat, configure

    configure(LogFormat(log_format))
    run_engine(EngineOptions(config, run_dir, instance, parent, api, ClockKind(clock)))
