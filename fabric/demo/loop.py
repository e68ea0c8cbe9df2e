"""The remediation loop of ``fabricctl demo``: the real daemon, live, against a simulated UFM, told as a timeline.

The simulator serves the h100-4k fabric on loopback; ``fabricctl run`` runs as a subprocess on its clock
(``fabric.demo.daemon``). The demo injects the scenario's faults, moves simulated time in steps and waits each
time for a cycle of the daemon that saw it (two flapping cables are reset first: one is cured, the other flaps on
and is taken out; a cable whose BER ramps up in UFM Telemetry's counters, with no UFM event, is reset once and
taken out when its BER goes on), resolves two tickets in the ticket system and tells the daemon with signed Jira
webhooks, then fails one of the repaired links again during its probation. Everything it prints about the daemon
it read from the daemon's HTTP API; at the end it stops the daemon with SIGTERM.
"""

from __future__ import annotations

import textwrap
from collections import defaultdict
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Self
from urllib.parse import quote

import httpx
from rich.console import Console

from fabric import wiring
from fabric.api.timeline import WIDTH, Entry, decision_entries, fit, followed_entries, header, ordered, render, short
from fabric.config import PolicySection
from fabric.demo.daemon import FABRIC, JIRA_PROJECT, JIRA_TOKEN, DaemonFailed, DemoDaemon
from fabric.remediation.policy import RESET_WATCH
from fabric.simulator import SimClock, SimSettings, SimState, serve
from fabric.simulator.driver import SimulatorDriver
from fabric.simulator.jira import JiraAuth, JiraState, RunningJira, WebhookTarget, send_webhooks, serve_jira
from fabric.telemetry.settings import TelemetrySettings
from tickets.base import DEDUP_PREFIX
from topology.model import Device, Fabric
from topology.printable import visible

START = datetime(2026, 1, 15, 3, 0, tzinfo=UTC)  # 3 a.m., when these things happen

FLAPPING_PORT = "core01-01/1"
FLAPPING = "link:core01-01/1|pod01-spine01/33"
"""Flaps, is reset, flaps on within its watch: taken out; repaired, it fails again on probation."""
CURED_PORT = "core03-01/1"
CURED = "link:core03-01/1|pod01-spine03/33"
"""Flaps, is reset: quiet through its watch, healthy again with no ticket."""
BER_LEAF = "pod03-leaf05"
BER_PORTS = range(33, 43)
"""Ten of the leaf's 32 uplinks: the guard (every leaf keeps 75% of its paths to the core) lets eight go."""
BER_EVERY = 3
"""Minutes between two of the leaf's cables going bad: four within the switch-fault window (5 min) would be the
leaf's fault. Each is out within a step of the story, and UFM Telemetry finds its BER until then."""
REPAIRED_BER = "link:pod03-leaf05/33|pod03-spine01/17"
SAMPLED_PORT = "pod09-leaf02/37"
SAMPLED = "link:pod09-leaf02/37|pod09-spine02/5"
"""Its BER ramps up in UFM Telemetry's counters only (no UFM event): reset once, the BER goes on, taken out."""
HOT_PORT = "core04-02/24"
HOST_LINK_PORT = "pod02-leaf03/1"
AFFECTED_HOST = "pod02-node01"
REBOOTED_HOSTS = tuple(f"pod04-node{n:02d}" for n in range(1, 33)) + tuple(f"pod05-node{n:02d}" for n in range(1, 9))
MAX_STRIKES = PolicySection().max_strikes
"""The daemon runs with the default."""
CLEAN_AFTER = TelemetrySettings().clean_after.total_seconds()
"""How long after its repair a BER-faulty link's BER is judged over windows of its own (the daemon's default)."""
REBOOTED_GROUP = "40 hosts"
REBOOTED_SWITCH = "pod07-spine02"
BLIP_PORT = "pod11-leaf02/40"


