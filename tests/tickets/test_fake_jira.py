"""The fake Jira itself, over HTTP: what it refuses as Jira would (JQL it does not understand, missing
credentials, Cloud's removed ``/search``), its faults, and ``fabricctl simulate-jira`` (served, and its bad
input)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from jira_support import PAT, TOKEN, USER, fake_jira
from typer.testing import CliRunner

from fabric.cli.app import app
from fabric.simulator.jira import Fault
from fabric.simulator.jira.jql import JqlError, parse_jql
from fabric.simulator.server import free_port
from tickets.base import TicketError, TicketStatus, dedup_key
from tickets.jira import JiraAuthKind, JiraSettings, JiraTicketBackend

REPO = Path(__file__).resolve().parents[2]

ISSUE = {"fields": {"project": {"key": "OPS"}, "issuetype": {"name": "Task"}, "summary": "s", "labels": ["a"]}}


@pytest.mark.parametrize("jql", [
    'summary ~ "flap"',
    "project = OPS OR labels = a",
    "labels != a",
    "statusCategory = Finished",
    "resolution = Fixed",
    "project = OPS ORDER BY priority",
    "project = OPS AND",
    "",
])
def test_jql_outside_the_grammar_is_refused(jql: str) -> None:
    with pytest.raises(JqlError):
        parse_jql(jql)


def test_jql_errors_are_jira_400s_and_credentials_are_required() -> None:
    with fake_jira() as jira, httpx.Client(base_url=jira.url, timeout=10) as http:
        assert http.get("/rest/api/2/serverInfo").status_code == 401
        assert http.get("/rest/api/2/myself", headers={"Authorization": "Bearer nope"}).status_code == 401
        assert http.get("/rest/api/2/myself", auth=(USER, "wrong")).status_code == 401
        assert http.get("/rest/api/2/myself", headers={"Authorization": f"Bearer {PAT}"}).json()["name"] == "bot"
        response = http.get("/rest/api/2/search", params={"jql": 'summary ~ "x"'}, auth=(USER, TOKEN))
        assert response.status_code == 400
        assert response.json()["errorMessages"] == ["Field 'summary' does not exist or you do not have permission "
                                                     "to view it."]
        bad = {"fields": {**ISSUE["fields"], "labels": ["two words"]}}
        created = http.post("/rest/api/2/issue", json=bad, auth=(USER, TOKEN))
        assert created.status_code == 400 and "contains spaces" in created.json()["errors"]["labels"]


@pytest.mark.parametrize(("path", "body", "detail"), [
    ("/rest/api/2/issue", b'{"fields": {"summary": "a", "summary": "b"}}', "body: fields.summary: duplicate key"),
    ("/rest/api/2/search", b'{"jql": "project = OPS", "maxResults": NaN}', "body: maxResults: NaN is not"),
    ("/rest/api/2/issue/OPS-1/comment", b'{"body": ' + b"[" * 20_000 + b"]" * 20_000 + b"}", "body: nested deeper"),
])
def test_a_body_with_a_key_given_twice_nan_or_deep_nesting_is_a_400_naming_it(path: str, body: bytes,
                                                                               detail: str) -> None:
    with fake_jira() as jira, httpx.Client(base_url=jira.url, timeout=10) as http:
        response = http.post(path, content=body, auth=(USER, TOKEN), headers={"Content-Type": "application/json"})
        assert response.status_code == 400, response.text
        [message] = response.json()["errorMessages"]  # in Jira's own body, as the fake's every refusal
        assert message.startswith(detail)
        assert jira.state.issues == {}


def test_cloud_serves_search_only_at_search_jql() -> None:
    with fake_jira(cloud=True) as jira, httpx.Client(base_url=jira.url, auth=(USER, TOKEN), timeout=10) as http:
        assert http.post("/rest/api/3/issue", json=ISSUE).status_code == 201
        assert http.get("/rest/api/2/search", params={"jql": "labels = a"}).status_code == 410
        found = http.get("/rest/api/3/search/jql", params={"jql": "labels = a"}).json()
        assert [issue["key"] for issue in found["issues"]] == ["OPS-1"] and found["isLast"] is True


def test_faults_through_the_admin_endpoint() -> None:
    with fake_jira() as jira, httpx.Client(base_url=jira.url, auth=(USER, TOKEN), timeout=10) as http:
        assert http.post("/_admin/faults", json={"status": 429, "retry_after": 3, "count": 2}).status_code == 204
        for _ in range(2):
            refused = http.get("/rest/api/2/serverInfo")
            assert (refused.status_code, refused.headers["Retry-After"]) == (429, "3")
        assert http.get("/rest/api/2/serverInfo").status_code == 200
        jira.state.inject(Fault(status=503, path="/issue"))
        assert http.get("/rest/api/2/serverInfo").status_code == 200  # only requests on that path
        assert http.post("/rest/api/2/issue", json=ISSUE).status_code == 503
        assert jira.state.issues == {}
        assert http.put("/_admin/search-lag", json={"seconds": 3600}).status_code == 204
        assert http.post("/rest/api/2/issue", json=ISSUE).status_code == 201
        assert http.get("/rest/api/2/search", params={"jql": "labels = a"}).json()["total"] == 0
        assert http.get("/rest/api/2/issue/OPS-1").json()["key"] == "OPS-1"  # a read is never behind
        resolved = http.post("/_admin/issues/OPS-1/resolve", json={}).json()["fields"]
        assert (resolved["status"]["statusCategory"]["key"], resolved["resolution"]["name"]) == ("done", "Done")


def test_simulate_jira_refuses_bad_input_in_one_line() -> None:
    result = CliRunner().invoke(app, ["simulate-jira", "--project", "ops-1"])
    assert result.exit_code == 2
    assert "--project 'OPS-1'" in result.output


def test_fabricctl_simulate_jira_serves_the_backend() -> None:
    """The command as an operator runs it, and the Jira backend (the real library) against it: a Cloud fake whose
    search lags, so a ticket just opened is not yet in the fabric's list."""
    port = free_port()
    command = [sys.executable, "-m", "fabric.cli", "simulate-jira", "--port", str(port), "--project", "NET",
               "--user", USER, "--token", TOKEN, "--cloud", "--search-lag", "3600"]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{url}/rest/api/2/serverInfo", timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
                assert time.monotonic() < deadline, "fabricctl simulate-jira did not start"
                time.sleep(0.2)
        settings = JiraSettings(url=url, project="NET", scope_label="ibfabric-x", auth=JiraAuthKind.CLOUD, user=USER,
                                timeout=5)
        backend = JiraTicketBackend(settings, TOKEN)
        ticket = backend.open(dedup_key("x", "port:leaf01/1"), "s", "d")
        assert ticket.key == "NET-1" and ticket.status is TicketStatus.OPEN
        assert backend.list(TicketStatus.OPEN) == []  # the search lags an hour behind
        assert backend.status("NET-1") == ticket
        with pytest.raises(TicketError, match="refused the credentials"):
            JiraTicketBackend(settings, "wrong").status("NET-1")
    finally:
        process.terminate()
        process.wait(timeout=15)
    banner = process.stderr.read().decode() if process.stderr else ""
    assert f"fake Jira (Cloud) on {url}, projects NET" in banner and TOKEN not in banner


