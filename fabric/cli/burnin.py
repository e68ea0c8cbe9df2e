"""``fabricctl burnin``: plan a burn-in workload that loads every cable of a fabric."""

from __future__ import annotations

import gc
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fabric.cli.common import EXIT_FINDINGS, EXIT_OK, FormatOption, OutputFormat, command_group, fail, replacing
from fabric.cli.ufm import (
    UfmAuthOption,
    UfmCa,
    UfmInsecure,
    UfmSecretFile,
    UfmTimeout,
    UfmUrl,
    UfmUser,
    ufm_target,
)
from fabric.ufm.address import DEFAULT_TIMEOUT_S, TELEMETRY_INSTANCE
from topology.errors import InputError
from topology.redact import redacted_url

if TYPE_CHECKING:
    from fabric.config import ServiceConfig
    from fabric.replay.burnin import WindowReport
    from fabric.ufm.connect import UfmTarget
    from topology.burnin import BurninPlan
    from topology.model import Fabric

burnin_app = command_group("Burn-in: load every cable, then keep what survived.")

PLAN_FILE = "burnin-plan.json"


@burnin_app.command("plan")
def burnin_plan(
    plan: Annotated[Path, typer.Option("--plan", "-p", help="The wiring plan (NDT CSV).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for stage-NN.sh and burnin-plan.json.")],
    stage_size: Annotated[int, typer.Option(
        "--stage-size", help="Most host pairs in one stage (each pair: one stream per rail).")] = 64,
    duration: Annotated[str, typer.Option(
        help="How long each stream runs (90s, 10m, 1h): the scripts' default, DURATION overrides it.")] = "10m",
    plan_cache: Annotated[bool, typer.Option(
        "--plan-cache/--no-plan-cache", envvar="FABRIC_PLAN_CACHE",
        help="Keep the plan's model in $XDG_CACHE_HOME/fabric-remediation, as verify does.")] = True,
) -> None:
    """Stages of host pairs running ib_write_bw, rails matched, under which every cable carries traffic.

    Writes a shell script per stage and burnin-plan.json (each cable's expected load per stage under even
    spreading over shortest paths) into --out. Exit 0 when every cable is loaded, 1 when some cannot be, 2 on bad
    input.
    """
    import json

    from fabric.cli.burnin_files import plan_json, script_name, stage_script
    from fabric.durations import parse_duration
    from topology.burnin import plan_burnin
    from topology.plancache import default_directory, read_plan

    if stage_size < 1:
        fail(f"--stage-size must be at least 1 host pair, not {stage_size}")
    try:
        seconds = round(parse_duration(duration).total_seconds())
    except ValueError as exc:
        fail(f"--duration: {exc}")
    if seconds < 1:
        fail(f"--duration must be at least a second (ib_write_bw -D counts whole seconds), not {duration!r}")
    if out.exists() and not out.is_dir():
        fail(f"--out {out}: not a directory")
    gc.disable()  # a one-shot command building ~100k objects: see verify
    try:
        fabric = read_plan(plan, directory=default_directory() if plan_cache else None)
    except InputError as exc:
        fail(str(exc))
    burnin = plan_burnin(fabric, stage_size)
    if not burnin.hosts:
        fail(f"{plan}: no host adapter is cabled to a switch: nothing to run a burn-in from")
    for number in range(1, len(burnin.stages) + 1):
        with replacing(out / script_name(number)) as partial:
            partial.write_text(stage_script(burnin, number, seconds))
            partial.chmod(0o755)
    with replacing(out / PLAN_FILE) as partial:
        partial.write_text(json.dumps(plan_json(burnin, str(plan)), indent=1) + "\n")
    _print_summary(burnin, out)
    raise typer.Exit(EXIT_FINDINGS if burnin.uncovered else EXIT_OK)


def _print_summary(burnin: BurninPlan, out: Path) -> None:
    from fabric.terminal import LineTable, console

    terminal = console()
    table = LineTable(terminal, f"burn-in plan: {len(burnin.hosts)} hosts, {len(burnin.stages)} stages, in {out}",
                      "stage", "pairs", "streams", "cables loaded", "load min", "load max")
    for number, stage in enumerate(burnin.stages, start=1):
        loads = stage.load.values()
        table.add(number, len(stage.pairs), sum(len(pair.rails) for pair in stage.pairs), len(stage.load),
                  f"{min(loads, default=0.0):.2f}", f"{max(loads, default=0.0):.2f}")
    terminal.print(table)
    covered = len(burnin.fabric.cables) - len(burnin.uncovered)
    typer.echo(f"{covered} of {len(burnin.fabric.cables)} cables carry traffic in some stage")
    for index in burnin.uncovered[:10]:
        typer.echo(f"not loaded: {burnin.fabric.describe_cable(burnin.fabric.cables[index])}")