@dataclass
class Story:
    """What the demo did and saw, and whether each of its promises held."""

    daemon: DemoDaemon
    simulator: SimulatorDriver
    state: SimState
    jira: RunningJira | None = None
    """The fake Jira the tickets go to (``--tickets jira``), sending its signed webhooks to the daemon."""
    verbose: bool = False
    own: list[Entry] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)

    def now(self) -> datetime:
        return self.state.now()

    def inject(self, **step: Any) -> None:
        self.simulator.inject(**step)

    def advance(self, seconds: float) -> None:
        """Simulated time passes at the start of the daemon's next cycle (so no cycle reads the clock before the
        jump and UFM's events after it); then wait for that cycle to end."""
        now = datetime.fromisoformat(self.simulator.advance(seconds, at_next_read=True)["now"])
        self.daemon.cycled_since(now + timedelta(seconds=seconds))

    def component(self, component: str) -> dict[str, Any]:
        detail: dict[str, Any] = self.daemon.get(f"/components/{quote(component, safe='/:')}")
        return detail

    def promise(self, held: bool, what: str) -> None:
        if not held:
            self.broken.append(what)

    def event(self, event_id: int) -> tuple[datetime, str] | None:
        """UFM's event ``event_id``: when, and its number and name."""
        with self.state.lock:
            record = self.state.events.get(event_id)
        return None if record is None else (record.when, f"{record.spec.id} {record.spec.name}")

    def note(self, component: str, what: str, why: str, *, after: float = 0.0) -> None:
        self.own.append(Entry(self.now() + timedelta(seconds=after), short(component), what, why))


def _inject_scenario(story: Story) -> None:
    story.inject(fault="flap", link=FLAPPING_PORT, cycles=5, period="20s")
    story.note(FLAPPING, "injected", "the cable flaps: 5 down/up, 20 s apart")
    story.inject(fault="flap", link=CURED_PORT, cycles=5, period="20s")
    story.note(CURED, "injected", "the cable flaps: 5 down/up, 20 s apart")
    for n, port in enumerate(BER_PORTS):  # critical at once: out (or deferred) without a reset first
        story.inject(fault="ber", port=f"{BER_LEAF}/{port}", escalate_after="0s",
                     at=f"{BER_EVERY * n}m")
    story.note(f"switch:{BER_LEAF}", "injected", f"BER on uplinks 33-42, one every {BER_EVERY} min")
    story.inject(fault="ber_ramp", port=SAMPLED_PORT, ber=1e-12, over="10m")
    story.note(SAMPLED, "injected", "BER ramps to 1e-12 (counters, no event)")
    story.inject(fault="hot_module", port=HOT_PORT, temperature=88)
    story.note(f"port:{HOT_PORT}", "injected", "the module runs hot: 88C (max 70C)")
    story.inject(fault="link_down", link=HOST_LINK_PORT)
    story.note(f"port:{HOST_LINK_PORT}", "injected", f"{AFFECTED_HOST}'s link down, stays down")
    story.inject(fault="host_reboot", hosts=list(REBOOTED_HOSTS), stagger="60s", downtime="4m")
    story.note(REBOOTED_GROUP, "injected", "pod04-node01…pod05-node08 reboot, 4 min")
    story.inject(fault="switch_reboot", switch=REBOOTED_SWITCH, downtime="3m")
    story.note(f"switch:{REBOOTED_SWITCH}", "injected", "the switch reboots, back after 3 min")
    story.inject(fault="link_down", link=BLIP_PORT, duration="20s", at="30s")
    story.note(f"port:{BLIP_PORT}", "injected", "one blip: down 20 s, then up", after=30)


def _ticket_of(story: Story, component: str) -> str:
    tickets = story.component(component)["tickets"]
    return str(tickets[-1]["external_key"]) if tickets else ""


def _repair(story: Story, components: tuple[str, ...]) -> datetime:
    """A technician fixes each cable and resolves its ticket; Jira tells the daemon with a signed webhook."""
    if story.jira is not None:
        return _repair_in_jira(story, story.jira, components)
    with wiring.open_store(story.daemon.store_url, fabric=FABRIC, clock=story.now) as store:
        backend = wiring.ticket_backend(store, clock=story.now)
        for component in components:
            key = _ticket_of(story, component)
            if not key:
                story.promise(False, f"{component} has a ticket to resolve")
                continue
            backend.resolve(key, "replaced the optics at both ends")
            story.note(component, "resolved", f"{key} resolved in the ticket system")
            answer = story.daemon.jira_webhook(key, f"demo-{key}", story.now())
            story.note(component, "webhook", f"signed Jira delivery {key}: {answer}")
    return story.now()


def _repair_in_jira(story: Story, jira: RunningJira, components: tuple[str, ...]) -> datetime:
    """The technician resolves each ticket in the fake Jira, which sends its signed webhook to the daemon."""
    sender = jira.webhooks
    assert sender is not None
    for component in components:
        key = _ticket_of(story, component)
        issue = jira.state.find(key) if key else None
        if issue is None:
            story.promise(False, f"{component} has a Jira issue to resolve")
            continue
        jira.state.add_comment(issue, "replaced the optics at both ends", "technician")
        jira.state.resolve(key)
        story.note(component, "resolved", f"{key} resolved in Jira")
        def sent(issue: str = key) -> bool:
            return any(a.issue == issue for a in sender.attempts)

        story.daemon.wait_for(f"Jira's webhook for {key}", sent)
        answer = next(a for a in sender.attempts if a.issue == key)
        story.note(component, "webhook", f"signed Jira webhook {key}: HTTP {answer.status}")
    return story.now()


