"""How a command reaches a live UFM: the ``--ufm*`` options, shared by every command that reads one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fabric.cli.common import fail

if TYPE_CHECKING:
    from fabric.ufm.connect import UfmTarget

UfmUrl = Annotated[str | None, typer.Option("--ufm", envvar="FABRIC_UFM_URL", help="Base URL of a live UFM.")]
UfmAuthOption = Annotated[str, typer.Option("--ufm-auth", help="basic (/ufmRest), token (/ufmRestV3) or session "
                                            "(/ufmRestV2).")]
UfmUser = Annotated[str, typer.Option("--ufm-user", envvar="FABRIC_UFM_USER", help="UFM user (basic, session).")]
UfmSecretFile = Annotated[Path | None, typer.Option(
    "--ufm-secret-file", help="File holding the password or token; otherwise FABRIC_UFM_PASSWORD / FABRIC_UFM_TOKEN.")]
UfmCa = Annotated[Path | None, typer.Option("--ufm-ca-bundle", help="CA bundle for UFM's certificate.")]
UfmInsecure = Annotated[bool, typer.Option("--ufm-insecure", help="Do not verify UFM's TLS certificate.")]


def ufm_target(url: str, auth: str, user: str, secret_file: Path | None, ca: Path | None,
               insecure: bool) -> UfmTarget:
    from fabric.ufm.connect import AuthMode, UfmTarget

    try:
        mode = AuthMode(auth)
    except ValueError:
        fail(f"--ufm-auth must be one of {', '.join(m.value for m in AuthMode)}")
    return UfmTarget(url, mode, user, secret_file, ca, insecure)
