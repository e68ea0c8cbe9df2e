"""Every REST endpoint of the simulated UFM, in each of UFM's three auth modes, over real loopback HTTP."""

from __future__ import annotations

import httpx
import pytest
from sim_support import PASSWORD, USER, Sim, run

from fabric.ufm import BasicAuth, SessionAuth, UfmAuthError, UfmClient, UfmNotFoundError
from fabric.ufm.auth import TokenAuth

MODES = ["basic", "session", "token"]
PREFIX = {"basic": "/ufmRest", "session": "/ufmRestV2", "token": "/ufmRestV3"}


@pytest.mark.parametrize("mode", MODES)
def test_client_reads_every_resource_in_each_auth_mode(sim: Sim, mode: str) -> None:
    async def scenario() -> None:
        async with sim.client(mode) as ufm:
            assert ufm.prefix == PREFIX[mode]
            systems = await ufm.systems()
            switches = await ufm.systems(type="switch")
            assert len(systems) == 20 and len(switches) == 12  # tiny: 12 switches + 8 hosts
            assert all(s.is_switch for s in switches)
            ports = await ufm.ports()
            assert len(ports) == 96
            one_switch = await ufm.ports(system=switches[0].guid)
            assert one_switch and {p.system_guid for p in one_switch} == {switches[0].guid}
            port = await ufm.port(ports[5].name)
            assert port.name == ports[5].name and port.physical_state == "Link Up"
            links = await ufm.links()
            assert len(links) == 48
            versions = (await ufm.versioning()).versions()
            assert {"ports_version", "links_version", "alarms_version"} <= set(versions)
            assert await ufm.events() == [] and await ufm.alarms() == [] and await ufm.unhealthy_ports() == []
            sim.inject(fault="link_down", link=ports[5].name)
            events = await ufm.events()
            assert [e.event_id for e in events] == [329]
            assert len(await ufm.links()) == 47
    run(scenario())


@pytest.mark.parametrize("mode", MODES)
def test_raw_endpoints_in_each_auth_mode(sim: Sim, mode: str) -> None:
    with httpx.Client(base_url=sim.url) as http:
        _login(sim, http, mode)
        _exercise_endpoints(sim, http, PREFIX[mode])


def _login(sim: Sim, http: httpx.Client, mode: str) -> None:
    if mode == "basic":
        http.auth = (USER, PASSWORD)
    elif mode == "session":
        login = http.post("/dologin", data={"httpd_username": USER, "httpd_password": PASSWORD})
        assert login.status_code == 200 and "sessionid" in http.cookies
    else:
        http.headers["Authorization"] = f"Basic {sim.token()}"


def _exercise_endpoints(sim: Sim, http: httpx.Client, prefix: str) -> None:
    systems = http.get(f"{prefix}/resources/systems").json()
    guid = systems[0]["guid"]
    by_guid = http.get(f"{prefix}/resources/systems/{guid}").json()
    assert isinstance(by_guid, list) and by_guid[0]["guid"] == guid
    assert http.get(f"{prefix}/resources/systems/ffffffffffffffff").status_code == 404
    hosts = http.get(f"{prefix}/resources/systems", params={"type": "host"}).json()
    assert len(hosts) == 8 and {h["type"] for h in hosts} == {"host"}
    name = systems[0]["ports"][0]
    assert http.get(f"{prefix}/resources/ports/{name}").json()[0]["name"] == name
    assert http.get(f"{prefix}/resources/ports/0000000000000001_1").status_code == 404
    sim.inject(fault="link_down", link=name)
    active = http.get(f"{prefix}/resources/ports", params={"active": "true"}).json()
    assert len(active) == 94 and name not in {p["name"] for p in active}
    page = http.get(f"{prefix}/resources/links", params={"page_number": 2, "rpp": 10}).json()
    assert set(page) == {"data"} and len(page["data"]) == 10
    wrapped = http.get(f"{prefix}/resources/links", params={"page_number": 1, "rpp": 1_000_000_000}).json()
    assert len(wrapped["data"]) == 47
    event = http.get(f"{prefix}/app/events").json()[0]
    assert http.get(f"{prefix}/app/events/{event['id']}").json() == event
    assert http.get(f"{prefix}/app/events/999").status_code == 404
    assert http.get(f"{prefix}/app/events", params={"type": "329"}).json() == [event]
    assert http.get(f"{prefix}/app/events", params={"severity": "Critical"}).json() == []
    assert http.get(f"{prefix}/app/versioning").status_code == 200
    assert http.get(f"{prefix}/app/alarms").json() == []
    other = systems[0]["ports"][1]
    put = http.put(f"{prefix}/app/unhealthy_ports",
                   json={"ports": [other], "ports_policy": "UNHEALTHY", "action": "isolate"})
    assert put.status_code == 200
    entry = http.get(f"{prefix}/app/unhealthy_ports/{other}").json()
    # The port asked for on the Peer side, as NVIDIA's batch_isolate_devices.py reads it; its cable's far end on
    # the Unhealthy side.
    assert entry["PeerPort"] == other and entry["Condition"] == "MANUAL"
    assert entry["UnhealthyPort"] not in (other, "N/A")
    assert http.put(f"{prefix}/app/unhealthy_ports",
                    json={"ports": ["0000000000000001_1"], "ports_policy": "UNHEALTHY"}).status_code == 400
    action = http.post(f"{prefix}/actions", json={
        "action": "disable", "object_ids": [systems[0]["guid"]], "object_type": "System",
        "identifier": "id", "params": {"port_id": other}, "description": ""})
    assert action.status_code == 202
    location = action.headers["Location"]
    assert location.startswith(f"{sim.url}{prefix}/jobs/")
    job = http.get(location).json()
    assert job["Status"] == "Running" and job["RelatedObjects"] == [systems[0]["guid"]]
    assert http.get(f"{prefix}/jobs").json()[0]["ID"] == job["ID"]
    assert http.get(f"{prefix}/jobs/12345").status_code == 404
    assert http.post(f"{prefix}/actions", json={"action": "reboot", "object_ids": [guid]}).status_code == 400


