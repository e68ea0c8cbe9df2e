"""The only place that builds the service's parts: the store, the ticket backend, the UFM client, the engine.

Commands, the demo and (next) the daemon ask this module for them, so how a part is made from the
configuration is decided once: which backend ``[tickets] backend`` means, which port action ``[ufm] method``
means, which fabric every table is scoped by.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from fabric.config import ServiceConfig
from fabric.controller.engine import Engine, EngineSettings, UfmApi
from fabric.store import Store
from fabric.ufm.client import PortActionMethod
from tickets.base import TicketBackend
from tickets.local import LocalTicketBackend
from topology.model import Fabric

Clock = Callable[[], datetime]


def engine_settings(config: ServiceConfig, epoch: int = 1) -> EngineSettings:
    """The engine's settings from the service configuration; ``epoch`` is the leader's fencing token."""
    return EngineSettings(fabric=config.fabric.name, policy=config.policy_config(), rules=config.rule_settings(),
                          guard=config.guard_settings(), method=PortActionMethod(config.ufm.method), epoch=epoch)


def open_store(url: str, *, fabric: str, clock: Clock | None = None) -> Store:
    """The service's database for ``fabric``, created and migrated if needed (what the engine writes to)."""
    return Store.open(url, fabric=fabric, clock=clock)


def ticket_backend(store: Store, *, clock: Clock | None = None) -> TicketBackend:
    """The ticket system; only the local backend (tickets in the service's database) exists so far."""
    return LocalTicketBackend(store.engine, clock=clock)


def build_engine(plan: Fabric, ufm: UfmApi, store: Store, tickets: TicketBackend, settings: EngineSettings,
                 clock: Clock) -> Engine:
    return Engine(plan, ufm, store, tickets, settings, clock)