def test_fabricctl_simulate_jira_stops_on_sigterm_with_a_request_held_in_flight() -> None:
    """An injected delay holds an answer for minutes on purpose; SIGTERM still stops the fake within seconds (the
    requests in flight get ``SHUTDOWN_GRACE``), exit 0."""
    from fabric.serving import SHUTDOWN_GRACE

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen([sys.executable, "-m", "fabric.cli", "simulate-jira", "--port", str(port), "--user",
                                USER, "--token", TOKEN], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                assert httpx.post(f"{url}/_admin/faults", json={"delay": 600}, timeout=2).status_code == 204
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline, "fabricctl simulate-jira did not start"
                time.sleep(0.2)
        held = threading.Thread(target=_held_request, args=(f"{url}/rest/api/2/serverInfo",), daemon=True)
        held.start()
        time.sleep(1.0)  # the request is in, its answer held for ten minutes
        stopping = time.monotonic()
        process.send_signal(signal.SIGTERM)
        # uvicorn, once stopped, raises the signal it caught again: the exit status a shell shows for SIGTERM.
        assert process.wait(timeout=SHUTDOWN_GRACE + 10) in (0, -signal.SIGTERM)
        assert time.monotonic() - stopping < SHUTDOWN_GRACE + 5
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=15)
    assert "Traceback" not in (process.stderr.read().decode() if process.stderr else "")