def _cables_of(plan: Fabric, devices: Callable[[Device], bool]) -> int:
    return sum(1 for cable in plan.cables if devices(plan.devices[cable.a.device])
               or devices(plan.devices[cable.b.device]))


def _left_alone(story: Story, plan: Fabric, components: dict[str, dict[str, Any]]) -> list[Entry]:
    """What the faults that need no action did not get: each checked against the daemon's recorded components."""
    alone = []
    rebooted_links = [c for c in components if any(f"{host} " in c for host in REBOOTED_HOSTS)]
    story.promise(not rebooted_links, f"no finding on the rebooted hosts' links (found {rebooted_links[:3]})")
    hosts_cables = _cables_of(plan, lambda device: device.host_name in REBOOTED_HOSTS)
    alone.append(Entry(START, REBOOTED_GROUP, "left alone",
                       f"{hosts_cables} cables down and up again, explained by each host's node down/up (331, "
                       "332): no finding, the hosts healthy"))
    switch_links = [c for c in components if c.startswith("link:") and REBOOTED_SWITCH in c]
    story.promise(not switch_links, f"no cable finding on the rebooted switch (found {switch_links[:3]})")
    switch_cables = _cables_of(plan, lambda device: device.key == REBOOTED_SWITCH)
    alone.append(Entry(START, REBOOTED_SWITCH, "left alone",
                       f"its {switch_cables} cables down and up again, explained by the reboot (907 down, 1312 "
                       "rebooted): no cable disabled, the switch_down ticket only"))
    blip = [c for c in components if BLIP_PORT in c]
    story.promise(not blip, f"the 20 s blip left alone (found {blip})")
    alone.append(Entry(START + timedelta(seconds=30), BLIP_PORT, "left alone",
                       "one down/up cycle (20 s): below every flap threshold, no finding"))
    return alone


def _table(say: Callable[[str], None], components: dict[str, dict[str, Any]]) -> None:
    by_state: dict[str, list[str]] = defaultdict(list)
    for component, record in components.items():
        by_state[record["lifecycle"]].append(short(component))
    say(f"{'state':<16} {'n':>3}  components")
    for lifecycle, names in sorted(by_state.items()):
        say(f"{lifecycle:<16} {len(names):>3}  {fit(', '.join(sorted(names)), WIDTH - 22)}")


def _story(story: Story) -> None:
    _inject_scenario(story)
    story.advance(BER_EVERY * 60)  # both flapping cables reset; the first BER cable, the hot module
    # Past the reset's own-action window (its link's retrain is no fault), within its watch.
    story.inject(fault="flap", link=FLAPPING_PORT, cycles=5, period="20s", at="3m")
    story.note(FLAPPING, "injected", "flaps on after its reset", after=180)
    # A step for each of the leaf's cables going bad: each is out (after its settle) a step later, before the
    # third after it, as a daemon cycling every few seconds has them. Meanwhile the other cable flaps on: taken
    # out; the reboots; the host link's ticket; from 03:12 the telemetry samples span the 12-minute BER window: the
    # ramping cable is counted twice, reset, counted on within its watch and taken out; the cured cable's watch
    # ends; the last BER cables: the guard defers two.
    for _ in BER_PORTS[1:]:
        story.advance(BER_EVERY * 60)
    sent = _repair(story, (FLAPPING, REPAIRED_BER))
    # The simulator keeps a port's BER until told otherwise: the new optics count no symbol errors.
    story.inject(fault="ber_ramp", port=short(REPAIRED_BER), ber=0.0)
    story.advance(30)  # the deliveries: both links re-enabled on probation; a deferred cable can go now
    story.advance(30)  # UFM shows both up at their planned width and speed
    processed = story.daemon.metric("fabric_deliveries_total")
    story.promise(processed == 2, f"both webhook deliveries processed (fabric_deliveries_total {processed:.0f})")
    story.own.append(Entry(sent, "the daemon", "webhooks", f"{processed:.0f} processed, each ticket read back"))
    # Past the enable's own-action window (link changes right after it are its effect, never counted).
    story.inject(fault="flap", link=FLAPPING_PORT, cycles=5, period="20s", at="2m")
    story.note(FLAPPING, "injected", "flaps again, on probation", after=120)
    story.advance(6 * 60)  # a second strike: disabled again, its ticket reopened
    # The reopen goes out with the ticket outbox, on its own job beside the cycles (real time, not the story's):
    # awaiting repair once it has. A loaded host may take longer than the story's next step to send it.
    story.daemon.wait_for("the reopened ticket", lambda: (story.component(FLAPPING)["state"] or {}).get(
        "lifecycle") == "awaiting_repair")
    # The other repaired link soaks clean (2 h), and a telemetry sample judges its BER over windows wholly after its
    # repair: healthy.
    story.advance(CLEAN_AFTER)


