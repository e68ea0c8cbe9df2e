"""Active/standby on PostgreSQL through real daemons (``fabricctl run`` subprocesses) against the simulator.

A second daemon of a fabric stands by (serving the API, ready) and takes over when the leader stops, is cut off
from the database (``pg_terminate_backend``) or is killed (``kill -9``) in the middle of a write; every
acquisition is a new epoch, the old epoch's writes are refused, and UFM ends in the state the store says. Other
fabrics on the same database lead on their own.
"""

from __future__ import annotations

import os
import random
import signal
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from daemon_support import BOUND, LEADER_TIMING, PASSWORD, Daemon, daemon, on_postgresql, simulator, write_config
from sqlalchemy.engine import make_url
from support import PG_ENV, pg_schema
from webhook_support import SECRET, jira_body, signed

from fabric import wiring
from fabric.daemon.leader import application_name
from fabric.daemon.lock import ADVISORY_LOCK, advisory_key
from fabric.remediation.domain import ActionKind, ComponentId, Lifecycle
from fabric.simulator.driver import SimulatorDriver
from fabric.simulator.server import free_port
from fabric.store import IntentState, StaleEpochError, Store, TicketState

pytestmark = pytest.mark.postgres
LEASE, HEARTBEAT = 3.0, 1.0
"""``LEADER_TIMING``'s."""


@pytest.fixture
def pg() -> Iterator[str]:
    """The test database's URL, on a schema of this test's own (``search_path`` in the URL, which the daemons read
    too): its schema version is this branch's whatever other work shares the database."""
    url = os.environ.get(PG_ENV)
    if not url:
        pytest.skip(f"{PG_ENV} is not set; set it to a PostgreSQL URL to run the PostgreSQL daemon tests")
    with pg_schema(url, "leadership") as schema:
        yield make_url(url).update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(
            hide_password=False)


@dataclass
class Pair:
    """Daemons of one fabric on one database, against one simulator."""

    url: str
    fabric: str
    plan: Path
    tmp: Path
    sim: SimulatorDriver
    stack: ExitStack
    dry_run: bool = True
    extra: str = ""
    started: int = 0

    def start(self) -> Daemon:
        self.started += 1
        port = free_port()
        config = on_postgresql(write_config(self.tmp, self.sim.url, self.plan, port=port, dry_run=self.dry_run,
                                            extra=LEADER_TIMING + self.extra), self.url, self.fabric)
        return self.stack.enter_context(daemon(config, port, self.tmp / f"{self.fabric}-{self.started}.log",
                                               FABRIC_TICKETS__WEBHOOK_SECRET=SECRET))

    def store(self) -> Store:
        return self.stack.enter_context(wiring.open_existing_store(self.url, fabric=self.fabric))

    def leader_and_standby(self) -> tuple[Daemon, dict[str, Any], Daemon, dict[str, Any]]:
        """A daemon that leads, past its first cycle, and one started after it that stands by; with what each
        says of leadership."""
        leader = self.start()
        led = wait_role(leader, "leader")
        leader.wait_for("a cycle", lambda: leader.cycles() >= 1)
        standby = self.start()
        return leader, led, standby, wait_role(standby, "standby")


@contextmanager
def pair(url: str, plan: Path, tmp: Path, *, dry_run: bool = True, fabric: str | None = None,
         sim: SimulatorDriver | None = None, extra: str = "") -> Iterator[Pair]:
    fabric = fabric or f"lead-{uuid.uuid4().hex[:8]}"
    wiring.open_store(url, fabric=fabric).close()
    with ExitStack() as stack:
        driver = sim or stack.enter_context(simulator(plan))
        yield Pair(url, fabric, plan, tmp, driver, stack, dry_run, extra)


def leadership(d: Daemon) -> dict[str, Any]:
    return dict(d.get("/status").json()["leadership"])


def wait_role(d: Daemon, role: str) -> dict[str, Any]:
    d.wait_for(f"role {role}", lambda: leadership(d)["role"] == role)
    return leadership(d)


