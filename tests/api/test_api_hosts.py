"""Host health: the yes/no a scheduler consumes, with its reasons, and the exclude list."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from api_support import NODE1_LINK, NODE2_LINK, NOW, seed

from fabric.remediation.domain import ComponentId, ComponentKind, ComponentRecord, Lifecycle
from fabric.store import Store
from topology.model import Fabric

pytestmark = pytest.mark.anyio


async def health(client: httpx.AsyncClient, host: str) -> dict[str, object]:
    response = await client.get(f"/hosts/{host}/health")
    assert response.status_code == 200, response.text
    body: dict[str, object] = response.json()
    return body


async def test_a_host_with_nothing_recorded_is_healthy(client: httpx.AsyncClient) -> None:
    assert await health(client, "pod01-node04") == {"host": "pod01-node04", "healthy": True, "reasons": [],
                                                    "since": None}


async def test_a_disabled_host_link_makes_its_host_unhealthy(client: httpx.AsyncClient, store: Store,
                                                             plan: Fabric) -> None:
    seed(store, plan)
    body = await health(client, "pod01-node01")
    assert body["healthy"] is False
    assert body["reasons"] == [f"{NODE1_LINK} disabled since {(NOW - timedelta(minutes=30)).isoformat()} "
                               "(link_flap: flapped 3 times)"]
    assert body["since"] == (NOW - timedelta(minutes=30)).isoformat().replace("+00:00", "Z")


async def test_a_quarantined_link_makes_its_host_unhealthy(client: httpx.AsyncClient, store: Store,
                                                           plan: Fabric) -> None:
    seed(store, plan)
    body = await health(client, "POD01-NODE02")
    assert (body["host"], body["healthy"]) == ("pod01-node02", False)
    assert body["reasons"] == [f"{NODE2_LINK} quarantined since {(NOW - timedelta(hours=2)).isoformat()} "
                               "(ber: BER 1e-9, 3 strikes)"]


async def test_probation_is_usable_and_a_faulty_uplink_is_not_the_hosts(client: httpx.AsyncClient, store: Store,
                                                                        plan: Fabric) -> None:
    seed(store, plan)  # node03's own cable is on probation; an uplink of its leaf awaits repair
    assert (await health(client, "pod01-node03"))["healthy"] is True


async def test_hosts_behind_a_leaf_with_an_open_switch_fault_are_unhealthy(client: httpx.AsyncClient, store: Store,
                                                                           plan: Fabric) -> None:
    seed(store, plan)
    for host in ("pod02-node01", "pod02-node04"):
        body = await health(client, host)
        assert body["healthy"] is False
        assert body["reasons"] == [f"behind switch:pod02-leaf01, which has an open switch_fault since "
                                   f"{(NOW - timedelta(minutes=10)).isoformat()} (4 cables failed within 5m)"]


async def test_a_host_not_in_the_plan_is_404(client: httpx.AsyncClient) -> None:
    response = await client.get("/hosts/gpu-9999/health")
    assert response.status_code == 404
    assert response.json() == {"detail": "host: no host 'gpu-9999' in the fabric plan"}


async def test_the_host_list_filters_and_has_a_text_form(client: httpx.AsyncClient, store: Store,
                                                         plan: Fabric) -> None:
    seed(store, plan)
    unhealthy = ["pod01-node01", "pod01-node02", "pod02-node01", "pod02-node02", "pod02-node03", "pod02-node04"]
    response = await client.get("/hosts", params={"healthy": "false"})
    assert [h["host"] for h in response.json()] == unhealthy
    response = await client.get("/hosts", params={"healthy": "true"})
    assert [h["host"] for h in response.json()] == ["pod01-node03", "pod01-node04"]
    response = await client.get("/hosts", params={"healthy": "false", "format": "text"})
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == "".join(f"{host}\n" for host in unhealthy)
    assert len((await client.get("/hosts")).json()) == 8
    response = await client.get("/hosts", params={"format": "yaml"})
    assert response.status_code == 422 and response.json()["detail"].startswith("format: Input should be")


async def test_an_adapter_port_and_the_host_itself_count(client: httpx.AsyncClient, store: Store) -> None:
    since = NOW - timedelta(minutes=5)
    store.put_component(ComponentId(ComponentKind.PORT, "pod01-node04 mlx5_1/2"),
                        ComponentRecord(Lifecycle.TICKETED, since, "port_errors", "symbol errors"))
    store.put_component(ComponentId(ComponentKind.HOST, "pod02-node04"),
                        ComponentRecord(Lifecycle.DEFERRED, since, "host_down", "no heartbeat"))
    assert (await health(client, "pod01-node04"))["reasons"] == [
        f"port:pod01-node04 mlx5_1/2 ticketed since {since.isoformat()} (port_errors: symbol errors)"]
    assert (await health(client, "pod02-node04"))["reasons"] == [
        f"host:pod02-node04 deferred since {since.isoformat()} (host_down: no heartbeat)"]
    assert (await health(client, "pod02-node03"))["healthy"] is True