@burnin_app.command("watch")
def burnin_watch(
    plan: Annotated[Path, typer.Option("--plan", "-p", help="The wiring plan (NDT CSV).")],
    ufm: UfmUrl = None,
    ufm_auth: UfmAuthOption = "basic",
    ufm_user: UfmUser = "admin",
    ufm_secret_file: UfmSecretFile = None,
    ufm_ca_bundle: UfmCa = None,
    ufm_insecure: UfmInsecure = False,
    ufm_timeout: UfmTimeout = DEFAULT_TIMEOUT_S,
    duration: Annotated[str | None, typer.Option(
        help="How long the window lasts (90s, 10m, 1h; default: the configuration's burnin.duration).")] = None,
    config: Annotated[Path | None, typer.Option(
        "--config", "-c", help="Service configuration (TOML): its [burnin] thresholds, rules, guard and policy.")]
    = None,
    telemetry: Annotated[str | None, typer.Option(
        "--telemetry", help="UFM Telemetry's URL: a sample at each end of the window tells the ports that carried "
                            "no traffic.")] = None,
    telemetry_instance: Annotated[str, typer.Option(
        help="The UFM Telemetry instance read (GET <url>/csv/xcset/<instance>).")] = TELEMETRY_INSTANCE,
    output_format: FormatOption = OutputFormat.TABLE,
) -> None:
    """Watch a burn-in window on UFM: the survivors per port and switch, and what the policy would take out.

    The window's events are judged by the service's rules with [burnin]'s stricter thresholds and decided by the
    same policy, guard, cap and breaker, dry: nothing is written (the running daemon acts: POST /api/v1/burnin).
    Exit 0 when every port survived, 1 when some did not, 2 on bad input or an unreachable UFM.
    """
    from fabric.config import ConfigError, load_config
    from fabric.durations import parse_duration
    from topology.plancache import default_directory, read_plan

    if ufm is None:
        fail("--ufm URL is required (or set FABRIC_UFM_URL)")
    target = ufm_target(ufm, ufm_auth, ufm_user, ufm_secret_file, ufm_ca_bundle, ufm_insecure, ufm_timeout)
    try:
        settings = load_config(config)
    except ConfigError as exc:
        fail(str(exc))
    window = settings.burnin.duration
    if duration is not None:
        try:
            window = parse_duration(duration)
        except ValueError as exc:
            fail(f"--duration: {exc}")
    try:
        fabric = read_plan(plan, directory=default_directory())
    except InputError as exc:
        fail(str(exc))
    report = _watch(target, fabric, settings, window, telemetry, telemetry_instance)
    if output_format is OutputFormat.JSON:
        from fabric.cli.common import print_json

        print_json(window_dict(report))
    else:
        _print_window(report)
    raise typer.Exit(EXIT_OK if all(s.survived for s in report.switches) else EXIT_FINDINGS)


def _watch(target: UfmTarget, fabric: Fabric, settings: ServiceConfig, window: timedelta, telemetry: str | None,
           instance: str) -> WindowReport:
    """``watch_window`` on the UFM ``target`` names; UFM or UFM Telemetry out of reach, or a sample that is not
    one, is one line and exit 2."""
    import asyncio

    from fabric.replay.burnin import watch_window
    from fabric.telemetry.errors import TelemetryInputError
    from fabric.ufm.connect import ConnectError
    from fabric.ufm.errors import UfmError
    from fabric.ufm.telemetry import TelemetryClient

    def opened(start: datetime, end: datetime) -> None:
        typer.echo(f"burn-in window open: {start:%H:%M:%S} to {end:%H:%M:%S} UTC", err=True)

    async def run() -> WindowReport:
        async with target.client() as client:
            if telemetry is None:
                return await watch_window(client, fabric, settings, window, opened=opened)
            async with TelemetryClient(telemetry, instance, verify=not target.insecure, ca_bundle=target.ca_bundle,
                                       timeout=target.timeout) as feed:
                return await watch_window(client, fabric, settings, window, telemetry=feed.sample, opened=opened)

    try:
        return asyncio.run(run())
    except (ConnectError, UfmError, TelemetryInputError) as exc:
        fail(f"{redacted_url(target.url)}: {exc}")


def _print_window(report: WindowReport) -> None:
    from fabric.remediation.burnin import PortVerdict
    from fabric.terminal import LineTable, console, one_line

    terminal = console()
    typer.echo(f"burn-in window {report.started:%H:%M:%S}-{report.ended:%H:%M:%S} UTC, {report.events} UFM events; "
               "switches that lost a port or had one idle or alerted:")
    table = LineTable(terminal, "", "switch", "survived", "failed", "down", "idle", "alerts")
    for switch in report.switches:
        if not switch.survived or switch.counts[PortVerdict.IDLE] or switch.utilisation_alerts:
            table.add(switch.switch, "yes" if switch.survived else "no",
                      *(switch.counts[v] for v in (PortVerdict.FAILED, PortVerdict.DOWN, PortVerdict.IDLE)),
                      switch.utilisation_alerts)
    terminal.print(table)
    kept = sum(s.survived for s in report.switches)
    survived = sum(p.verdict is PortVerdict.SURVIVED for p in report.ports)
    typer.echo(f"{kept} of {len(report.switches)} switches and {survived} of {len(report.ports)} ports survived"
               + ("" if report.telemetry else " (no --telemetry: ports without traffic not told)"))
    for port in report.ports:
        if port.verdict is not PortVerdict.SURVIVED:
            typer.echo(one_line(f"{port.port}: {port.verdict.value}: {port.why}"))
    acted = [entry for entry in report.decisions if entry["action"] != "record"]
    typer.echo(f"{len(acted)} decisions, dry run (the daemon acts: POST /api/v1/burnin):")
    for entry in acted:
        typer.echo(one_line(f"{entry['action']} {entry.get('component', '')}: {entry['reason']}"))


def window_dict(report: WindowReport) -> dict[str, Any]:
    from fabric.remediation.burnin import report_dict

    return {"started": report.started.isoformat(), "ended": report.ended.isoformat(), "events": report.events,
            "telemetry": report.telemetry, **report_dict(report.ports, report.switches),
            "decisions": report.decisions}