def _check(story: Story, components: dict[str, dict[str, Any]], decisions: list[dict[str, Any]]) -> None:
    ber = [d for d in decisions if d["component"] and f"{BER_LEAF}/" in d["component"]]
    story.promise(sum(d["kind"] == "disable" for d in ber) == 9, "9 BER cables disabled (8, then 1 after a repair)")
    story.promise(sum(d["kind"] == "defer" for d in ber) == 2, "2 BER cables deferred by the guard")
    story.promise([d["kind"] for d in decisions if d["component"] == FLAPPING][:3] == ["reset", "disable", "ticket"],
                  "the flapping cable reset first, taken out and ticketed when it flapped on")
    cured = [d["kind"] for d in decisions if d["component"] == CURED and d["rule"] in ("flap", RESET_WATCH)]
    story.promise(cured == ["reset", "record"] and components.get(CURED, {}).get("lifecycle") == "healthy",
                  f"the other flapping cable reset, healthy again after its watch (decided {cured})")
    flapping = components.get(FLAPPING, {})
    story.promise(flapping.get("lifecycle") == "awaiting_repair" and flapping.get("strikes") == 2,
                  f"the repaired cable that failed again is out with strike 2 (is {flapping})")
    story.promise(any(d["kind"] == "reopen" and d["component"] == FLAPPING for d in decisions),
                  "its ticket reopened")
    story.promise(components.get(REPAIRED_BER, {}).get("lifecycle") == "healthy",
                  "the other repaired cable healthy after its probation")
    sampled = [d for d in decisions if d["component"] == SAMPLED and d["kind"] != "record"]  # its settle noted
    story.promise([d["kind"] for d in sampled][:3] == ["reset", "disable", "ticket"]
                  and all(d["rule"] == "ber_high" and "(seen by UFM Telemetry)" in d["reason"] for d in sampled[:3]),
                  f"the BER only UFM Telemetry saw reset once, then taken out and ticketed (decided "
                  f"{[(d['kind'], d['rule']) for d in sampled[:3]]})")
    unreported = all(not f["evidence"] for f in story.component(SAMPLED)["findings"])
    story.promise(unreported and components.get(SAMPLED, {}).get("lifecycle") == "awaiting_repair",
                  "the cable with the BER ramp out, awaiting repair, and no UFM event behind it")
    hot = [c for c, r in components.items() if HOT_PORT in c and r["lifecycle"] == "awaiting_repair"]
    story.promise(len(hot) == 1, "the hot module's cable disabled")


