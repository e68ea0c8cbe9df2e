"""``fabricctl simulate``: a UFM that runs anywhere."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fabric.cli.common import fail
from topology.errors import InputError
from topology.printable import visible


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
    speed: Annotated[float, typer.Option(min=0.0, help="Simulated seconds per real second (0 freezes). A daemon run "
                                                      "against a simulator faster than real time keeps to its "
                                                      "clock with fabricctl run --clock simulator.")] = 1.0,
    job_seconds: Annotated[float, typer.Option(min=0.0, help="Simulated seconds a port action runs.")] = 2.0,
    miswire: Annotated[int, typer.Option(min=0, help="Swap this many cable pairs in the as-built fabric.")] = 0,
    factory_names: Annotated[bool, typer.Option(
        "--factory-names", help="Serve the switches under factory names (model and serial, or the GUID alone), as "
                                "a fabric comes up before anyone names them: for fabricctl identify.")] = False,
    seed: Annotated[int, typer.Option(help="Seed for random choices, planted miswires and factory names.")] = 0,
    max_events: Annotated[int, typer.Option(min=1, help="Events UFM's history keeps (GET /app/events lists them "
                                                          "all), the oldest dropped first.")] = 250_000,
    event_log: Annotated[Path | None, typer.Option(
        help="Write every event to this file as event.log lines. A file holding an earlier run's events is "
             "refused (replay would read both runs as one history) unless --append.")] = None,
    append: Annotated[bool, typer.Option(
        "--append", help="Add this run's events to an --event-log file that holds some already.")] = False,
    offline: Annotated[str | None, typer.Option(
        help="Do not serve: run this much simulated time (e.g. 2h) at once, write the event log, exit.")] = None,
    snapshot: Annotated[Path | None, typer.Option(
        help="Write the fabric's UFM snapshot (systems.json, links.json, ports.json as GET /resources/... serves "
             "them) to this directory. Taken at the start, before any scenario step, so that every cable is in "
             "it: links.json lists only links that are up, and replay cannot place the events of a cable "
             "missing from it. Then: fabricctl replay --as-built DIR --events EVENT_LOG.")] = None,
) -> None:
    """Serve a simulated UFM REST API over a plan, with injectable faults (demos, tests, benchmarks)."""
    from fabric.simulator.cli import SimulateOptions, run
    from fabric.simulator.scenario import ScenarioError, parse_duration

    try:
        seconds = parse_duration(offline) if offline is not None else None
    except ValueError as exc:
        fail(f"--offline: {exc}")
    try:
        options = SimulateOptions(
            plan=plan, preset=preset, scenarios=scenario or [], host=host, port=port, tls=tls, user=user,
            password=password, ufm_version=ufm_version, rate=speed, job_seconds=job_seconds, miswire=miswire,
            factory_names=factory_names, seed=seed, max_events=max_events, event_log=event_log, append=append,
            offline=seconds, snapshot=snapshot)
        code = run(options, lambda line: typer.echo(visible(line), err=True))  # scenario names, step errors
    except (InputError, ScenarioError, ValueError, OSError) as exc:
        fail(str(exc))
    raise typer.Exit(code)
