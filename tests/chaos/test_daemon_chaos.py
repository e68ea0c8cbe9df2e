"""Issue 20's proof: the real daemon (``fabricctl run``) driven through ``daemon_program`` live on the simulator,
killed at seeded moments (mid-cycle, right after a UFM action is posted, while a UFM job runs, during start-up, again
right after a restart, SIGTERM mid-cycle, during the storm), against an uninterrupted control run of the same
program: one subtest per invariant, each failing with what broke.

Every seed runs with ``[ufm] method = "disable"``, and the first one also with ``"isolate"`` (ports marked unhealthy,
no UFM job: the kills at the writes land on ``PUT /app/unhealthy_ports``, ``daemon_program.kill_plan``), against a
control of its own. ``FABRIC_DAEMON_CHAOS_SEEDS`` (comma-separated, default ``1``) runs more seeds;
``FABRIC_DAEMON_CHAOS_TWICE=1`` runs the control a second time and asks for the same decisions (the run's
determinism); ``FABRIC_RELIABILITY_SUMMARY`` names a JSON file the figures go to (``reliability_summary``).
``-m "not daemon_chaos"`` leaves these out.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from daemon_chaos import Run, RunRecord
from daemon_checks import INVARIANTS, differences
from daemon_program import kill_plan
from reliability_summary import record

SEEDS = [int(s) for s in os.environ.get("FABRIC_DAEMON_CHAOS_SEEDS", "1").split(",")]
TWICE = os.environ.get("FABRIC_DAEMON_CHAOS_TWICE") == "1"
CASES = [("disable", seed) for seed in SEEDS] + [("isolate", SEEDS[0])]
"""(method, seed): isolation runs one seed, to keep the suite's time in check."""


@pytest.fixture(scope="module", params=CASES, ids=lambda case: f"{case[0]}-seed{case[1]}")
def killed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunRecord]:
    method, seed = request.param
    began = time.monotonic()
    name = f"killed-{seed}" if method == "disable" else f"killed-{method}-{seed}"
    run = Run(tmp_path_factory.mktemp("daemon-chaos"), name, kill_plan(seed, method), method=method).execute()
    run.seconds = time.monotonic() - began
    yield run


def _chaos_is_real(control: RunRecord, killed: RunRecord) -> list[str]:
    """What the run claims to have done and did not: every kind of kill, each followed by a restart; a control
    that tripped the breaker, deferred for the guard and the limit, re-enabled through webhooks, and raised a
    switch fault."""
    kills = Counter(death.kill for death in killed.deaths)
    kinds = {k.name for k in kill_plan(0, killed.method)}
    missing = [f"no kill {kind!r}" for kind in sorted(kinds) if not kills[kind]]
    kinds_decided = Counter(d.kind for d in control.decisions)
    missing += [f"the control made no {kind} decision" for kind in ("halt", "defer", "enable", "disable", "reopen")
                if not kinds_decided[kind]]
    if not any(d.rule == "switch_fault" and d.kind == "ticket" for d in control.decisions):
        missing.append("the control raised no switch fault")
    if control.deaths or control.violations.get("pending intents"):
        missing.append("the control was killed, or left intents pending")
    return missing


@pytest.mark.daemon_chaos
def test_the_daemon_survives_its_kills(controls: Callable[[str], RunRecord], killed: RunRecord,
                                       subtests: pytest.Subtests) -> None:
    control = controls(killed.method)
    figures = [f"control: {control.lives} life, {len(control.decisions)} decisions",
               f"{killed.name}: {len(killed.deaths)} kills: " + ", ".join(map(str, killed.deaths))]
    with subtests.test(msg="the chaos is real"):
        unreal = _chaos_is_real(control, killed)
        assert not unreal, "\n".join(["the run did not do what the invariants rely on:", *unreal, *figures])
    for invariant, title in INVARIANTS.items():
        with subtests.test(msg=f"{invariant}: {title}"):
            broken = [f"{line} [seen {moment}]" for line, moment in killed.violations.get(invariant, {}).items()]
            in_control = list(control.violations.get(invariant, {}))
            assert not broken, "\n".join([f"{title}: broken {len(broken)} time(s):", *broken,
                                          f"the control breaks it {len(in_control)} time(s)", *in_control, *figures])
    for what in ("decisions", "findings"):
        with subtests.test(msg=f"the {what} equal the control's"):
            apart = differences(getattr(control, what), getattr(killed, what), converged=True)
            assert not apart, "\n".join([f"{len(apart)} {what} differ from the uninterrupted run's (by tick):",
                                         *apart, *figures])
    _summarize(control, killed)


@pytest.mark.daemon_chaos
@pytest.mark.skipif(not TWICE, reason="the control's determinism: FABRIC_DAEMON_CHAOS_TWICE=1")
def test_the_control_twice_decides_the_same(control: RunRecord, tmp_path: Path) -> None:
    again = Run(tmp_path, "control-again").execute()
    assert again.exact == control.exact, "\n".join(differences(control.exact, again.exact))
    record("daemon chaos: determinism", {"control runs compared": 2, "decisions": len(control.exact),
                                         "decisions that differ": 0})


def _summarize(control: RunRecord, killed: RunRecord) -> None:
    apart = {what: len(differences(getattr(control, what), getattr(killed, what), converged=True))
             for what in ("decisions", "findings")}
    record(f"daemon chaos: {killed.name}", {
        "kills survived": len(killed.deaths),
        "kills": [str(d) for d in killed.deaths],
        "lives": killed.lives,
        "restart checks": len(killed.restarts),
        "invariants broken": {k: len(v) for k, v in killed.violations.items() if v},
        "decisions (control)": len(control.decisions),
        "decisions that differ from the control": apart["decisions"],
        "findings that differ from the control": apart["findings"],
        "webhook deliveries": killed.deliveries,
        "seconds (control, killed)": f"{control.seconds:.0f}, {killed.seconds:.0f}",
    })
