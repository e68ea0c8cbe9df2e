"""The daemon chaos run's program with UFM misbehaving (``daemon_faults.FAULTS``, each at one tick), against the
uninterrupted control (``conftest``): no action on partial data (no disable, enable or defer of a component the
control left alone, and none the control did not decide in a fault's tick), every invariant held, and each fault
visible in its metric and in ``/readyz`` where the table says so.

``FABRIC_DAEMON_CHAOS_LONG=1`` adds the slow faults (a POST answered after UFM's client gave up: 30 s of real time).
"""

from __future__ import annotations

import os
import time

import pytest
from daemon_chaos import START, Run, RunRecord
from daemon_checks import INVARIANTS
from daemon_faults import FAULTS
from daemon_program import TICK
from reliability_summary import record

LONG = os.environ.get("FABRIC_DAEMON_CHAOS_LONG") == "1"
ACTING = frozenset({"disable", "enable", "defer"})


@pytest.fixture(scope="module")
def faulted(tmp_path_factory: pytest.TempPathFactory) -> RunRecord:
    began = time.monotonic()
    run = Run(tmp_path_factory.mktemp("daemon-faults"), "faults",
              faults=[fault for fault in FAULTS if LONG or not fault.slow]).execute()
    run.seconds = time.monotonic() - began
    return run


@pytest.mark.daemon_chaos
def test_ufm_faults_are_seen_and_never_acted_on(control: RunRecord, faulted: RunRecord,
                                                subtests: pytest.Subtests) -> None:
    acted = {d.component for d in control.decisions if d.kind in ACTING}
    fault_ticks = {START + fault.tick * TICK for fault in FAULTS if fault.name in faulted.probes}
    with subtests.test(msg="no action on partial data"):
        # A fault delays what the control did (by a tick, and the hourly window with it): the same components may
        # be acted on later, by their worst rule by then. Never one the control left alone, nor anything new in a
        # tick whose reading was partial.
        extra = [str(d) for d in faulted.decisions if d.kind in ACTING and (
            d.component not in acted or (d.at in fault_ticks and d not in control.decisions))]
        assert not extra, "\n".join(["acted on what the control did not (or in a fault's tick):", *extra])
    for invariant, title in INVARIANTS.items():
        with subtests.test(msg=f"{invariant}: {title}"):
            broken = [f"{line} [seen {moment}]" for line, moment in faulted.violations.get(invariant, {}).items()]
            assert not broken, "\n".join([f"{title}: broken under UFM's faults:", *broken])
    for fault in FAULTS:
        probe = faulted.probes.get(fault.name)
        if probe is None:
            continue  # a slow fault, out of this profile
        with subtests.test(msg=f"{fault.name}: visible"):
            if fault.metric is not None:
                assert (probe.growth or 0) > 0 or (probe.value or 0) > 0, \
                    f"{fault.name}: {fault.metric.name} did not count it ({probe})"
            if fault.readyz is not None:
                assert any(fault.readyz in reason for reason in probe.readyz), \
                    f"{fault.name}: /readyz said {probe.readyz}, not {fault.readyz!r}"
    record("daemon chaos: UFM faults", {
        "faults survived": len(faulted.probes),
        "seen": {name: f"metric +{p.growth:g}" if p.growth is not None else "no metric today"
                 for name, p in faulted.probes.items()},
        "not ready while it lasted": [name for name, p in faulted.probes.items() if p.readyz],
        "seconds": f"{faulted.seconds:.0f}",
    })
