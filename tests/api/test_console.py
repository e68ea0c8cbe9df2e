"""The console over HTTP in process (the daemon's app over a real SQLite store of the tiny plan): its session
cookie's flags, CSRF refusals, the standby's read-only pages, and hostile names escaped. The browser's view of it
is ``tests/browser/test_console_browser.py``'s."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from urllib.parse import quote

import httpx
import pytest
from api_support import NOW, TOKEN, FakeRuntime, seed
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric.api.app import PREFIX
from fabric.api.context import ApiContext, LeaderView, Role
from fabric.api.plan_index import plan_index
from fabric.config import ServiceConfig
from fabric.console.sessions import COOKIE
from fabric.daemon.api_metrics import ApiMetrics
from fabric.daemon.app import build_app
from fabric.remediation.domain import ComponentId, ComponentKind, ComponentRecord, Lifecycle
from fabric.store import RequestKind, Store
from topology.model import Fabric

HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture
def app(plan: Fabric, store: Store, runtime: FakeRuntime) -> FastAPI:
    """The daemon's app (the API, the console, the root health paths), served by ``served`` over loopback."""
    return build_app(ApiContext(config=ServiceConfig(), index=plan_index(plan), store=store, runtime=runtime,
                                clock=lambda: NOW), ApiMetrics())


@pytest.fixture
def console(served: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served.removesuffix(PREFIX), follow_redirects=False, timeout=10) as client:
        yield client


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no CSRF token in the page"
    return found[1]


def _logged_in(console: httpx.Client) -> str:
    """Log in; the CSRF token of the session."""
    answer = console.post("/ui/login", data={"by": "alice", "token": TOKEN})
    assert answer.status_code == 303
    return _csrf(console.get("/ui/silences").text)


def _silence(console: httpx.Client, csrf: str | None) -> dict[str, str]:
    form = {"matcher": "switch:pod01-leaf01", "duration": "2h", "reason": "swap the PSU"}
    return form if csrf is None else {**form, "csrf": csrf}


@pytest.mark.usefixtures("token")
def test_the_login_cookie_is_http_only_and_same_site_strict_and_a_silence_is_added_and_expired_with_who_and_why(
        console: httpx.Client, store: Store) -> None:
    answer = console.post("/ui/login", data={"by": "alice", "token": TOKEN})
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert TOKEN not in cookie  # an opaque id: the token never leaves the daemon
    csrf = _csrf(console.get("/ui/silences").text)
    assert console.post("/ui/silences", data=_silence(console, csrf)).status_code == 303
    (silence,) = store.silences()
    assert (silence.matcher, silence.created_by, silence.reason) == ("switch:pod01-leaf01", "alice", "swap the PSU")
    assert "swap the PSU" in console.get("/ui/silences").text
    expire = {"csrf": csrf, "reason": "PSU swapped"}
    assert console.post(f"/ui/silences/{silence.id}/expire", data=expire).status_code == 303
    assert store.silences() == []


@pytest.mark.usefixtures("token")
def test_a_post_without_the_sessions_csrf_token_is_refused_and_writes_nothing(console: httpx.Client,
                                                                            store: Store) -> None:
    csrf = _logged_in(console)
    assert console.post("/ui/silences", data=_silence(console, None)).status_code == 403
    assert console.post("/ui/silences", data=_silence(console, csrf[::-1])).status_code == 403
    assert store.silences() == []


@pytest.mark.usefixtures("token")
def test_without_a_login_a_write_is_refused(console: httpx.Client, store: Store) -> None:
    answer = console.post("/ui/silences", data=_silence(console, "anything"))
    assert answer.status_code == 401 and "log in" in answer.text
    assert console.post("/ui/login", data={"by": "mallory", "token": "guess"}).status_code == 401
    assert COOKIE not in console.cookies
    assert store.silences() == []


def test_with_no_admin_token_configured_nobody_logs_in(console: httpx.Client) -> None:
    answer = console.post("/ui/login", data={"by": "alice", "token": ""})
    assert answer.status_code == 403 and "no admin token" in answer.text


@pytest.mark.usefixtures("token")
def test_a_session_ends_when_the_admin_token_changes(console: httpx.Client, monkeypatch: pytest.MonkeyPatch,
                                                     store: Store) -> None:
    csrf = _logged_in(console)
    monkeypatch.setenv("FABRIC_API__ADMIN_TOKEN", "a-new-token")
    assert console.post("/ui/silences", data=_silence(console, csrf)).status_code == 401
    assert store.silences() == []


@pytest.mark.usefixtures("token")
def test_the_standby_says_so_offers_no_form_and_refuses_writes(console: httpx.Client, runtime: FakeRuntime,
                                                               store: Store) -> None:
    csrf = _logged_in(console)
    runtime.live = replace(runtime.live, leadership=LeaderView(Role.STANDBY, "b:2", 3, "a:1"))
    page = console.get("/ui/silences")
    assert page.status_code == 200 and 'id="standby"' in page.text and "read-only" in page.text
    assert 'id="add-silence"' not in page.text and "/expire" not in page.text  # no form to write with
    answer = console.post("/ui/silences", data=_silence(console, csrf))
    assert answer.status_code == 409 and "standby" in answer.text
    assert console.post("/ui/login", data={"by": "bob", "token": TOKEN}).status_code == 409
    assert store.silences() == []


