"""Schemathesis against the daemon's own OpenAPI document: every operation, each generated request sent with the
admin token and again without it, to the real ``fabricctl run`` (a subprocess, over HTTP on 127.0.0.1; dry run
against a simulated UFM). Zero 5xx; every answer as documented (issue 21)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from daemon_support import daemon, migrate, simulator, write_config
from fuzz_support import Tally, config
from schemathesis import Case
from schemathesis.schemas import BaseSchema

from fabric.simulator.server import free_port

ADMIN_TOKEN = "fuzz-admin-token"
WEBHOOK_TOKEN = "fuzz-webhook-token"
TALLY = Tally("daemon API")


@pytest.fixture(scope="module")
def daemon_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BaseSchema]:
    from topology.formats.ndt import write_ndt
    from topology.generate import PRESETS, fat_tree

    tmp = tmp_path_factory.mktemp("daemon-fuzz")
    plan = tmp / "plan.csv"
    with plan.open("w", newline="") as handle:
        write_ndt(fat_tree(PRESETS["tiny"]), handle)
    migrate(tmp / "fabric.db")
    port = free_port()
    with simulator(plan) as sim:
        settings = write_config(tmp, sim.url, plan, port=port)
        with daemon(settings, port, tmp / "daemon.log", FABRIC_API__ADMIN_TOKEN=ADMIN_TOKEN,
                    FABRIC_TICKETS__WEBHOOK_TOKEN=WEBHOOK_TOKEN) as running:
            TALLY.begin()
            yield schemathesis.openapi.from_url(f"{running.api}/api/v1/openapi.json", config=config())
            assert running.signal(signal.SIGTERM) == 0, Path(running.log).read_text()[-3000:]


schema = schemathesis.pytest.from_fixture("daemon_schema")


def _token(case: Case) -> str:
    """The token the operation takes: the generic webhook's own, else the admin token."""
    return WEBHOOK_TOKEN if case.operation.path == "/webhooks/generic" else ADMIN_TOKEN


@schema.parametrize()
def test_every_operation_answers_as_documented_with_and_without_the_token(case: Case) -> None:
    case.call_and_validate(headers={"Authorization": f"Bearer {_token(case)}"})
    case.call_and_validate(headers={"Authorization": "Bearer not-the-token"})
    case.call_and_validate()
    TALLY.count(case.operation.label, 3)
