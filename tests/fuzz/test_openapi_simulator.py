"""Schemathesis against the UFM simulator's OpenAPI document, served by uvicorn in a thread on 127.0.0.1 (as the
tests, the demo and the daemon tests serve it).

The admin API (``/simulator``, fabric-remediation's own): zero 5xx, every answer as documented. UFM's REST API
(``/ufmRest*``, ``/dologin``), with and without its credentials: zero 5xx (its document lists what UFM answers,
not every body UFM's own document would). Each suite has a simulator of its own: what the admin API injects
(UFM answering 500 or late on purpose) must not reach the other.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from fuzz_support import Tally, config
from schemathesis import Case
from schemathesis.schemas import BaseSchema

from fabric.simulator import SimClock, SimSettings, SimState, serve
from topology.generate import PRESETS, fat_tree

ADMIN = Tally("simulator admin API")
UFM = Tally("simulator UFM API")
LARGEST_STORM = 20_000
"""Storms past this many events are accepted as documented and only slow: not sent (the bound is still tried)."""


def _served(tally: Tally) -> Iterator[BaseSchema]:
    from daemon_support import START

    state = SimState.from_plan(fat_tree(PRESETS["tiny"]), clock=SimClock(START),
                               settings=SimSettings(job_seconds=2.0))
    with serve(state) as server:
        tally.begin()
        yield schemathesis.openapi.from_url(f"{server.url}/simulator/openapi.json", config=config())


@pytest.fixture(scope="module")
def admin_schema() -> Iterator[BaseSchema]:
    yield from _served(ADMIN)


@pytest.fixture(scope="module")
def ufm_schema() -> Iterator[BaseSchema]:
    yield from _served(UFM)


admin = schemathesis.pytest.from_fixture("admin_schema").include(path_regex="^/simulator/")
ufm = schemathesis.pytest.from_fixture("ufm_schema").include(path_regex="^/(ufmRest|dologin)")


def _slow_storm(case: Case) -> bool:
    count = case.body.get("count") if case.path == "/simulator/events/bulk" and isinstance(case.body, dict) else None
    return isinstance(count, int) and count > LARGEST_STORM


@admin.parametrize()
def test_the_admin_api_answers_as_documented(case: Case) -> None:
    if _slow_storm(case):
        return
    case.call_and_validate()
    ADMIN.count(case.operation.label)


@ufm.parametrize()
def test_the_ufm_api_never_answers_5xx(case: Case) -> None:
    from schemathesis.checks import not_a_server_error

    from fabric.simulator.auth import BASIC

    if case.path.startswith(BASIC + "/"):
        case.call_and_validate(auth=("admin", "123456"), checks=[not_a_server_error])
    case.call_and_validate(checks=[not_a_server_error])
    UFM.count(case.operation.label, 2)
