"""In dry run the API shows the dry run's would-be state (marked so), resumes its halt and clears its quarantines;
host health stays on the fabric's real state."""

from __future__ import annotations

from urllib.parse import quote

import httpx
import pytest
from api_support import NODE1_LINK, NODE2_LINK, TOKEN, seed

from fabric.store import Store
from topology.model import Fabric

pytestmark = pytest.mark.anyio

AUTH = {"Authorization": f"Bearer {TOKEN}"}
WHY = {"reason": "rehearsal", "by": "alice"}


@pytest.fixture
def would_be(store: Store, plan: Fabric) -> Store:
    """A dry run's scope holding the seeded states and a halt; the fabric's own state holds nothing."""
    store.begin_dry_run()
    seed(store.dry_run_scope(), plan)
    store.dry_run_scope().halt("a would-be storm")
    return store


async def test_status_and_components_are_the_dry_runs_would_be_state(client: httpx.AsyncClient,
                                                                     would_be: Store) -> None:
    body = (await client.get("/status")).json()
    assert (body["would_be"], body["halted"], body["halt_reason"]) == (True, True, "a would-be storm")
    assert body["components"]["disabled"] == 1 and body["components"]["quarantined"] == 1
    assert not would_be.breaker_state().halted and would_be.components() == {}
    page = (await client.get("/components", params={"state": "disabled"})).json()
    assert [(item["id"], item["dry_run"]) for item in page["items"]] == [(str(NODE1_LINK), True)]
    detail = (await client.get(f"/components/{quote(str(NODE1_LINK), safe='')}")).json()
    assert detail["state"]["lifecycle"] == "disabled" and detail["state"]["dry_run"] is True


async def test_host_health_ignores_what_a_dry_run_would_have_disabled(client: httpx.AsyncClient,
                                                                      would_be: Store) -> None:
    health = (await client.get("/hosts/pod01-node01/health")).json()
    assert health["healthy"] is True, health


async def test_resume_and_clear_act_on_the_dry_runs_halt_and_quarantines(client: httpx.AsyncClient, token: str,
                                                                         would_be: Store) -> None:
    assert (await client.post("/resume", json=WHY, headers=AUTH)).status_code == 202
    cleared = await client.post(f"/components/{quote(str(NODE2_LINK), safe='')}/clear", json=WHY, headers=AUTH)
    assert cleared.status_code == 202, cleared.text
    assert [r.kind.value for r in would_be.pending_requests()] == ["resume", "clear"]


async def test_without_a_dry_run_scope_the_fabrics_own_state_is_shown(client: httpx.AsyncClient, store: Store,
                                                                      plan: Fabric) -> None:
    seed(store, plan)
    body = (await client.get("/status")).json()
    assert body["would_be"] is False and body["components"]["disabled"] == 1
    page = (await client.get("/components", params={"state": "disabled"})).json()
    assert [item["dry_run"] for item in page["items"]] == [False]