def _held_request(url: str) -> None:
    with contextlib.suppress(httpx.HTTPError):  # the fake closes the connection as it stops
        httpx.get(url, auth=(USER, TOKEN), timeout=60)


@pytest.mark.parametrize(("path", "body", "field"), [
    ("/_admin/faults", {"status": "abc"}, "status"),
    ("/_admin/faults", {"status": 200}, "status"),
    ("/_admin/faults", {"delay": "x"}, "delay"),
    ("/_admin/faults", {"delay": False}, "delay"),
    ("/_admin/faults", {"delay": 1e9}, "delay"),
    ("/_admin/faults", {"count": "3"}, "count"),
    ("/_admin/faults", {"retry_after": [1]}, "retry_after"),
    ("/_admin/faults", {"method": 7}, "method"),
    ("/_admin/faults", {"statsu": 503}, "statsu"),
    ("/_admin/search-lag", {"seconds": "soon"}, "seconds"),
    ("/_admin/search-lag", {"seconds": -1}, "seconds"),
])
def test_fault_settings_of_the_wrong_type_are_refused_and_later_requests_unharmed(path: str, body: dict[str, Any],
                                                                                  field: str) -> None:
    with fake_jira() as jira, httpx.Client(base_url=jira.url, auth=(USER, TOKEN), timeout=10) as http:
        refused = http.request("POST" if path.endswith("faults") else "PUT", path, json=body)
        assert refused.status_code == 400, refused.text
        assert list(refused.json()["errors"]) == [field], refused.json()
        assert http.get("/rest/api/2/serverInfo").status_code == 200
        assert http.post("/rest/api/2/issue", json=ISSUE).status_code == 201
        assert http.get("/rest/api/2/search", params={"jql": "labels = a"}).json()["total"] == 1


@pytest.mark.parametrize(("method", "path", "body", "params"), [
    ("POST", "/rest/api/2/search", None, None),
    ("POST", "/rest/api/2/search", "[" * 100_000, None),
    ("POST", "/rest/api/2/search", '{"jql": "labels = a", "maxResults": {}}', None),
    ("POST", "/rest/api/3/search/jql", '{"jql": "labels = a", "nextPageToken": 5}', None),
    ("GET", "/rest/api/2/search", None, {"jql": "labels = a", "startAt": "soon"}),
])
def test_a_search_it_cannot_run_is_jiras_400(method: str, path: str, body: str | None,
                                             params: dict[str, str] | None) -> None:
    with fake_jira() as jira, httpx.Client(base_url=jira.url, auth=(USER, TOKEN), timeout=10) as http:
        refused = http.request(method, path, content=body, params=params, headers={"content-type": "application/json"})
        assert refused.status_code == 400, refused.text
        assert refused.json()["errorMessages"], refused.json()


def test_a_key_or_id_of_digits_int_does_not_read_is_not_found() -> None:
    """``"²".isdigit()`` is true and ``int("²")`` fails: found by ``make fuzz``."""
    with fake_jira() as jira, httpx.Client(base_url=jira.url, auth=(USER, TOKEN), timeout=10) as http:
        for tail in ("", "/comment", "/transitions"):
            assert http.get(f"/rest/api/2/issue/\u00b2{tail}").status_code == 404, tail
        created = http.post("/rest/api/2/issue", json={"fields": {**ISSUE["fields"], "project": {"id": "\u00b2"}}})
        assert created.status_code == 400 and "project" in created.json()["errors"]
