"""One error hierarchy: every error a person can act on is a ``FabricError`` of a kind; nothing else is."""

from __future__ import annotations

import pytest

from fabric.config import ConfigError
from fabric.errors import BadInputError, ErrorKind, FabricError, TicketSystemError, as_fabric_error
from fabric.store import StoreError
from tickets.base import BackendUnavailableError
from topology.errors import InputError


@pytest.mark.parametrize(("error", "kind"), [
    (InputError("bad row", source="plan.csv", line=3), ErrorKind.INPUT),
    (BackendUnavailableError("Jira answered 503"), ErrorKind.TICKET),
    (StoreError("sqlite:///x.db: no database"), ErrorKind.STORE),
    (ConfigError(["config.toml: rules.flap_cycles: must be at least 1"]), ErrorKind.CONFIG),
])
def test_each_family_has_its_kind_and_keeps_its_message(error: Exception, kind: ErrorKind) -> None:
    adopted = as_fabric_error(error)
    assert isinstance(adopted, FabricError) and adopted.kind is kind
    assert str(adopted) == str(error)
    if not isinstance(error, FabricError):
        assert adopted.__cause__ is error and isinstance(adopted, BadInputError | TicketSystemError)


@pytest.mark.parametrize("bug", [ValueError("x"), KeyError("y"), AssertionError(), RuntimeError("z")])
def test_anything_else_is_a_bug_and_not_adopted(bug: Exception) -> None:
    assert as_fabric_error(bug) is None
