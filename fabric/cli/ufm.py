"""How a command reaches a live UFM: the ``--ufm*`` options, shared by every command that reads one, and
``fabricctl ufm``, the commands that only read a UFM."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NamedTuple, TypeVar

import typer

from fabric.cli.common import command_group, fail
from fabric.ufm.address import DEFAULT_TIMEOUT_S, TELEMETRY_INSTANCE, TELEMETRY_URL
from topology.redact import redacted_url

if TYPE_CHECKING:
    from fabric.ufm.connect import UfmTarget
    from fabric.ufm.spooled import SpooledList
    from topology.model import Fabric

T = TypeVar("T")

UfmUrl = Annotated[str | None, typer.Option("--ufm", envvar="FABRIC_UFM_URL", help="Base URL of a live UFM.")]
UfmAuthOption = Annotated[str, typer.Option("--ufm-auth", help="basic (/ufmRest), token (/ufmRestV3) or session "
                                            "(/ufmRestV2).")]
UfmUser = Annotated[str, typer.Option("--ufm-user", envvar="FABRIC_UFM_USER", help="UFM user (basic, session).")]
UfmSecretFile = Annotated[Path | None, typer.Option(
    "--ufm-secret-file",
    help="File holding the password or token; otherwise FABRIC_UFM__PASSWORD / FABRIC_UFM__TOKEN.")]
UfmCa = Annotated[Path | None, typer.Option("--ufm-ca-bundle", help="CA bundle for UFM's certificate.")]
UfmInsecure = Annotated[bool, typer.Option("--ufm-insecure", help="Do not verify UFM's TLS certificate.")]
UfmTimeout = Annotated[float, typer.Option(
    "--ufm-timeout", metavar="SECONDS",
    help="Seconds one UFM request may take to connect, send or read; a read that times out is tried 3 times.")]


def ufm_target(url: str, auth: str, user: str, secret_file: Path | None, ca: Path | None,
               insecure: bool, timeout: float = DEFAULT_TIMEOUT_S) -> UfmTarget:
    """The UFM the ``--ufm*`` options name; a value that cannot work fails here, naming its option."""
    from fabric.ufm.address import check_base_url, check_timeout
    from fabric.ufm.connect import AuthMode, UfmTarget

    try:
        check_base_url(url)
    except ValueError as exc:
        fail(f"--ufm {redacted_url(url)!r}: {exc}")
    try:
        check_timeout(timeout)
    except ValueError as exc:
        fail(f"--ufm-timeout: {exc}")
    try:
        mode = AuthMode(auth)
    except ValueError:
        fail(f"--ufm-auth must be one of {', '.join(m.value for m in AuthMode)}")
    return UfmTarget(url, mode, user, secret_file, ca, insecure, timeout)


def read_snapshot(target: UfmTarget, use: Callable[[Mapping[str, SpooledList], str], T]) -> T:
    """``use`` of UFM's systems, links and ports (``fabric.ufm.snapshot.spooled_topology``) and of where they were
    read (base URL and REST prefix); errors of UFM's exit 2."""
    import asyncio

    from fabric.ufm.connect import ConnectError
    from fabric.ufm.errors import UfmError
    from fabric.ufm.snapshot import spooled_topology

    async def fetch() -> T:
        async with target.client() as client, spooled_topology(client) as lists:
            # Where it was read, as reports show it: never with a password.
            return use(lists, redacted_url(client.base_url + client.prefix))

    try:
        return asyncio.run(fetch())
    except (ConnectError, UfmError) as exc:
        fail(f"{redacted_url(target.url)}: {exc}")


def read_as_built(as_built: Path | None, ufm: str | None, target: Callable[[str], UfmTarget]) -> Fabric:
    """The as-built fabric from exactly one source: ``as_built`` (a UFM snapshot directory, an ibnetdiscover dump or
    an NDT CSV) or the live UFM at ``ufm`` (reached through ``target(ufm)``). Bad input raises ``InputError``."""
    if (as_built is None) == (ufm is None):
        fail("give exactly one as-built source: --as-built PATH or --ufm URL")
    if as_built is not None:
        from topology.formats.asbuilt import load_as_built

        return load_as_built(as_built)
    assert ufm is not None
    from fabric.ufm.snapshot import read_topology

    return read_snapshot(target(ufm), lambda lists, source: read_topology(lists, source, prefix=source).fabric)


