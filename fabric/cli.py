"""``fabricctl``: the command line. Commands import their machinery lazily so that one-shot tools start fast.

Exit codes everywhere: 0 ok, 1 findings (the fabric does not match, something needs attention), 2 unusable
input or a usage error.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from fabric.cli_common import EXIT_FINDINGS, EXIT_OK, FormatOption, OutputFormat, fail, print_json
from fabric.cli_ops import register as register_ops
from topology.errors import InputError

app = typer.Typer(
    name="fabricctl",
    help="Safe, explainable remediation of InfiniBand fat-tree fabrics under NVIDIA UFM.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
plan_app = typer.Typer(help="Wiring plans.", no_args_is_help=True)
app.add_typer(plan_app, name="plan")
register_ops(app)


@plan_app.command("generate")
def plan_generate(
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the NDT CSV ('-' for stdout).")],
    preset: Annotated[str, typer.Option(help="Starting point: h100-4k, h100-32k (8x) or tiny.")] = "h100-4k",
    pods: Annotated[int | None, typer.Option(help="Pods.")] = None,
    hosts_per_pod: Annotated[int | None, typer.Option(help="Hosts per pod.")] = None,
    rails: Annotated[int | None, typer.Option(help="Adapters per host = leaves per pod.")] = None,
    spines_per_pod: Annotated[int | None, typer.Option(help="Spines per pod = core groups.")] = None,
    cores_per_group: Annotated[int | None, typer.Option(help="Cores in each core group.")] = None,
    leaf_spine_cables: Annotated[int | None, typer.Option(help="Cables between each leaf and spine.")] = None,
    spine_core_cables: Annotated[int | None, typer.Option(help="Cables between each spine and core.")] = None,
    radix: Annotated[int | None, typer.Option(help="Ports per switch.")] = None,
    speed: Annotated[str | None, typer.Option(help="Link generation: HDR, NDR, XDR...")] = None,
) -> None:
    """Write the wiring plan of a rail-optimised three-tier fat tree as an NDT CSV."""
    from topology.formats.ndt import write_ndt
    from topology.generate import fat_tree
    from topology.generate import preset as get_preset

    overrides = {k: v for k, v in {
        "pods": pods, "hosts_per_pod": hosts_per_pod, "rails": rails, "spines_per_pod": spines_per_pod,
        "cores_per_group": cores_per_group, "leaf_spine_cables": leaf_spine_cables,
        "spine_core_cables": spine_core_cables, "radix": radix, "speed": speed.upper() if speed else None,
    }.items() if v is not None}
    try:
        spec = get_preset(preset, **overrides)
        fabric = fat_tree(spec)
    except (KeyError, ValueError) as exc:
        fail(str(exc).strip("'\""))
    if str(output) == "-":
        write_ndt(fabric, sys.stdout)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        with output.open("w", newline="") as handle:
            write_ndt(fabric, handle)
        typer.echo(f"wrote {output}: {spec.switches} switches, {spec.cables} cables", err=True)


UfmUrl = Annotated[str | None, typer.Option("--ufm", envvar="FABRIC_UFM_URL", help="Base URL of a live UFM.")]
UfmAuthOption = Annotated[str, typer.Option("--ufm-auth", help="basic (/ufmRest), token (/ufmRestV3) or session "
                                            "(/ufmRestV2).")]
UfmUser = Annotated[str, typer.Option("--ufm-user", envvar="FABRIC_UFM_USER", help="UFM user (basic, session).")]
UfmSecretFile = Annotated[Path | None, typer.Option(
    "--ufm-secret-file", help="File holding the password or token; otherwise FABRIC_UFM_PASSWORD / FABRIC_UFM_TOKEN.")]
UfmCa = Annotated[Path | None, typer.Option("--ufm-ca-bundle", help="CA bundle for UFM's certificate.")]
UfmInsecure = Annotated[bool, typer.Option("--ufm-insecure", help="Do not verify UFM's TLS certificate.")]


def ufm_target(url: str, auth: str, user: str, secret_file: Path | None, ca: Path | None, insecure: bool) -> Any:
    from fabric.ufm_connect import AuthMode, UfmTarget

    try:
        mode = AuthMode(auth)
    except ValueError:
        fail(f"--ufm-auth must be one of {', '.join(m.value for m in AuthMode)}")
    return UfmTarget(url, mode, user, secret_file, ca, insecure)


@app.command()
def verify(
    plan: Annotated[Path, typer.Option("--plan", "-p", help="The wiring plan (NDT CSV).")],
    as_built: Annotated[Path | None, typer.Option(
        "--as-built", "-a",
        help="UFM snapshot directory (systems.json, links.json, optional ports.json), an ibnetdiscover dump, "
             "or another NDT CSV.")] = None,
    ufm: UfmUrl = None,
    ufm_auth: UfmAuthOption = "basic",
    ufm_user: UfmUser = "admin",
    ufm_secret_file: UfmSecretFile = None,
    ufm_ca_bundle: UfmCa = None,
    ufm_insecure: UfmInsecure = False,
    output_format: FormatOption = OutputFormat.TABLE,
    guard: Annotated[float, typer.Option(min=0.0, max=1.0, help="Share of planned paths to core a leaf needs.")]
    = 0.75,
    worst: Annotated[int, typer.Option(min=1, help="How many worst offenders to list per category.")] = 10,
    lenient_plan: Annotated[bool, typer.Option(
        help="Load a plan that cables a port twice: keep the first cable, report the conflict.")] = False,
) -> None:
    """Check the as-built cabling (files or a live UFM) against the wiring plan.

    Exit 0 when it matches, 1 when not, 2 on bad input.
    """
    from fabric.asbuilt import load_as_built
    from topology.formats.ndt import read_ndt
    from topology.verify import verify as run_verify

    if (as_built is None) == (ufm is None):
        fail("give exactly one as-built source: --as-built PATH or --ufm URL")
    # A one-shot command that builds ~100k objects and frees them at exit: the cyclic collector would only
    # rescan them over and over (a fifth of the run time on the reference fabric).
    gc.disable()
    try:
        planned = read_ndt(plan, lenient=lenient_plan)
        if as_built is not None:
            actual = load_as_built(as_built)
        else:
            assert ufm is not None
            actual = _fetch_ufm(ufm_target(ufm, ufm_auth, ufm_user, ufm_secret_file, ufm_ca_bundle, ufm_insecure))
    except InputError as exc:
        fail(str(exc))
    report = run_verify(planned, actual, guard)
    if output_format is OutputFormat.JSON:
        print_json(report.to_dict(worst))
    else:
        from rich.console import Console

        from fabric.verify_view import render_verify

        render_verify(report, Console(), worst)
    raise typer.Exit(EXIT_OK if report.matches else EXIT_FINDINGS)


def _fetch_ufm(target: Any) -> Any:
    import asyncio

    from fabric.asbuilt import fetch_from_ufm
    from fabric.ufm.errors import UfmError
    from fabric.ufm_connect import ConnectError

    async def fetch() -> Any:
        async with target.client() as client:
            return await fetch_from_ufm(client)

    try:
        return asyncio.run(fetch())
    except (ConnectError, UfmError) as exc:
        fail(f"{target.url}: {exc}")


@app.command()
def replay(
    as_built: Annotated[Path, typer.Option(
        "--as-built", "-a", help="UFM snapshot directory (systems.json, links.json, optional ports.json): the "
                                 "fabric's names, GUIDs and ports, and its model unless --plan is given.")],
    events: Annotated[Path, typer.Option(
        "--events", "-e", help="Recorded UFM events: an event.log (.gz too), a GET /app/events JSON list "
                               "(bare or {\"data\": [...]}, either UFM payload shape) or JSON lines.")],
    plan: Annotated[Path | None, typer.Option(
        "--plan", "-p", help="The wiring plan (NDT CSV) as the model, joined with the snapshot's GUIDs.")] = None,
    config: Annotated[Path | None, typer.Option(
        "--config", "-c", help="Service configuration (TOML) whose rules, guard and policy to replay; "
                               "FABRIC_* variables apply. Always a dry run.")] = None,
    interval: Annotated[str | None, typer.Option(
        help="Virtual cycle length, e.g. 60s (default: the configuration's daemon.interval, 60s).")] = None,
    output_format: FormatOption = OutputFormat.TABLE,
) -> None:
    """Replay a recorded UFM event log through the policy, dry: every decision it would have taken, and why.

    Exit 0 when no action would be taken, 1 when some would, 2 on bad input.
    """
    from fabric.config import ConfigError
    from fabric.replay import render_table, run_replay

    gc.disable()  # a one-shot command building up to millions of objects it keeps until exit (see verify)
    try:
        report = run_replay(as_built, events, plan=plan, config=config, interval=interval)
    except (InputError, ConfigError) as exc:
        fail(str(exc))
    finally:
        gc.enable()
    if output_format is OutputFormat.JSON:
        report.write_json(sys.stdout)
    else:
        from rich.console import Console

        render_table(report, Console())
    raise typer.Exit(EXIT_FINDINGS if report.would_act else EXIT_OK)


@app.command()
def demo(
    workdir: Annotated[Path, typer.Option(help="Where the demo writes its plan and as-built files.")] = Path(
        "out/demo"),
    seed: Annotated[int, typer.Option(help="Seed for the planted faults.")] = 7,
) -> None:
    """Generate the reference plan, build an as-built fabric with planted cabling faults, and verify it."""
    from fabric.demo import run_demo

    raise typer.Exit(run_demo(workdir, seed))


@app.command()
def simulate(
    plan: Annotated[Path | None, typer.Option("--plan", "-p", help="The wiring plan (NDT CSV) to simulate.")] = None,
    preset: Annotated[str | None, typer.Option(help="Generate the plan instead: tiny, h100-4k, h100-32k.")] = None,
    scenario: Annotated[list[Path] | None, typer.Option(
        "--scenario", "-s", help="Scenario file (.toml/.yaml); repeatable.")] = None,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on.")] = 8000,
    tls: Annotated[bool, typer.Option("--tls", help="Serve HTTPS with a fresh self-signed certificate.")] = False,
    user: Annotated[str, typer.Option(help="UFM user name.")] = "admin",
    password: Annotated[str, typer.Option(help="UFM password.")] = "123456",
    ufm_version: Annotated[str, typer.Option(
        help="UFM release to imitate; 6.16 and older serve the legacy event shape.")] = "6.20.0",
    speed: Annotated[float, typer.Option(min=0.0, help="Simulated seconds per real second (0 freezes).")] = 1.0,
    job_seconds: Annotated[float, typer.Option(min=0.0, help="Simulated seconds a port action runs.")] = 2.0,
    miswire: Annotated[int, typer.Option(min=0, help="Swap this many cable pairs in the as-built fabric.")] = 0,
    seed: Annotated[int, typer.Option(help="Seed for random choices and planted miswires.")] = 0,
    event_log: Annotated[Path | None, typer.Option(help="Append every event to this file as event.log lines.")]
    = None,
    offline: Annotated[str | None, typer.Option(
        help="Do not serve: run this much simulated time (e.g. 2h) at once, write the event log, exit.")] = None,
) -> None:
    """Serve a simulated UFM REST API over a plan, with injectable faults (demos, tests, benchmarks)."""
    from fabric.simulator.cli import SimulateOptions, run
    from fabric.simulator.scenario import ScenarioError, parse_duration

    try:
        options = SimulateOptions(
            plan=plan, preset=preset, scenarios=scenario or [], host=host, port=port, tls=tls, user=user,
            password=password, ufm_version=ufm_version, rate=speed, job_seconds=job_seconds, miswire=miswire,
            seed=seed, event_log=event_log, offline=parse_duration(offline) if offline is not None else None)
        code = run(options, lambda line: typer.echo(line, err=True))
    except (InputError, ScenarioError, ValueError, OSError) as exc:
        fail(str(exc))
    raise typer.Exit(code)


def main() -> None:  # pragma: no cover - console-script shim
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
