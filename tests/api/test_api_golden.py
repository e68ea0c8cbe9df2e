"""The golden set over real HTTP: ``GET /hosts?golden=true`` (JSON and a host a line), a host's history, the
``fabric_golden_hosts`` metric, and ``fabricctl hosts golden`` over ``--api`` printing what it prints over
``--store``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from api_support import FakeRuntime, link
from fastapi import FastAPI
from typer.testing import CliRunner

from fabric.api.app import create_app
from fabric.api.context import ApiContext
from fabric.api.golden import CHANGES_EVERY, GoldenIndex
from fabric.api.plan_index import plan_index
from fabric.cli.app import app as cli
from fabric.config import GoldenSection, ServiceConfig
from fabric.daemon.api_metrics import ApiMetrics
from fabric.daemon.app import build_app
from fabric.remediation.domain import (
    Action,
    ActionKind,
    ComponentId,
    ComponentKind,
    ComponentRecord,
    Finding,
    Lifecycle,
)
from fabric.store import Store
from topology.formats.ndt import write_ndt
from topology.model import Fabric

pytestmark = pytest.mark.anyio
runner = CliRunner(env={"COLUMNS": "80"})
NOW = datetime.now(UTC)  # the real clock: --store reads the same database with it
N = timedelta(days=14)
NODE1 = link(("pod01-node01 mlx5_0", "1"), ("pod01-leaf01", "1"))
NODE2 = link(("pod01-node02 mlx5_1", "1"), ("pod01-leaf02", "2"))
NODE3 = link(("pod01-node03 mlx5_0", "1"), ("pod01-leaf01", "3"))
POD2_NODE2 = link(("pod02-node02 mlx5_1", "1"), ("pod02-leaf02", "2"))
POD2_LEAF = ComponentId(ComponentKind.SWITCH, "pod02-leaf01")
GOLDEN = ["pod01-node01", "pod01-node04", "pod02-node01", "pod02-node03", "pod02-node04"]


def _finding(component: ComponentId, days: int) -> Finding:
    return Finding(component, "ber", NOW - timedelta(days=days), "BER 1e-9", (1,))


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'fabric.db'}"


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    """Watched for 30 days: node01 found faulty 20 days ago and repaired, node02 quarantined 25 days ago, node03
    found faulty 3 days ago, pod02-leaf01 20 days ago, pod02-node02's cable disabled since then."""
    with Store.open(store_url, fabric="test", clock=lambda: NOW - timedelta(days=30)) as opened:
        opened.add_findings([_finding(NODE1, 20), _finding(NODE2, 25), _finding(NODE3, 3), _finding(POD2_LEAF, 20),
                             _finding(POD2_NODE2, 20)])
        opened.record_decision(Action(ActionKind.QUARANTINE, NOW - timedelta(days=25), "ber", "3 strikes", NODE2,
                                      dry_run=False))
        ticket, _ = opened.claim_ticket("k1", backend="local", summary="node01's cable", component=NODE1)
        opened.ticket_opened(ticket.id, "LOCAL-1")
        opened.ticket_resolved(ticket.id)
        opened.put_component(POD2_NODE2, ComponentRecord(Lifecycle.DISABLED, NOW - timedelta(days=20), "ber", "BER",
                                                         strikes=2))
        yield opened


@pytest.fixture
def app(plan: Fabric, store: Store, runtime: FakeRuntime) -> FastAPI:
    config = ServiceConfig(golden=GoldenSection(clean_for=N))
    return create_app(ApiContext(config=config, index=plan_index(plan), store=store, runtime=runtime,
                                 clock=lambda: NOW))


def test_the_golden_set_and_a_hosts_history_over_real_http(served: str) -> None:
    with httpx.Client(base_url=served) as http:
        golden = http.get("/hosts", params={"golden": "true"})
        assert golden.status_code == 200, golden.text
        assert [h["host"] for h in golden.json()] == GOLDEN
        node1 = golden.json()[0]
        assert (node1["findings"], node1["tickets"], node1["repairs"], node1["days_clean"]) == (1, 1, 1, 20)
        assert http.get("/hosts", params={"golden": "true", "format": "text"}).text == "".join(
            f"{host}\n" for host in GOLDEN)
        both = http.get("/hosts", params={"golden": "true", "healthy": "true"})
        assert (both.status_code, both.json()["detail"]) == (
            422, "healthy: not with golden=true (every golden host is healthy)")
        node2 = http.get("/hosts/POD01-NODE02/history").json()
        assert (node2["golden"], node2["quarantined"], node2["days_clean"]) == (False, True, 25)
        assert [c["component"] for c in node2["components"]] == [str(NODE2)]
        pod2 = http.get("/hosts/pod02-node02/history").json()
        assert (pod2["golden"], pod2["findings"], pod2["strikes"]) == (False, 2, 2)  # its cable and its leaf
        assert http.get("/hosts/nowhere/history").status_code == 404


