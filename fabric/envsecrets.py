"""The secrets read from the environment, and the names each is read under.

Each secret has the name that mirrors its place in the configuration (``[ufm] password`` is
``FABRIC_UFM__PASSWORD``, ``[tickets.jira] token`` is ``FABRIC_TICKETS__JIRA__TOKEN``); the three that had a
single-underscore name before (``FABRIC_UFM_PASSWORD``, ``FABRIC_UFM_TOKEN``, ``FABRIC_JIRA_TOKEN``) are still
read under it, an alias. Both spellings set to different values is refused rather than one silently preferred:
an operator who rotated one and forgot the other must not find out from a 401 at 3 a.m. which one won.

Under systemd (``LoadCredential=``) or in a container (secrets mounted as files), a secret may instead be a file
named like its variable in the directory ``$CREDENTIALS_DIRECTORY`` names (``.../FABRIC_UFM__PASSWORD``, its whole
content, surrounding whitespace removed): that keeps it out of the process's environment, which any process of the
same user can read, and out of the unit file. It follows the same rule: set in the environment too, to a different
value, is refused; an empty or unreadable credential is refused too, rather than taken as no secret.

Here, below ``fabric.ufm`` and ``fabric.config``, because both read these secrets (the command line reaches UFM
without a configuration file). A value is never part of an error message.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from fabric.errors import ErrorKind, FabricError
from topology.errors import InputError
from topology.inputs import SECRET, read_input

__all__ = ["ADMIN_TOKEN", "CREDENTIALS_DIRECTORY", "JIRA_TOKEN", "UFM_PASSWORD", "UFM_TOKEN", "WEBHOOK_SECRET",
           "WEBHOOK_TOKEN", "EnvSecret", "EnvSecretError", "read_secret_file"]


CREDENTIALS_DIRECTORY = "CREDENTIALS_DIRECTORY"
"""The variable systemd sets to the directory of the unit's credentials (``LoadCredential=``)."""


class EnvSecretError(FabricError, ValueError):
    """A secret set under two of its names (or in the environment and as a credential), to different values; or a
    credential that is empty or cannot be read."""

    kind = ErrorKind.CONFIG


@dataclass(frozen=True, slots=True)
class EnvSecret:
    name: str
    """The name mirroring the configuration key (``FABRIC_<SECTION>__<KEY>``)."""
    alias: str | None = None
    """The older single-underscore name, still read."""

    def is_set(self) -> bool:
        """Set (not empty) under either name, or a credential of its name exists (even empty: ``read`` refuses it)."""
        return any(os.environ.get(name) for name in self.names()) or self.credential_path() is not None

    def names(self) -> tuple[str, ...]:
        return (self.name,) if self.alias is None else (self.name, self.alias)

    def credential_path(self) -> Path | None:
        """``$CREDENTIALS_DIRECTORY/<name>`` when the variable is set and that file exists."""
        directory = os.environ.get(CREDENTIALS_DIRECTORY)
        if not directory:
            return None
        path = Path(directory) / self.name
        return path if path.exists() else None

    def conflict(self) -> str | None:
        """The problem when two of the secret's sources (its name, its alias, its credential) are set to different
        values (empty variables count as unset), or when its credential is empty or cannot be read."""
        value = self._from_environment()
        if self.alias is not None:
            older = os.environ.get(self.alias)
            if value and older and value != older:
                return (f"{self.name} and {self.alias} are both set, to different values: unset one ({self.alias} "
                        f"is the older name of {self.name})")
        try:
            credential = self._from_credential()
        except EnvSecretError as exc:
            return str(exc)
        if value and credential is not None and value != credential:
            variable = next(name for name in self.names() if os.environ.get(name) == value)
            return (f"{variable} and the credential {self.credential_path()} are both set, to different values: "
                    "unset or remove one")
        return None

    def read(self) -> str | None:
        """The secret (``None``: set under neither name nor as a credential). Read when called, never kept."""
        problem = self.conflict()
        if problem is not None:
            raise EnvSecretError(problem)
        return self._from_environment() or self._from_credential()

    def _from_environment(self) -> str | None:
        return next((value for name in self.names() if (value := os.environ.get(name))), None)

    def _from_credential(self) -> str | None:
        path = self.credential_path()
        if path is None:
            return None
        try:
            text = read_secret_file(path)
        except InputError as exc:
            raise EnvSecretError(f"{self.name}: cannot read the credential {path}: {exc.message}") from None
        if not text:
            raise EnvSecretError(f"{self.name}: the credential {path} is empty")
        return text


UFM_PASSWORD = EnvSecret("FABRIC_UFM__PASSWORD", "FABRIC_UFM_PASSWORD")
UFM_TOKEN = EnvSecret("FABRIC_UFM__TOKEN", "FABRIC_UFM_TOKEN")
JIRA_TOKEN = EnvSecret("FABRIC_TICKETS__JIRA__TOKEN", "FABRIC_JIRA_TOKEN")
ADMIN_TOKEN = EnvSecret("FABRIC_API__ADMIN_TOKEN")
WEBHOOK_SECRET = EnvSecret("FABRIC_TICKETS__WEBHOOK_SECRET")
WEBHOOK_TOKEN = EnvSecret("FABRIC_TICKETS__WEBHOOK_TOKEN")


def read_secret_file(path: Path) -> str:
    """A secret file's whole content, surrounding whitespace removed (every secret file, credential or ``*_file``
    key, is read here): ``InputError`` when it cannot be read, is larger than ``topology.inputs.SECRET`` or is not
    UTF-8 text; the message never holds the content."""
    try:
        return read_input(path, SECRET).decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text: {exc.reason} at byte {exc.start}", source=str(path)) from None
