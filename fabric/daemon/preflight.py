"""What ``fabricctl run`` checks before it starts anything, which ``fabricctl config check`` reports too: one code for
both, so that a file ``config check`` calls ok is one ``run`` does not refuse for any of these reasons.

Problems (``run`` refuses the first, ``config check`` lists them all): no wiring plan, or one that does not read; no
UFM URL, or no secret for its auth; no Jira token when tickets go to Jira; a database that is missing, unreachable
or not at this version's schema; a webhook secret file that does not read. Warnings (``run`` logs them once it
serves, ``config check`` prints them): values that
are valid but surely not meant, such as an hourly limit no fabric can reach or a fabric name of megabytes (every
row's key and every log line carry it), and a Jira webhook accepted unsigned because no secret is configured.

Not checked here, because only starting can tell: the API's port free, UFM accepting the credentials, another
daemon on the same SQLite file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TypeVar

from fabric import wiring
from fabric.config import ConfigError, ServiceConfig
from fabric.errors import ErrorKind, FabricError, as_fabric_error
from fabric.store import database_errors
from topology.formats.ndt import read_ndt
from topology.model import Fabric
from topology.printable import visible

T = TypeVar("T")

MAX_FABRIC_NAME = 64
"""Characters a fabric's name is sane within: it keys every row and labels every log line and ticket."""
MAX_INTERVAL = timedelta(hours=1)
"""A cycle less often than this leaves a fault alone for longer than any rule's window expects."""


class StartError(FabricError):
    """The daemon cannot start as configured (either of its processes: the port, UFM's credentials)."""

    kind = ErrorKind.CONFIG


@dataclass(slots=True)
class Preflight:
    """What was found: the plan (``None`` when it does not read), the problems ``run`` refuses, the warnings."""

    plan: Fabric | None = None
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def preflight(config: ServiceConfig, *, plan: bool = True) -> Preflight:
    """Every check on ``config`` (a file ``load_config`` accepted) that needs no more than reading files, the
    environment and the database; the plan's only when ``plan`` (``run``'s API process leaves it to the engine's,
    which reads it at the same time as it does: ``read_plan``)."""
    found = Preflight()
    if plan:
        found.plan = _checked(found, lambda: read_plan(config))
    _checked(found, lambda: config.ufm.target().auth())
    if config.tickets.backend == "jira":
        _checked(found, lambda: wiring.jira_tickets(config))
    _checked(found, lambda: _check_store(config))
    _checked(found, config.tickets.webhook_secret)  # a secret file that does not read
    if not found.problems:
        found.warnings = warnings(config, found.plan)
    return found


def _checked(found: Preflight, check: Callable[[], T]) -> T | None:
    """``check()``, or None with its error noted as a problem (a bug is no problem of the file's: it is raised)."""
    try:
        return check()
    except Exception as exc:
        error = as_fabric_error(exc)
        if error is None:
            raise
        found.problems.extend(str(error).splitlines())
        return None


def read_plan(config: ServiceConfig) -> Fabric:
    if config.fabric.plan is None:
        raise ConfigError(["fabric.plan: not set: fabricctl run needs the wiring plan (an NDT CSV) in the file or "
                           "FABRIC_FABRIC__PLAN"])
    return read_ndt(config.fabric.plan)


def _check_store(config: ServiceConfig) -> None:
    """The database exists at this version's schema and takes writes (opened as ``run`` opens it: nothing created;
    the write it tries changes nothing)."""
    with database_errors(config.store.url):
        wiring.open_existing_store(config.store.url, fabric=config.fabric.name, read_only=False).close()


def warnings(config: ServiceConfig, plan: Fabric | None) -> list[str]:
    """Values the configuration accepts that are surely not what was meant (``plan``: the figures that need it),
    and a Jira webhook accepted unsigned. ``run`` logs them once it serves (before, a refusal must be one line)."""
    found: list[str] = []
    if config.tickets.webhook_secret_file is None and config.tickets.webhook_secret() is None:
        found.append("tickets.webhook_secret: not set: POST /webhooks/jira accepts unsigned deliveries, so anyone "
                     "who can reach the API can report a ticket resolved (set FABRIC_TICKETS__WEBHOOK_SECRET or "
                     "tickets.webhook_secret_file, and the same secret in Jira's webhook)")
    name = config.fabric.name
    if len(name) > MAX_FABRIC_NAME or not name.isprintable():
        found.append(f"fabric.name: {visible(name[:MAX_FABRIC_NAME])!r}{'…' if len(name) > MAX_FABRIC_NAME else ''} "
                     f"({len(name)} characters): a fabric's name keys every row and labels every log line and "
                     f"ticket; more than {MAX_FABRIC_NAME} characters, or invisible ones, are surely not meant")
    cables = len(plan.cables) if plan is not None else None
    guard = config.guard
    if cables is not None and guard.hourly_limit > cables:
        found.append(f"guard.hourly_limit: {guard.hourly_limit} disables an hour, more than the plan's {cables} "
                     "cables: the limit can never limit")
    if cables is not None and guard.cap_floor > cables:
        found.append(f"guard.cap_floor: {guard.cap_floor}, more than the plan's {cables} cables: the cap on cables "
                     "out at once can never limit")
    if plan is not None and config.policy.storm_components > len(plan.devices) + len(plan.cables):
        found.append(f"policy.storm_components: {config.policy.storm_components}, more than the plan's devices and "
                     "cables together: the storm breaker can never trip")
    if config.daemon.interval > MAX_INTERVAL:
        found.append(f"daemon.interval: a cycle every {config.daemon.interval}: faults wait that long to be seen "
                     f"(the default is 30s)")
    return found