def test_wrong_credentials_are_refused_in_every_mode(sim: Sim) -> None:
    for path in ("/ufmRest/resources/systems", "/ufmRestV2/resources/systems", "/ufmRestV3/resources/systems"):
        assert httpx.get(sim.url + path).status_code == 401
    basic = httpx.get(sim.url + "/ufmRest/app/events", auth=(USER, "wrong"))
    assert basic.status_code == 401 and basic.headers["WWW-Authenticate"].startswith("Basic")
    assert httpx.get(sim.url + "/ufmRestV2/app/events", cookies={"sessionid": "forged"}).status_code == 401
    assert httpx.post(sim.url + "/dologin", data={"httpd_username": USER, "httpd_password": "x"}).status_code == 401
    token = sim.token()
    # UFM's scheme word for tokens is Basic; Bearer is refused, and so is a token on the basic prefix.
    assert httpx.get(sim.url + "/ufmRestV3/app/events", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    assert httpx.get(sim.url + "/ufmRestV3/app/events", headers={"Authorization": f"Basic {token}"}).status_code == 200
    assert httpx.get(sim.url + "/ufmRest/app/events", headers={"Authorization": f"Basic {token}"}).status_code == 401
    revoke = httpx.post(sim.url + "/ufmRest/app/tokens/revoke", auth=(USER, PASSWORD), files={"token": (None, token)})
    assert revoke.status_code == 200
    assert httpx.get(sim.url + "/ufmRestV3/app/events", headers={"Authorization": f"Basic {token}"}).status_code == 401
    listed = httpx.get(sim.url + "/ufmRest/app/tokens", auth=(USER, PASSWORD)).json()
    assert [t["revoked"] for t in listed if t["access_token"] == token] == [True]

    async def client_errors() -> None:
        for value in ("not-a-token", token):
            async with UfmClient(sim.url, TokenAuth(value)) as ufm:
                with pytest.raises(UfmAuthError):
                    await ufm.systems()
    run(client_errors())


def test_client_errors_for_bad_password_session_and_unknown_port(sim: Sim) -> None:
    async def scenario() -> None:
        async with UfmClient(sim.url, BasicAuth(USER, "nope")) as ufm:
            with pytest.raises(UfmAuthError):
                await ufm.links()
        async with UfmClient(sim.url, SessionAuth(USER, "nope")) as ufm:
            with pytest.raises(UfmAuthError):
                await ufm.links()
        async with sim.client() as ufm:
            with pytest.raises(UfmNotFoundError):
                await ufm.port("0000000000000001_1")
    run(scenario())


def test_session_client_logs_in_again_after_a_ufm_restart(sim: Sim) -> None:
    async def scenario() -> None:
        async with sim.client("session") as ufm:
            assert len(await ufm.links()) == 48
            assert sim.http.post("/simulator/restart").status_code == 200  # sessions are gone
            assert len(await ufm.links()) == 48
    run(scenario())
