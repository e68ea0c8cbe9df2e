"""The secrets read from the environment, and the names each is read under.

Each secret has the name that mirrors its place in the configuration (``[ufm] password`` is
``FABRIC_UFM__PASSWORD``, ``[tickets.jira] token`` is ``FABRIC_TICKETS__JIRA__TOKEN``); the three that had a
single-underscore name before (``FABRIC_UFM_PASSWORD``, ``FABRIC_UFM_TOKEN``, ``FABRIC_JIRA_TOKEN``) are still
read under it, an alias. Both spellings set to different values is refused rather than one silently preferred:
an operator who rotated one and forgot the other must not find out from a 401 at 3 a.m. which one won.

Here, below ``fabric.ufm`` and ``fabric.config``, because both read these secrets (the command line reaches UFM
without a configuration file). A value is never part of an error message.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from fabric.errors import ErrorKind, FabricError

__all__ = ["ADMIN_TOKEN", "JIRA_TOKEN", "UFM_PASSWORD", "UFM_TOKEN", "WEBHOOK_SECRET", "WEBHOOK_TOKEN",
           "EnvSecret", "EnvSecretError"]


class EnvSecretError(FabricError, ValueError):
    """A secret set under two of its names, to different values."""

    kind = ErrorKind.CONFIG


@dataclass(frozen=True, slots=True)
class EnvSecret:
    name: str
    """The name mirroring the configuration key (``FABRIC_<SECTION>__<KEY>``)."""
    alias: str | None = None
    """The older single-underscore name, still read."""

    def is_set(self) -> bool:
        """Set (not empty) under either name."""
        return any(os.environ.get(name) for name in self.names())

    def names(self) -> tuple[str, ...]:
        return (self.name,) if self.alias is None else (self.name, self.alias)

    def conflict(self) -> str | None:
        """The problem when the name and its alias are both set to different values (empty counts as unset)."""
        if self.alias is None:
            return None
        value, older = os.environ.get(self.name), os.environ.get(self.alias)
        if value and older and value != older:
            return (f"{self.name} and {self.alias} are both set, to different values: unset one ({self.alias} is "
                    f"the older name of {self.name})")
        return None

    def read(self) -> str | None:
        """The secret (``None``: set under neither name). Read when called, never kept."""
        problem = self.conflict()
        if problem is not None:
            raise EnvSecretError(problem)
        return next((value for name in self.names() if (value := os.environ.get(name))), None)


UFM_PASSWORD = EnvSecret("FABRIC_UFM__PASSWORD", "FABRIC_UFM_PASSWORD")
UFM_TOKEN = EnvSecret("FABRIC_UFM__TOKEN", "FABRIC_UFM_TOKEN")
JIRA_TOKEN = EnvSecret("FABRIC_TICKETS__JIRA__TOKEN", "FABRIC_JIRA_TOKEN")
ADMIN_TOKEN = EnvSecret("FABRIC_API__ADMIN_TOKEN")
WEBHOOK_SECRET = EnvSecret("FABRIC_TICKETS__WEBHOOK_SECRET")
WEBHOOK_TOKEN = EnvSecret("FABRIC_TICKETS__WEBHOOK_TOKEN")
