"""Schemathesis against the fake Jira's OpenAPI document (``/_admin/openapi.json``), served by uvicorn in a thread
on 127.0.0.1 as the tests serve it: its REST API with and without credentials, and its admin API. Zero 5xx; every
answer as documented. Each on a fake of its own: a fault the admin API injects (a 503, an answer held for
minutes) is meant for the REST API's next requests, not for this suite's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from fuzz_support import Tally, config
from schemathesis import Case
from schemathesis.checks import unsupported_method
from schemathesis.schemas import BaseSchema

from fabric.simulator.jira import JiraAuth, serve_jira

USER, TOKEN = "fabric-bot", "api-token"
REST = Tally("fake Jira REST API")
ADMIN = Tally("fake Jira admin API")


def _served(tally: Tally) -> Iterator[BaseSchema]:
    with serve_jira(auth=JiraAuth(users={USER: TOKEN}, tokens={TOKEN: USER})) as jira:
        tally.begin()
        yield schemathesis.openapi.from_url(f"{jira.url}/_admin/openapi.json", config=config())


@pytest.fixture(scope="module")
def jira_rest_schema() -> Iterator[BaseSchema]:
    yield from _served(REST)


@pytest.fixture(scope="module")
def jira_admin_schema() -> Iterator[BaseSchema]:
    yield from _served(ADMIN)


rest = schemathesis.pytest.from_fixture("jira_rest_schema").include(path_regex="^/rest/")
admin = schemathesis.pytest.from_fixture("jira_admin_schema").include(path_regex="^/_admin/")


@rest.parametrize()
def test_the_rest_api_answers_as_documented_with_and_without_credentials(case: Case) -> None:
    case.call_and_validate(auth=(USER, TOKEN))
    case.call_and_validate(headers={"Authorization": f"Bearer {TOKEN}"})
    # Without credentials every request is a 401, an unknown method's too: its method is not looked at.
    case.call_and_validate(excluded_checks=[unsupported_method])
    REST.count(case.operation.label, 3)


@admin.parametrize()
def test_the_admin_api_answers_as_documented(case: Case) -> None:
    case.call_and_validate()
    ADMIN.count(case.operation.label)