async def test_the_golden_sets_size_is_a_metric(plan: Fabric, store: Store, runtime: FakeRuntime) -> None:
    context = ApiContext(config=ServiceConfig(), index=plan_index(plan), store=store, runtime=runtime,
                         clock=lambda: NOW)
    metrics = ApiMetrics()
    metrics.watch_golden(lambda: context.golden.count(store, NOW, N))
    transport = httpx.ASGITransport(build_app(context, metrics))
    async with httpx.AsyncClient(transport=transport, base_url="http://daemon") as http:
        body = (await http.get("/api/v1/metrics")).text
    assert f"fabric_golden_hosts {len(GOLDEN)}.0" in body.splitlines()



def test_hosts_golden_over_the_api_prints_what_the_store_prints(served: str, store_url: str, plan: Fabric,
                                                                 tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.csv"
    with plan_file.open("w") as out:
        write_ndt(plan, out)
    for output_format in ("table", "json"):
        by_api = runner.invoke(cli, ["hosts", "golden", "--api", served, "--format", output_format])
        by_store = runner.invoke(cli, ["hosts", "golden", "--store", store_url, "--fabric", "test", "--plan",
                                       str(plan_file), "--format", output_format])
        assert by_api.exit_code == 0, by_api.output
        assert (by_store.exit_code, by_store.output) == (0, by_api.output)
        if output_format == "json":
            assert [h["host"] for h in json.loads(by_api.output)] == GOLDEN
        else:
            assert all(len(line) <= 80 for line in by_api.output.splitlines())
    for output_format in ("table", "json"):
        asked = ["hosts", "history", "POD01-NODE02", "--format", output_format]
        by_api = runner.invoke(cli, [*asked, "--api", served])
        by_store = runner.invoke(cli, [*asked, "--store", store_url, "--fabric", "test", "--plan", str(plan_file)])
        assert by_api.exit_code == 0, by_api.output
        assert (by_store.exit_code, by_store.output) == (0, by_api.output)
    assert by_api.output.count(str(NODE2)) == 1 and '"quarantined": true' in by_api.output
    table = runner.invoke(cli, ["hosts", "history", "pod01-node02", "--api", served]).output
    assert table.splitlines()[:2] == ["pod01-node02: not golden, quarantined once; 25 days clean",
                                      "  1 findings, 0 tickets, 0 repairs, 0 strikes"]
    assert all(len(line) <= 80 for line in table.splitlines())
    for where in (["--api", served], ["--plan", str(plan_file), "--store", store_url, "--fabric", "test"]):
        unknown = runner.invoke(cli, ["hosts", "history", "nowhere", *where])
        assert unknown.exit_code == 2 and unknown.output.count("\n") == 1, unknown.output
        assert "no host 'nowhere' in the fabric plan" in unknown.output
    for args, said in ((["--store", store_url], "--plan: give the wiring plan"),
                       (["--plan", str(plan_file), "--clean-for", "0s"], "--clean-for: must be longer than zero"),
                       (["--plan", str(plan_file), "--clean-for", "soon"], "--clean-for: "),
                       (["--api", served, "--clean-for", "7d"], "over --api")):
        refused = runner.invoke(cli, ["hosts", "golden", "--fabric", "test", *args])
        assert refused.exit_code == 2 and refused.output.count("\n") == 1, refused.output
        assert said in refused.output


def test_counts_are_read_again_a_minute_on_and_membership_at_once(plan: Fabric, store: Store) -> None:
    golden = GoldenIndex(plan_index(plan))
    before = {h.host: h for h in golden.golden(store, NOW, N)}
    assert before["pod01-node04"].tickets == 0
    node4 = link(("pod01-node04 mlx5_0", "1"), ("pod01-leaf01", "4"))
    store.claim_ticket("k2", backend="local", summary="node04's cable", component=node4)
    store.add_finding(_finding(node4, 1))
    soon = [h.host for h in golden.golden(store, NOW + timedelta(seconds=30), N)]
    assert "pod01-node04" not in soon  # the finding: at once
    assert golden.history(store, "pod01-node04", NOW + timedelta(seconds=30), N).tickets == 0  # counts: not yet
    assert golden.history(store, "pod01-node04", NOW + CHANGES_EVERY, N).tickets == 1
    # a golden host's answer in the list is kept between requests, and built again once its history moves
    assert {h.host: h.tickets for h in golden.golden(store, NOW + CHANGES_EVERY, N)}["pod01-node01"] == 1
    store.claim_ticket("k3", backend="local", summary="node01's cable again", component=NODE1)
    later = NOW + 2 * CHANGES_EVERY
    assert {h.host: h.tickets for h in golden.golden(store, later, N)}["pod01-node01"] == 2
