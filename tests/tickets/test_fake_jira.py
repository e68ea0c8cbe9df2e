"""The fake Jira itself, over HTTP: what it refuses as Jira would (JQL it does not understand, missing
credentials, Cloud's removed ``/search``), its faults, and ``fabricctl simulate-jira`` (served, and its bad
input)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

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
        assert response.json()["detail"].startswith(detail)
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