@pytest.mark.usefixtures("token")
def test_a_halt_is_shown_with_its_reason_and_an_admin_resumes_it_as_the_api_would(
        console: httpx.Client, store: Store, runtime: FakeRuntime) -> None:
    store.halt("storm: 40 components within 5m")
    assert "resume automation" not in console.get("/").text  # not logged in: no form
    csrf = _logged_in(console)
    page = console.get("/").text
    assert "halted" in page and "storm: 40 components within 5m" in page and "resume automation" in page
    assert console.post("/ui/resume", data={"csrf": csrf, "reason": "a UFM restart"}).status_code == 303
    (request,) = store.pending_requests()
    assert (request.kind, request.requested_by, request.reason) == (RequestKind.RESUME, "alice", "a UFM restart")
    assert runtime.wakes == 1
    assert "pending: resume by alice: a UFM restart" in console.get("/").text


@pytest.mark.usefixtures("token")
def test_every_page_answers_with_the_security_headers(console: httpx.Client, store: Store, plan: Fabric) -> None:
    seed(store, plan)
    for path in ("/", "/ui/components", "/ui/decisions", "/ui/hosts", "/ui/silences", "/ui/login", "/ui/fabric",
                 "/ui/fabric?pod=1", "/ui/hosts?host=pod01-node01", "/ui/components/switch:pod02-leaf01"):
        answer = console.get(path)
        assert answer.status_code == 200, path
        assert "script-src 'self'" in answer.headers["content-security-policy"], path
        assert answer.headers["x-content-type-options"] == "nosniff"


def test_filters_the_api_refuses_are_shown_with_its_words_and_status(console: httpx.Client) -> None:
    answer = console.get("/ui/components", params={"switch": "no-such-switch"})
    assert answer.status_code == 404 and "no switch &#39;no-such-switch&#39; in the fabric plan" in answer.text
    assert console.get("/ui/components", params={"state": "sleepy"}).status_code == 422
    assert console.get("/ui/fabric", params={"pod": 99}).status_code == 404


def test_the_root_health_paths_answer_as_the_apis(console: httpx.Client) -> None:
    assert console.get("/healthz").json() == console.get("/api/v1/healthz").json() == {"alive": True}
    assert console.get("/readyz").status_code == console.get("/api/v1/readyz").status_code
    assert console.get("/metrics").text.startswith("# HELP")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(alphabet=st.sampled_from("<>&\"'=/ xa"), min_size=1, max_size=30))
def test_whatever_a_component_is_named_its_pages_show_the_name_as_text(console: httpx.Client, store: Store,
                                                                       name: str) -> None:
    """A switch of UFM's with any name: it reaches the pages escaped (no tag of its own, no attribute broken)."""
    component = ComponentId(ComponentKind.SWITCH, f"{HOSTILE}{name}")
    store.put_component(component, ComponentRecord(Lifecycle.QUARANTINED, NOW, "switch_fault", f"{HOSTILE}{name}"))
    for path in ("/ui/components", f"/ui/components/{quote(str(component), safe='')}"):
        html = console.get(path).text
        assert "<img" not in html, path
        assert "&lt;img src=x onerror=alert(1)&gt;" in html, path


def test_a_cable_taken_out_is_drawn_isolated_where_the_site_isolates(plan: Fabric) -> None:
    """``[ufm] method = "isolate"``: automation's cables out are up and carry no data, and the picture says so;
    a quarantined or awaiting-repair cable keeps the colour that says more."""
    from datetime import UTC, datetime

    from fabric.api.context import GuardFigures
    from fabric.api.plan_index import plan_index
    from fabric.console.fabric_page import cable_marks
    from fabric.remediation.domain import ComponentId, ComponentKind, ComponentRecord, Lifecycle
    from fabric.remediation.signals import link_id
    from topology.picture.marks import CableState

    index = plan_index(plan)
    at = datetime(2026, 12, 7, tzinfo=UTC)
    states = (Lifecycle.DISABLED, Lifecycle.QUARANTINED, Lifecycle.AWAITING_REPAIR)
    records = {link_id(cable.key): ComponentRecord(lifecycle, at, "flap", "test")
               for cable, lifecycle in zip(plan.cables, states, strict=False)}
    records[ComponentId(ComponentKind.PORT, "nowhere/1")] = ComponentRecord(Lifecycle.DISABLED, at, "flap", "test")
    for isolating, taken_out in ((False, CableState.DISABLED), (True, CableState.ISOLATED)):
        drawn = {mark.cable: mark.state for mark in cable_marks(index, records, GuardFigures(), isolating=isolating)}
        assert drawn == {link_id(plan.cables[0].key).name: taken_out,
                         link_id(plan.cables[1].key).name: CableState.QUARANTINED,
                         link_id(plan.cables[2].key).name: CableState.AWAITING_REPAIR}