def lock_backend(url: str, fabric: str) -> int | None:
    """The PostgreSQL backend holding the fabric's leadership lock."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            pid = conn.scalar(sa.text(f"SELECT l.pid FROM pg_locks l WHERE {ADVISORY_LOCK}"),
                              {"key": advisory_key(fabric)})
            return None if pid is None else int(pid)
    finally:
        engine.dispose()


def test_a_second_daemon_stands_by_serving_reads_and_takes_over_at_once_from_a_clean_stop(
        pg: str, tiny_plan: Path, tmp_path: Path) -> None:
    with pair(pg, tiny_plan, tmp_path) as p:
        first, led, second, stood = p.leader_and_standby()
        assert stood["leader"] == led["instance"] and stood["epoch"] == led["epoch"]
        assert second.get("/readyz").status_code == 200  # a standby serves reads: ready
        assert (first.metric("fabric_leader"), second.metric("fabric_leader")) == (1.0, 0.0)
        assert second.metric("fabric_leader_epoch") == led["epoch"]
        time.sleep(2.5)  # several of its heartbeats: a standby never runs a job
        assert second.cycles() == 0
        stopped = time.monotonic()
        assert first.signal(signal.SIGTERM) == 0
        took = wait_role(second, "leader")
        second.wait_for("a cycle", lambda: second.cycles() >= 1)
        # The leader let go cleanly: no lease to wait out.
        assert took["epoch"] == led["epoch"] + 1 and time.monotonic() - stopped < LEASE + 1.0


def test_a_standby_stores_a_webhook_delivery_and_the_leader_acts_on_it(pg: str, tiny_plan: Path,
                                                                        tmp_path: Path) -> None:
    with pair(pg, tiny_plan, tmp_path, dry_run=False, extra=ROOM) as p:
        leader, _, standby, _ = p.leader_and_standby()
        store = p.store()
        p.sim.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        p.sim.advance(300)
        leader.wait_for("the cable held out with a ticket", lambda: _held_out(store) == 1)
        (ticket,) = store.tickets()
        assert ticket.external_key is not None
        wiring.local_tickets(store).resolve(ticket.external_key, "optic replaced")
        body = jira_body(ticket.external_key)
        answer = httpx.post(f"{standby.api}/webhooks/jira", content=body, headers=signed(body, "via-standby"),
                            timeout=10)
        assert answer.status_code == 202 and answer.json()["outcome"] == "accepted", answer.text
        leader.wait_for("the repair acted on", lambda: store.components(Lifecycle.PROBATION) != {})
        delivery = store.get_delivery("via-standby")
        assert delivery is not None and delivery.processed_at is not None
        assert standby.cycles() == 0 and _disabled_ports(p.sim) == set()


def test_a_leader_cut_off_from_the_database_stops_and_stands_by_and_the_standby_takes_over_with_a_new_epoch(
        pg: str, tiny_plan: Path, tmp_path: Path) -> None:
    with pair(pg, tiny_plan, tmp_path) as p:
        first, led, second, _ = p.leader_and_standby()
        # The standby's own session cut first: it stands by on a new one.
        standby_session = application_name(p.fabric, leadership(second)["instance"])
        engine = sa.create_engine(pg)
        with engine.connect() as conn:
            assert conn.scalar(sa.text("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                       "WHERE application_name = :name"), {"name": standby_session}) == 1
        engine.dispose()
        time.sleep(3 * HEARTBEAT)
        assert second.process.poll() is None and leadership(second)["role"] == "standby"
        assert "cannot try the leadership lock" in second.log.read_text()
        backend = lock_backend(pg, p.fabric)
        assert backend is not None
        engine = sa.create_engine(pg)
        with engine.connect() as conn:
            assert conn.scalar(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": backend})
        engine.dispose()
        cut = time.monotonic()
        took = wait_role(second, "leader")
        second.wait_for("a cycle", lambda: second.cycles() >= 1)
        acting = time.monotonic() - cut
        assert took["epoch"] == led["epoch"] + 1
        # Its last heartbeat came at most a heartbeat before the cut: the new one waited out the rest of the lease.
        assert acting >= LEASE - HEARTBEAT - 0.1
        with pytest.raises(StaleEpochError):
            p.store().begin_intent(led["epoch"], ActionKind.DISABLE, None)
        # The old leader dropped its engine and stands by on a new session, ready to lead again.
        first.wait_for("the old leader standing by", lambda: "it stands by again" in first.log.read_text())
        first.wait_for("the old leader seeing the new one",
                       lambda: leadership(first) == {**took, "role": "standby", "instance": led["instance"]})
        ran = first.cycles()
        time.sleep(2 * HEARTBEAT)
        assert first.cycles() == ran
        assert second.signal(signal.SIGTERM) == 0
        assert wait_role(first, "leader")["epoch"] == took["epoch"] + 1
        first.wait_for("a cycle of its new term", lambda: first.cycles() > ran)
        print(f"takeover after pg_terminate_backend: acting (a cycle done) {acting:.2f}s after the cut")


def _disabled_ports(sim: SimulatorDriver) -> set[str]:
    ports = httpx.get(f"{sim.url}/ufmRest/resources/ports", auth=("admin", PASSWORD), timeout=30).json()
    return {p["name"] for p in ports if p["physical_state"] == "Disabled"}


def _wait(what: str, check: Any) -> None:
    deadline = time.monotonic() + BOUND
    while not check():
        assert time.monotonic() < deadline, f"no {what} within {BOUND}s"
        time.sleep(0.05)


ROOM = "[guard]\ncap_floor = 5\n"
"""The guard lets the tiny fabric lose a cable (its blast-radius cap would be 1 otherwise)."""
KILLS = (  # (cable, the fault on UFM's POST /actions, where the kill lands)
    ("core01-01/1", {"mode": "delay", "delay": "1.5s"}, "between the intent and UFM's write"),
    ("core01-01/1", {"mode": "late", "delay": "2s"}, "between UFM's write and the ticket"),
    ("core01-01/1", None, "at a random moment of the cycle that acts on it"),
)


@pytest.mark.parametrize(("cable", "fault", "where"), KILLS, ids=["before-ufm-write", "before-ticket", "any"])
def test_kill_9_of_the_leader_mid_write_fails_over_without_a_double_write_or_a_duplicate_ticket(
        pg: str, tiny_plan: Path, tmp_path: Path, cable: str, fault: dict[str, str] | None, where: str) -> None:
    with pair(pg, tiny_plan, tmp_path, dry_run=False, extra=ROOM) as p:
        leader, led, standby, _ = p.leader_and_standby()
        epoch = led["epoch"]
        store = p.store()
        if fault is not None:
            p.sim.inject(fault="api", endpoint="/actions", method="POST", requests=1, **fault)
        p.sim.inject(fault="flap", link=cable, cycles=5, period="20s")
        p.sim.advance(300)
        if fault is None:
            time.sleep(random.uniform(0.0, 1.5))
        else:
            _wait("a pending disable", lambda: any(i.kind is ActionKind.DISABLE for i in store.unfinished_intents()))
        killed = time.monotonic()
        leader.process.kill()
        leader.process.wait(BOUND)
        took = wait_role(standby, "leader")
        takeover = time.monotonic() - killed
        assert took["epoch"] > epoch, where
        assert takeover < LEASE, where  # the lock is free at once; the standby tries it every heartbeat
        standby.wait_for("a cycle of its own", lambda: standby.cycles() >= 1)
        acting = time.monotonic() - killed
        assert acting >= takeover
        standby.wait_for("the cable held out with a ticket", lambda: _held_out(store) == 1)
        standby.wait_for("UFM in the state the store says", lambda: _ufm_matches_store(store, p.sim))
        _no_overlap_no_double_write_no_duplicate_ticket(store)
        print(f"kill -9 {where}: the standby took epoch {took['epoch']} {takeover:.2f}s after the kill, its first "
              f"cycle done {acting:.2f}s after it")


def test_a_second_kill_9_while_the_new_leader_waits_out_the_lease_still_ends_in_one_write_and_one_ticket(
        pg: str, tiny_plan: Path, tmp_path: Path) -> None:
    with pair(pg, tiny_plan, tmp_path, dry_run=False, extra=ROOM) as p:
        first, _, second, _ = p.leader_and_standby()
        store = p.store()
        p.sim.inject(fault="api", endpoint="/actions", method="POST", requests=1, mode="late", delay="2s")
        p.sim.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        p.sim.advance(300)
        _wait("a pending disable", lambda: any(i.kind is ActionKind.DISABLE for i in store.unfinished_intents()))
        first.process.kill()
        third = p.start()
        # Either standby may take the lock first (both try every heartbeat once PostgreSQL ends the first's session).
        second.wait_for("a new leader", lambda: "leader" in {leadership(d)["role"] for d in (second, third)})
        new, last = (second, third) if leadership(second)["role"] == "leader" else (third, second)
        assert leadership(new)["epoch"] == 2
        new.process.kill()  # most likely while it waits out the first one's lease, before its engine started
        assert wait_role(last, "leader")["epoch"] == 3
        last.wait_for("the cable held out with a ticket", lambda: _held_out(store) == 1)
        last.wait_for("UFM in the state the store says", lambda: _ufm_matches_store(store, p.sim))
        _no_overlap_no_double_write_no_duplicate_ticket(store)


HELD_OUT = (Lifecycle.AWAITING_REPAIR, Lifecycle.QUARANTINED)


def _held_out(store: Store) -> int:
    """Components held out of service with an open ticket recorded."""
    ticketed = {t.component for t in store.tickets() if t.state is TicketState.OPEN}
    return len(set(store.components(HELD_OUT)) & ticketed)


def _ufm_matches_store(store: Store, sim: SimulatorDriver) -> bool:
    held = store.components(HELD_OUT)
    return len(held) == 1 and not store.unfinished_intents() and len(_disabled_ports(sim)) == len(held)


def _no_overlap_no_double_write_no_duplicate_ticket(store: Store) -> None:
    intents = sorted(store.intents(limit=10_000), key=lambda i: i.id)
    epochs = [i.epoch for i in intents]
    assert epochs == sorted(epochs), "an older epoch wrote after a newer one"
    decided = [d.epoch or 0 for d in sorted(store.decisions(), key=lambda d: d.id)]
    assert decided and 0 not in decided and decided == sorted(decided), decided  # each decision by its leader
    done: dict[ComponentId | None, list[tuple[ActionKind, int]]] = {}
    for intent in intents:
        if intent.kind in (ActionKind.DISABLE, ActionKind.ENABLE) and intent.state is IntentState.DONE:
            done.setdefault(intent.component, []).append((intent.kind, intent.epoch))
    for component, writes in done.items():
        assert [kind for kind, _ in writes] == [ActionKind.DISABLE], (component, writes)  # one write, one epoch
    keys = [t.dedup_key for t in store.tickets()]
    assert len(keys) == len(set(keys)) == 1
    created = [t for t in wiring.local_tickets(store).list() if t.dedup_key in keys]  # its tables serve every fabric
    assert len(created) == 1  # none created twice in the ticket system


def test_fabrics_on_one_database_lead_write_and_are_written_to_on_their_own(
        pg: str, tiny_plan: Path, tmp_path: Path) -> None:
    (tmp_path / "east").mkdir()
    (tmp_path / "west").mkdir()
    with pair(pg, tiny_plan, tmp_path / "east", dry_run=False, extra=ROOM) as east, \
            pair(pg, tiny_plan, tmp_path / "west", dry_run=False, extra=ROOM) as west:
        east_leader, west_leader = east.start(), west.start()
        for d in (east_leader, west_leader):
            d.wait_for("a cycle", lambda d=d: d.cycles() >= 1)  # type: ignore[misc]
        east_standby = east.start()
        assert wait_role(east_standby, "standby")["leader"] == leadership(east_leader)["instance"]
        assert leadership(west_leader)["role"] == "leader"  # a standby of one fabric is none of another's
        east.sim.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        east.sim.advance(300)
        east_store, west_store = east.store(), west.store()
        east_leader.wait_for("east's cable held out", lambda: _held_out(east_store) == 1)
        east_leader.wait_for("UFM as east's store says", lambda: _ufm_matches_store(east_store, east.sim))
        west.sim.advance(300)
        before = west_leader.cycles()
        west_leader.wait_for("two more west cycles", lambda: west_leader.cycles() >= before + 2)
        assert _disabled_ports(west.sim) == set() and west_store.intents() == [] and west_store.components() == {}
        assert west_store.tickets() == [] and len(east_store.tickets()) == 1
        east_leader.process.kill()
        east_leader.process.wait(BOUND)
        assert wait_role(east_standby, "leader")["epoch"] == 2
        east_leader_row, west_leader_row = east_store.leader(), west_store.leader()
        assert east_leader_row is not None and west_leader_row is not None
        assert (east_leader_row.epoch, west_leader_row.epoch) == (2, 1)  # each fabric its own epochs
        assert leadership(west_leader)["role"] == "leader"
