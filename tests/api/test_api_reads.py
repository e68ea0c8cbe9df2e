"""``/api/v1`` reads over a real SQLite store: status, components (filters, pages, history), decisions."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import quote

import httpx
import pytest
from api_support import NODE1_LINK, NOW, FakeRuntime, seed, uplink

from fabric.remediation.domain import Action, ActionKind, Finding
from fabric.store import IntentState, RequestKind, Store
from topology.model import Fabric

pytestmark = pytest.mark.anyio


def path_of(component: object) -> str:
    return quote(str(component), safe="")


async def test_status_joins_the_runtime_and_the_store(client: httpx.AsyncClient, store: Store, plan: Fabric,
                                                      runtime: FakeRuntime) -> None:
    seed(store, plan)
    store.halt("25 components within 15m")
    store.request(RequestKind.RESUME, reason="storm over", requested_by="alice")
    response = await client.get("/status")
    assert response.status_code == 200
    body = response.json()
    assert (body["fabric"], body["dry_run"], body["halted"], body["halt_reason"]) == (
        "test", True, True, "25 components within 15m")
    assert body["components"]["disabled"] == 1 and body["components"]["healthy"] == 0
    assert body["guard"] == {"worst_leaf": "pod01-leaf01", "worst_leaf_fraction": 0.75, "disabled": 1, "cap": 10,
                             "disables_last_hour": 1, "hourly_limit": 20}
    assert [(r["kind"], r["requested_by"]) for r in body["pending_requests"]] == [("resume", "alice")]
    assert body["counters"] == {"events": 12}


async def test_components_filter_by_state_rule_switch_and_host(client: httpx.AsyncClient, store: Store,
                                                               plan: Fabric) -> None:
    seed(store, plan)

    async def ids(**params: str) -> list[str]:
        response = await client.get("/components", params=params)
        assert response.status_code == 200, response.text
        return [item["id"] for item in response.json()["items"]]

    assert await ids(state="disabled") == [str(NODE1_LINK)]
    assert await ids(rule="ber", state="awaiting_repair") == [str(uplink(plan, "pod01-leaf01", "pod01-spine01"))]
    assert await ids(switch="pod01-spine01") == [str(uplink(plan, "pod01-leaf01", "pod01-spine01"))]
    assert await ids(switch="POD02-leaf01") == ["switch:pod02-leaf01"]
    assert await ids(host="pod01-node01") == [str(NODE1_LINK)]
    assert await ids(host="pod02-node01") == []


async def test_components_are_paged_with_their_total(client: httpx.AsyncClient, store: Store,
                                                     plan: Fabric) -> None:
    everything = sorted(str(c) for c in seed(store, plan))
    pages = []
    for offset in range(0, 5, 2):
        body = (await client.get("/components", params={"limit": 2, "offset": offset})).json()
        assert (body["total"], body["limit"], body["offset"]) == (5, 2, offset)
        pages += [item["id"] for item in body["items"]]
    assert pages == everything


async def test_bad_filters_are_named(client: httpx.AsyncClient) -> None:
    response = await client.get("/components", params={"state": "broken"})
    assert response.status_code == 422 and response.json()["detail"].startswith("state: Input should be")
    response = await client.get("/components", params={"limit": 0})
    assert response.status_code == 422 and response.json()["detail"].startswith("limit: ")
    response = await client.get("/components", params={"switch": "nope"})
    assert response.status_code == 404 and response.json() == {"detail": "switch: no switch 'nope' in the fabric plan"}
    response = await client.get("/components", params={"host": "nope"})
    assert response.status_code == 404 and response.json() == {"detail": "host: no host 'nope' in the fabric plan"}


async def test_one_component_with_its_history(client: httpx.AsyncClient, store: Store, plan: Fabric) -> None:
    seed(store, plan)
    store.add_finding(Finding(NODE1_LINK, "link_flap", NOW - timedelta(minutes=31), "flapped 3 times", (7, 8, 9),
                              no_reset=True))  # a burn-in window's
    store.record_decision(Action(ActionKind.DISABLE, NOW - timedelta(minutes=30), "link_flap", "flapped 3 times",
                                 NODE1_LINK, guard={"disabled": 1, "cap": 10}, dry_run=False))
    intent = store.begin_intent(1, ActionKind.DISABLE, NODE1_LINK, {"ports": ["x_1"]})
    store.finish_intent(intent, IntentState.DONE, "UFM shows it disabled")
    response = await client.get(f"/components/{path_of(NODE1_LINK)}")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["id"] == str(NODE1_LINK) and body["state"]["lifecycle"] == "disabled"
    assert [(f["evidence"], f["ticket_only"], f["no_reset"]) for f in body["findings"]] == [([7, 8, 9], False, True)]
    assert [(d["kind"], d["guard"]) for d in body["decisions"]] == [("disable", {"disabled": 1, "cap": 10})]
    assert [(i["kind"], i["state"], i["outcome"]) for i in body["intents"]] == [
        ("disable", "done", "UFM shows it disabled")]
    assert body["tickets"] == []


async def test_a_planned_component_without_records_is_healthy_and_an_unknown_one_is_404(
        client: httpx.AsyncClient) -> None:
    response = await client.get(f"/components/{path_of(NODE1_LINK)}")
    assert response.status_code == 200 and response.json()["state"] is None
    response = await client.get(f"/components/{path_of('link:nowhere/1|elsewhere/2')}")
    assert response.status_code == 404
    assert response.json()["detail"] == ("link:nowhere/1|elsewhere/2 is not in the fabric plan and nothing is "
                                         "recorded about it")
    response = await client.get(f"/components/{path_of('cable:x')}")
    assert response.status_code == 422 and response.json()["detail"].startswith(
        "component_id: not a component id: 'cable:x'")


async def test_decisions_by_time_and_component(client: httpx.AsyncClient, store: Store) -> None:
    for minutes in (30, 20, 10):
        store.record_decision(Action(ActionKind.RECORD, NOW - timedelta(minutes=minutes), "ber", f"{minutes} ago",
                                     NODE1_LINK))
    store.record_decision(Action(ActionKind.HALT, NOW - timedelta(minutes=15), "storm", "storm"))
    since, until = (NOW - timedelta(minutes=25)).isoformat(), (NOW - timedelta(minutes=10)).isoformat()
    response = await client.get("/decisions", params={"since": since, "until": until})
    assert [d["reason"] for d in response.json()] == ["20 ago", "storm"]
    response = await client.get("/decisions", params={"component": str(NODE1_LINK), "limit": 2})
    assert [d["reason"] for d in response.json()] == ["20 ago", "10 ago"]
    response = await client.get("/decisions", params={"since": "2026-12-01T11:00:00"})
    assert response.status_code == 422
    assert response.json()["detail"].startswith("since: 2026-12-01T11:00:00 has no time zone")