ufm_app = command_group("Read a live UFM.")


@ufm_app.command("snapshot")
def snapshot(
    output: Annotated[Path, typer.Option(
        "--output", "-o", help="Directory to write systems.json, links.json and ports.json to (created if need "
                               "be; files of an earlier snapshot there are replaced).")],
    ufm: UfmUrl = None,
    ufm_auth: UfmAuthOption = "basic",
    ufm_user: UfmUser = "admin",
    ufm_secret_file: UfmSecretFile = None,
    ufm_ca_bundle: UfmCa = None,
    ufm_insecure: UfmInsecure = False,
    ufm_timeout: UfmTimeout = DEFAULT_TIMEOUT_S,
    telemetry: Annotated[str | None, typer.Option(
        "--telemetry", help="Also save one UFM Telemetry sample, read from this URL (its secondary instance: "
                            f"{TELEMETRY_URL} on the UFM host), to <output>/telemetry/<its time>.csv: the "
                            "directory replay --telemetry reads, which later snapshots add to.")] = None,
    telemetry_instance: Annotated[str, typer.Option(
        help="The UFM Telemetry instance read (GET <url>/csv/xcset/<instance>).")] = TELEMETRY_INSTANCE,
) -> None:
    """Save UFM's systems, links and ports: the directory verify --as-built and replay --as-built read.

    Exit 0 when written, 2 when UFM (or UFM Telemetry) cannot be read or the directory written.
    """
    if ufm is None:
        fail("--ufm URL is required (or set FABRIC_UFM_URL)")
    target = ufm_target(ufm, ufm_auth, ufm_user, ufm_secret_file, ufm_ca_bundle, ufm_insecure, ufm_timeout)
    # Both read before anything is written: a sample that cannot be read leaves no half-written snapshot.
    sample = read_telemetry(telemetry, telemetry_instance, target) if telemetry is not None else None

    def save(lists: Mapping[str, SpooledList], source: str) -> tuple[dict[str, int], str]:
        from fabric.ufm.snapshot import save_topology

        try:
            counts = save_topology(lists, output)
            if sample is not None:
                (output / "telemetry").mkdir(exist_ok=True)
                (output / "telemetry" / sample.name).write_bytes(sample.body)
        except OSError as exc:
            fail(f"--output {output}: cannot write the snapshot: {exc.strerror or exc}")
        return counts, source

    counts, source = read_snapshot(target, save)
    saved = f", a UFM Telemetry sample to telemetry/{sample.name}" if sample is not None else ""
    typer.echo(f"wrote {output}: {counts['systems']} systems, {counts['links']} links, {counts['ports']} ports "
               f"from {source}{saved}", err=True)


class TelemetrySample(NamedTuple):
    name: str
    """The file it is saved as: its time, which orders the directory as replay reads it."""
    body: bytes


def read_telemetry(url: str, instance: str, target: UfmTarget) -> TelemetrySample:
    """One UFM Telemetry sample, checked to be one (UFM's TLS options and timeout apply); errors exit 2."""
    import asyncio

    from fabric.telemetry.errors import TelemetryInputError
    from fabric.telemetry.parse import parse_sample
    from fabric.ufm.errors import UfmError
    from fabric.ufm.telemetry import TelemetryClient

    async def fetch() -> bytes:
        async with TelemetryClient(url, instance, verify=not target.insecure, ca_bundle=target.ca_bundle,
                                   timeout=target.timeout) as client:
            return await client.sample()

    try:
        body = asyncio.run(fetch())
        sample = parse_sample(body, redacted_url(url))
    except (UfmError, TelemetryInputError, ValueError) as exc:
        fail(f"--telemetry {redacted_url(url)}: {exc}")
    return TelemetrySample(f"{sample.time.strftime('%Y%m%dT%H%M%S.%fZ')}.csv", body)
