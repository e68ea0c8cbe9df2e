"""Active/standby on PostgreSQL through real daemons (``fabricctl run`` subprocesses) against the simulator.

A second daemon of a fabric stands by (serving the API, ready) and takes over when the leader stops, is cut off
from the database (``pg_terminate_backend``), is killed (``kill -9``) in the middle of a write, or hangs
(``SIGSTOP``: the standby ends its sessions once its lease ran out, or says why it may not); every acquisition is
a new epoch, the old epoch's writes are refused, and UFM ends in the state the store says. Other fabrics on the
same database lead on their own; two daemons started at once on a freshly migrated database both come up.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
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
from daemon_support import (
    BOUND,
    HTTP,
    LEADER_TIMING,
    PASSWORD,
    Daemon,
    daemon,
    daemons,
    on_postgresql,
    refused,
    simulator,
    write_config,
)
from sqlalchemy.engine import make_url
from support import PG_ENV, pg_schema
from webhook_support import SECRET, jira_body, signed

from fabric import wiring
from fabric.daemon.lock import ADVISORY_LOCK, advisory_key
from fabric.daemon.sessions import leadership_session
from fabric.remediation.domain import ActionKind, ComponentId, Lifecycle
from fabric.simulator.driver import SimulatorDriver
from fabric.simulator.server import free_port
from fabric.store import SCHEMA_VERSION, IntentState, StaleEpochError, Store, TicketState

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

    def start(self, url: str | None = None) -> Daemon:
        """A daemon of the pair (``url``: on the database as another role)."""
        self.started += 1
        port = free_port()
        config = on_postgresql(write_config(self.tmp, self.sim.url, self.plan, port=port, dry_run=self.dry_run,
                                            extra=LEADER_TIMING + self.extra), url or self.url, self.fabric)
        return self.stack.enter_context(daemon(config, port, self.tmp / f"{self.fabric}-{self.started}.log",
                                               FABRIC_TICKETS__WEBHOOK_SECRET=SECRET))

    def store(self) -> Store:
        return self.stack.enter_context(wiring.open_existing_store(self.url, fabric=self.fabric))

    def leader_and_standby(self, standby_url: str | None = None) -> tuple[Daemon, dict[str, Any], Daemon,
                                                                          dict[str, Any]]:
        """A daemon that leads, past its first cycle, and one started after it that stands by; with what each
        says of leadership."""
        leader = self.start()
        led = wait_role(leader, "leader")
        leader.wait_for("a cycle", lambda: leader.cycles() >= 1)
        standby = self.start(standby_url)
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
    """Who acts, as ``d`` says (empty until its engine process first reports)."""
    return dict(d.get("/status").json()["leadership"] or {})


def wait_role(d: Daemon, role: str) -> dict[str, Any]:
    d.wait_for(f"role {role}", lambda: leadership(d).get("role") == role)
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
        # The enable is decided (on probation) before UFM's job for it has run: the port comes back after.
        leader.wait_for("UFM showing the port enabled", lambda: _disabled_ports(p.sim) == set())
        assert standby.cycles() == 0


def test_a_leader_cut_off_from_the_database_stops_and_stands_by_and_the_standby_takes_over_with_a_new_epoch(
        pg: str, tiny_plan: Path, tmp_path: Path) -> None:
    with pair(pg, tiny_plan, tmp_path) as p:
        first, led, second, _ = p.leader_and_standby()
        # The standby's own session cut first: it stands by on a new one.
        standby_session = leadership_session(p.fabric, leadership(second)["instance"])
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
    ports = HTTP.get(f"{sim.url}/ufmRest/resources/ports", auth=("admin", PASSWORD), timeout=30).json()
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
        _time_passes(p.sim)
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
        second.wait_for("a new leader", lambda: "leader" in {leadership(d).get("role") for d in (second, third)})
        new, last = (second, third) if leadership(second)["role"] == "leader" else (third, second)
        assert leadership(new)["epoch"] == 2
        new.process.kill()  # most likely while it waits out the first one's lease, before its engine started
        assert wait_role(last, "leader")["epoch"] == 3
        last.wait_for("a cycle of its own", lambda: last.cycles() >= 1)
        _time_passes(p.sim)
        last.wait_for("the cable held out with a ticket", lambda: _held_out(store) == 1)
        last.wait_for("UFM in the state the store says", lambda: _ufm_matches_store(store, p.sim))
        _no_overlap_no_double_write_no_duplicate_ticket(store)


def _time_passes(sim: SimulatorDriver) -> None:
    """Half a simulated minute, as it would pass on a real clock while the new leader works: the old leader's job
    runs to its end, and a write whose answer it never noted is older than a POST on its way could be (the new
    leader settles it once UFM runs no job on the port's switch, not before)."""
    sim.advance(30)


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


INTERVAL = 1.0
"""``write_config``'s ``[daemon] interval``."""


@contextmanager
def frozen(d: Daemon) -> Iterator[float]:
    """``d``'s engine process hung (SIGSTOP: its sessions stay open, its lock held; the API process, which holds
    neither, answers on); woken at the end. Yields when it froze."""
    engine = int(d.get("/status").json()["engine"]["pid"])
    os.kill(engine, signal.SIGSTOP)
    try:
        yield time.monotonic()
    finally:
        os.kill(engine, signal.SIGCONT)


def _high_water(store: Store) -> tuple[int, int]:
    """The newest intent's and decision's ids."""
    return (max((i.id for i in store.intents(limit=10_000)), default=0),
            max((d.id for d in store.decisions()), default=0))


def test_a_hung_leader_is_replaced_once_its_lease_ran_out_and_woken_it_stands_by_without_acting(
        pg: str, tiny_plan: Path, tmp_path: Path) -> None:
    with pair(pg, tiny_plan, tmp_path, dry_run=False, extra=ROOM) as p:
        leader, led, standby, _ = p.leader_and_standby()
        store = p.store()
        p.sim.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        p.sim.advance(300)
        time.sleep(random.uniform(0.0, 1.5))  # frozen anywhere: mid-cycle, mid-transaction, between cycles
        with frozen(leader) as stopped:
            took = wait_role(standby, "leader")
            takeover = time.monotonic() - stopped
            taken = _high_water(store)
            standby.wait_for("a cycle of its own", lambda: standby.cycles() >= 1)
            acting = time.monotonic() - stopped
            measured = f"took epoch {took['epoch']} {takeover:.2f}s after SIGSTOP, first cycle {acting:.2f}s"
            assert took["epoch"] == led["epoch"] + 1, measured
            # Its last heartbeat came at most a heartbeat before the stop; a standby looks every heartbeat.
            assert takeover < LEASE + 2 * HEARTBEAT + 1.0, measured
            assert acting < LEASE + 2 * HEARTBEAT + INTERVAL + 2.0, measured
            assert "its database sessions ended" in standby.log.read_text()
            standby.wait_for("the cable held out with a ticket", lambda: _held_out(store) == 1)
        # Woken: its lease ran out on its own clock and its session is gone, so it stands by, having done nothing.
        leader.wait_for("the old leader standing by", lambda: "it stands by again" in leader.log.read_text())
        assert leadership(leader)["role"] == "standby"
        standby.wait_for("UFM in the state the store says", lambda: _ufm_matches_store(store, p.sim))
        late: list[object] = [i for i in store.intents(limit=10_000) if i.id > taken[0] and i.epoch != took["epoch"]]
        late += [d for d in store.decisions() if d.id > taken[1] and d.epoch != took["epoch"]]
        assert late == [], f"written under another epoch after epoch {took['epoch']} was taken: {late}"
        _no_overlap_no_double_write_no_duplicate_ticket(store)
        print(f"SIGSTOP of the leader: the standby {measured}")


@contextmanager
def limited_role(pg: str) -> Iterator[str]:
    """A login role that may read and write the test's schema but is no superuser, nor in pg_signal_backend: the
    URL of ``pg`` as that role. Dropped at the end, its sessions ended first."""
    role = f"fabric_standby_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(pg)
    try:
        with admin.begin() as conn:
            schema = conn.scalar(sa.text("SELECT current_schema()"))
            conn.exec_driver_sql(f"CREATE ROLE {role} LOGIN")
            conn.exec_driver_sql(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
            conn.exec_driver_sql(f"GRANT ALL ON ALL TABLES IN SCHEMA {schema} TO {role}")
            conn.exec_driver_sql(f"GRANT ALL ON ALL SEQUENCES IN SCHEMA {schema} TO {role}")
        yield make_url(pg).set(username=role).render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text("SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE usename = :r"),
                         {"r": role})
            conn.exec_driver_sql(f"DROP OWNED BY {role}")
            conn.exec_driver_sql(f"DROP ROLE {role}")
        admin.dispose()


def test_a_standby_whose_role_may_not_end_a_hung_leaders_sessions_says_so_once_and_in_its_status(
        pg: str, tiny_plan: Path, tmp_path: Path) -> None:
    with pair(pg, tiny_plan, tmp_path) as p, limited_role(pg) as standby_url:
        leader, led, standby, _ = p.leader_and_standby(standby_url)  # the leader a superuser, the standby not
        with frozen(leader):
            standby.wait_for("the takeover reported blocked", lambda: leadership(standby)["takeover_blocked"])
            time.sleep(2 * HEARTBEAT)
            blocked = [line for line in standby.lines() if "cannot take over" in line["message"]]
            assert len(blocked) == 1, blocked
            assert "pg_signal_backend" in blocked[0]["message"] and led["instance"] in blocked[0]["message"]
            assert leadership(standby)["role"] == "standby" and standby.cycles() == 0
        # Woken with its session whole, the leader beats again: nothing blocks the standby any more.
        standby.wait_for("the block cleared", lambda: leadership(standby)["takeover_blocked"] is None)
        assert wait_role(leader, "leader")["epoch"] == led["epoch"]


def _store_migrate(url: str, fabric: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "fabric.cli", "store", "migrate", "--store", url, "--fabric",
                             fabric], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _tables(url: str) -> set[str]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return set(sa.inspect(conn).get_table_names())
    finally:
        engine.dispose()


def test_two_daemons_started_at_once_on_a_freshly_migrated_database_both_come_up_creating_nothing(
        pg: str, tiny_plan: Path, tmp_path: Path) -> None:
    fabric = f"fresh-{uuid.uuid4().hex[:8]}"
    migrations = [_store_migrate(pg, fabric) for _ in range(2)]  # at once, too
    said = sorted(m.communicate(timeout=BOUND)[0].decode().strip() for m in migrations)
    assert [m.returncode for m in migrations] == [0, 0], said
    assert said == [f"already at schema version {SCHEMA_VERSION}", f"created schema version {SCHEMA_VERSION}"]
    migrated = _tables(pg)
    assert {"local_tickets", "local_ticket_comments", "leadership"} <= migrated
    with simulator(tiny_plan) as sim:
        each = []
        for n in range(2):
            port = free_port()
            config = on_postgresql(write_config(tmp_path, sim.url, tiny_plan, port=port, extra=LEADER_TIMING), pg,
                                   fabric)
            each.append((config, port, tmp_path / f"daemon-{n}.log"))
        with daemons(each) as both:
            both[0].wait_for("one leader and one standby", lambda: _roles(both) == ["leader", "standby"])
            (leader,) = [d for d in both if leadership(d)["role"] == "leader"]
            leader.wait_for("a cycle", lambda: leader.cycles() >= 1)
            assert _roles(both) == ["leader", "standby"]
    assert _tables(pg) == migrated  # start-up created no table


def _roles(both: list[Daemon]) -> list[str]:
    return sorted(str(leadership(d).get("role")) for d in both)


def test_a_daemon_on_a_database_without_tables_refuses_in_one_line_offering_the_migration(
        pg: str, tiny_plan: Path, tmp_path: Path) -> None:
    with simulator(tiny_plan) as sim:
        code, stderr = refused(on_postgresql(write_config(tmp_path, sim.url, tiny_plan, port=free_port()), pg, "bare"))
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, stderr
    assert lines[0].startswith("fabricctl: error: ") and "fabricctl store migrate --store" in lines[0], stderr
    assert _tables(pg) == set()
