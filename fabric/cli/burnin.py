"""``fabricctl burnin``: plan a burn-in workload that loads every cable of a fabric."""

from __future__ import annotations

import gc
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from fabric.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    ApiOption,
    ByOption,
    FormatOption,
    OutputFormat,
    command_group,
    fail,
    positive_duration,
    reason_text,
    replacing,
)
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
    from fabric.api.models import BurninWindowOut, SurvivorsReport
    from fabric.cli.api_client import ApiClient
    from fabric.config import ServiceConfig
    from fabric.replay.burnin import WindowReport
    from fabric.ufm.connect import UfmTarget
    from topology.burnin import BurninPlan
    from topology.model import Fabric

burnin_app = command_group("Burn-in: load every cable, then keep what survived.")

PLAN_FILE = "burnin-plan.json"
POLL_SECONDS = 5.0
"""How often ``burnin watch --api`` asks the daemon whether its window has ended (a window lasts hours)."""


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
    plan: Annotated[Path | None, typer.Option(
        "--plan", "-p", help="The wiring plan (NDT CSV); not with --api (the daemon has its own).")] = None,
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
    api: ApiOption = None,
    reason: Annotated[str | None, typer.Option(
        help="With --api: why the window is asked (kept in the audit trail).")] = None,
    requested_by: ByOption = "operator",
    wait: Annotated[bool, typer.Option(
        "--wait/--no-wait", help="With --api: wait for the window's report (the window runs in the daemon either "
                                 "way).")] = True,
    output_format: FormatOption = OutputFormat.TABLE,
) -> None:
    """Watch a burn-in window on UFM: the survivors per port and switch, and what the policy would take out.

    The window's events are judged by the service's rules with [burnin]'s stricter thresholds and decided by the
    same policy, guard, cap and breaker, dry: nothing is written. With --api the running daemon's window is asked
    instead (POST /api/v1/burnin, the admin token in FABRIC_API__ADMIN_TOKEN): the daemon acts on what fails, and
    this command waits for its report. Exit 0 when every switch survived, 1 when some did not, 2 on bad input or an
    unreachable UFM or daemon.
    """
    from fabric.config import ConfigError, load_config
    from fabric.durations import parse_duration
    from topology.plancache import default_directory, read_plan

    if api is not None:
        given = [option for option, value in (("--plan", plan), ("--config", config), ("--telemetry", telemetry))
                 if value is not None]
        if given:
            fail(f"--api asks the running daemon, which has its own plan, configuration and UFM Telemetry: leave "
                 f"out {', '.join(given)}")
        _ask_daemon(api, duration, reason_text(reason or ""), requested_by, wait, output_format)
    if plan is None:
        fail("--plan is required (or --api URL: the running daemon's window)")
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


def _ask_daemon(api: str, duration: str | None, reason: str, by: str, wait: bool,
                output_format: OutputFormat) -> NoReturn:
    """The daemon's window asked (``POST /burnin``), then, with ``wait``, its report once it ended; exits."""
    import time

    from fabric.api.models import BurninAsked
    from fabric.cli.api_client import ApiClient

    body = {"by": by, "reason": reason}
    if duration is not None:
        positive_duration(duration, "--duration", "a burn-in window must last longer than zero")
        body["duration"] = duration
    with ApiClient(api) as client:
        window = client.post_as(BurninAsked, "/burnin", body).window
        typer.echo(f"burn-in window {window.id} asked of the daemon at {client.shown}, {window.duration_s:g} s from "
                   "its next cycle; it runs there whether or not this command waits", err=True)
        while wait and window.ended_at is None:
            time.sleep(POLL_SECONDS)
            window = _daemon_window(client, window.id)
    if output_format is OutputFormat.JSON:
        from fabric.cli.common import print_json

        print_json(window.model_dump(mode="json"))
    elif window.report is not None:
        _print_daemon_window(window, window.report)
    if window.report is None:
        raise typer.Exit(EXIT_OK)
    raise typer.Exit(EXIT_OK if window.report.switches.failed == 0 else EXIT_FINDINGS)


def _daemon_window(client: ApiClient, window_id: int) -> BurninWindowOut:
    from fabric.api.models import BurninWindowOut

    for window in client.get_list_of(BurninWindowOut, "/burnin", {"limit": 100}):
        if window.id == window_id:
            return window
    fail(f"the daemon at {client.shown} no longer lists burn-in window {window_id}")


def _print_daemon_window(window: BurninWindowOut, report: SurvivorsReport) -> None:
    from fabric.terminal import one_line

    compared = report.telemetry is not None and report.telemetry.compared
    typer.echo(f"burn-in window {window.id} of the daemon, {window.started_at:%H:%M:%S}-{window.ended_at:%H:%M:%S} "
               "UTC")
    typer.echo(_SWITCHES_SHOWN)
    _switch_table([(s.switch, s.survived, s.ports.failed, s.ports.down, s.ports.idle, s.utilisation_alerts)
                   for s in report.by_switch])
    typer.echo(f"{report.switches.survived} of {report.switches.survived + report.switches.failed} switches and "
               f"{report.ports.survived} of {sum(report.ports.model_dump().values())} ports survived"
               + ("" if compared else " (ports without traffic not told: no UFM Telemetry compared)"))
    for port in report.not_survived:
        typer.echo(one_line(f"{port.port}: {port.verdict}: {port.why}"))
    mode = "dry run" if window.dry_run else "live"
    typer.echo(f"{len(report.findings)} finding(s) handed to the daemon's policy ({mode}; see fabricctl "
               "decisions):")
    for finding in report.findings:
        typer.echo(one_line(f"{finding.rule} {finding.component}: {finding.reason}"))


_SWITCHES_SHOWN = "switches that lost a port or had one idle or alerted:"


def _switch_table(rows: list[tuple[str, bool, int, int, int, int]]) -> None:
    """The switches that lost a port or had one idle or alerted: (switch, survived, failed, down, idle, alerts)."""
    from fabric.terminal import LineTable, console

    terminal = console()
    table = LineTable(terminal, "", "switch", "survived", "failed", "down", "idle", "alerts")
    for switch, survived, failed, down, idle, alerts in rows:
        if not survived or idle or alerts:
            table.add(switch, "yes" if survived else "no", failed, down, idle, alerts)
    terminal.print(table)


def _print_window(report: WindowReport) -> None:
    from fabric.remediation.burnin import PortVerdict
    from fabric.terminal import one_line

    typer.echo(f"burn-in window {report.started:%H:%M:%S}-{report.ended:%H:%M:%S} UTC, {report.events} UFM events")
    typer.echo(_SWITCHES_SHOWN)
    _switch_table([(s.switch, s.survived, s.counts[PortVerdict.FAILED], s.counts[PortVerdict.DOWN],
                    s.counts[PortVerdict.IDLE], s.utilisation_alerts) for s in report.switches])
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