def _check_jira(story: Story, jira: RunningJira, components: dict[str, dict[str, Any]]) -> None:
    """One Jira issue per component ticketed (the flapping cable's reopened, not a second), none twice; a cable its
    reset cured has none."""
    with jira.state.lock:
        labels = [next((label for label in issue.labels if label.startswith(DEDUP_PREFIX)), "")
                  for issue in jira.state.issues.values()]
    ticketed = [c for c, record in components.items() if record["rule"] != RESET_WATCH]
    story.promise(len(labels) == len(set(labels)) == len(ticketed),
                  f"one Jira issue per component ticketed ({len(labels)} issues, {len(set(labels))} dedup keys, "
                  f"{len(ticketed)} components)")


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the daemon answered at the end of the story, read over its API."""

    entries: list[Entry]
    alone: list[Entry]
    components: dict[str, dict[str, Any]]
    health: dict[str, Any]


def _strike(component: Mapping[str, Any]) -> Entry:
    """Where a component stands after its last strike, from its recorded state."""
    return Entry(datetime.fromisoformat(component["since"]), short(component["id"]), f"strike {component['strikes']}",
                 f"out again; strike {MAX_STRIKES} quarantines it")


def _tell(story: Story, plan: Fabric) -> Outcome:
    daemon = story.daemon
    daemon.started()
    daemon.cycled_since(story.now())  # the engine has started (the API answers before) and read UFM once
    _story(story)
    decisions: list[dict[str, Any]] = daemon.get("/decisions", limit=10_000)
    components = {c["id"]: c for c in daemon.get("/components", limit=1000)["items"]}
    followed = [e for c in (FLAPPING, CURED, SAMPLED, REPAIRED_BER)
                for e in followed_entries(story.component(c), story.event)]
    health = daemon.get(f"/hosts/{AFFECTED_HOST}/health")
    unhealthy = [h["host"] for h in daemon.get("/hosts", healthy="false")]
    _check(story, components, decisions)
    if story.jira is not None:
        _check_jira(story, story.jira, components)
    story.promise(not health["healthy"] and unhealthy == [AFFECTED_HOST],
                  f"only {AFFECTED_HOST} unhealthy (answered {unhealthy})")
    alone = _left_alone(story, plan, components)
    stopped = daemon.stop()
    story.promise(stopped == 0, f"the daemon stopped cleanly on SIGTERM (exit {stopped})")
    entries = ordered([*story.own, *followed, *decision_entries(decisions, verbose=story.verbose),
                       *([_strike(components[FLAPPING])] if FLAPPING in components else [])])
    return Outcome(entries, alone, components, health)


def _print(console: Console, story: Story, outcome: Outcome) -> None:
    def say(text: str, indent: str = "") -> None:
        for line in textwrap.wrap(visible(text), WIDTH, subsequent_indent=indent) or [""]:
            console.print(line, markup=False, highlight=False)

    say(f"{START:%Y-%m-%d}, simulated time: the daemon runs on the simulator's clock.")
    say(header())
    for entry in outcome.entries:
        for line in render(entry, verbose=story.verbose):
            say(line)
    say("(+tkt: with a ticket opened; --verbose: every reason whole, the guard's figures)")
    say("")
    say("Left alone, and why:")
    for entry in outcome.alone:
        for line in render(entry, verbose=story.verbose, wrap=True):
            say(line)
    say("")
    say("Components by state (GET /api/v1/components):")
    _table(say, outcome.components)
    say("")
    say(f"GET /api/v1/hosts/{AFFECTED_HOST}/health: healthy={str(outcome.health['healthy']).lower()}")
    for reason in outcome.health["reasons"]:
        say(f"  {reason}", "    ")
    daemon = story.daemon
    say("")
    say(f"The daemon's decisions, evidence and guard figures: fabricctl decisions --store {daemon.store_url} "
        f"--fabric {FABRIC}; its log: {daemon.log}", "  ")
    for broken in story.broken:
        say(f"NOT AS PROMISED: {broken}", "  ")


class Loop:
    """The simulator and the daemon, started on entering (the daemon starts in the background: the demo's first
    part runs meanwhile); ``run`` tells the story."""

    def __init__(self, plan: Fabric, workdir: Path, *, jira: bool = False) -> None:
        """``jira``: the tickets go to a fake Jira (``fabric.simulator.jira``) rather than the local backend."""
        self.plan, self.workdir, self.with_jira = plan, workdir, jira
        self._stack = ExitStack()

    def __enter__(self) -> Self:
        state = SimState.from_plan(self.plan, clock=SimClock(START), settings=SimSettings(job_seconds=2.0))
        server = self._stack.enter_context(serve(state))
        jira = None
        if self.with_jira:
            jira = self._stack.enter_context(serve_jira(JiraState(projects={JIRA_PROJECT: "Operations"}),
                                                        auth=JiraAuth(users={}, tokens={JIRA_TOKEN: "fabric-bot"})))
        daemon = self._stack.enter_context(DemoDaemon(self.workdir, self.workdir / "plan.csv", server.url,
                                                      jira.url if jira is not None else None))
        if jira is not None:  # the daemon's address is known now: Jira's webhooks go there, signed
            sender = send_webhooks(jira.state, jira.url, WebhookTarget(f"{daemon.api}/webhooks/jira",
                                                                       daemon.webhook_secret))
            jira = replace(jira, webhooks=sender)
        self._story = Story(daemon, SimulatorDriver(server.url), state, jira)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def run(self, console: Console, *, verbose: bool = False) -> bool:
        """True when the daemon did what the demo promises."""
        self._story.verbose = verbose
        try:
            outcome = _tell(self._story, self.plan)
        except (DaemonFailed, httpx.HTTPError) as exc:
            console.print(f"the daemon failed: {visible(str(exc))}", markup=False, highlight=False)
            return False
        _print(console, self._story, outcome)
        return not self._story.broken
