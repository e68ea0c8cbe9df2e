"""A console to look at: the real daemon (dry run) on the simulator of a plan, with spine-core cables flapped until
the daemon holds each in the state expected of it. The browser tests' and the screenshots' (``screenshots.py``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from daemon_support import Daemon, daemon, migrate, simulator, write_config

from fabric.simulator.server import free_port

TOKEN = "the-console-admin-token"


@dataclass(frozen=True)
class Fault:
    end: str
    """One end of the cable, as the simulator names it (``core01-01/1``)."""
    component: str
    """The cable's component, as the daemon records it."""
    state: str
    """The state the daemon holds it in once it flapped."""


@dataclass(frozen=True)
class Console:
    daemon: Daemon
    url: str
    """The daemon's root: the console is at ``/``, the API at ``/api/v1``."""


def state_of(running: Daemon, component: str) -> str | None:
    state = running.get(f"/components/{quote(component, safe='')}").json()["state"]
    return None if state is None else str(state["lifecycle"])


@contextmanager
def console(workdir: Path, plan: Path, faults: Sequence[Fault], *, extra: str = "") -> Iterator[Console]:
    """The daemon of ``plan`` (admin token ``TOKEN``), ready, each of ``faults`` flapped in turn and held in its
    state before the next."""
    migrate(workdir / "fabric.db")
    port = free_port()
    with simulator(plan) as sim:
        config = write_config(workdir, sim.url, plan, port=port, extra=extra)
        with daemon(config, port, workdir / "daemon.log", FABRIC_API__ADMIN_TOKEN=TOKEN) as running:
            running.wait_for("ready", lambda: running.get("/readyz").status_code == 200)
            for fault in faults:
                sim.inject(fault="flap", link=fault.end, cycles=5, period="20s")
                sim.advance(300)
                running.wait_for(f"{fault.component} {fault.state}",
                                 lambda f=fault: state_of(running, f.component) == f.state)  # type: ignore[misc]
            yield Console(running, running.api)
