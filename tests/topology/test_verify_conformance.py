"""NVIDIA's NDT test data end to end: their two plan files against their director-switch ibnetdiscover dump."""

from __future__ import annotations

from pathlib import Path

from topology.formats.ibnetdiscover import read_ibnetdiscover
from topology.formats.ndt import read_ndt
from topology.verify import MiswireKind, verify


def test_ndt_plans_against_the_director_dump(conformance: Path, tmp_path: Path) -> None:
    ndt = conformance / "ndt"
    plan_path = tmp_path / "combined.ndt"
    to_switch = (ndt / "switch_to_switch_topo2.ndt").read_text().splitlines()[1:]
    plan_path.write_text("\n".join([*(ndt / "switch_to_host_topo1.ndt").read_text().splitlines(), *to_switch]))
    report = verify(read_ndt(plan_path), read_ibnetdiscover(ndt / "ibnetdiscover_director.txt"))

    # NDT's own expected report for this data says 2 miss_wired, 2 missing_in_ufm and 107 missing_in_ndt.
    # We find the same two missing hosts and the same two miswires, and name what each miswire is:
    assert sorted(report.plan.describe_cable(c) for c in report.missing) == [
        "SAT111090201020 ibp213s0f0 - SAT11-0102-0903-05IB0/Port 9",
        "SAT111090201021 ibp213s0f0 - SAT11-0102-0903-05IB0/Port 10",
    ]
    kinds = {report.plan.describe_cable(m.expected): m.kind for m in report.miswired}
    assert kinds == {
        "SAT111090201019 ibp203s0f1 - SAT11-0101-0902-01IB0/Port 15": MiswireKind.WRONG_DEVICE,
        "SAT111090201019 ibp213s0f0 - SAT11-0101-0902-01IB0/Port 17": MiswireKind.WRONG_PORT,
    }
    # NDT's 107 extras are our 106 unexpected cables (103 adapters with factory node descriptions, the UFM
    # server's adapters...) plus the far side of the wrong-port miswire, which we report inside the miswire.
    assert len(report.unexpected) == 106
    assert len(report.ok) == 5418 - 4
    assert len(report.components) == 1
