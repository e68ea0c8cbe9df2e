"""The dedup key, ``Ticket`` and the error hierarchy."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import FrozenInstanceError

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ticket_helpers import T0

from tickets.base import (
    BackendUnavailableError,
    Ticket,
    TicketBackend,
    TicketConflictError,
    TicketError,
    TicketNotFoundError,
    TicketStatus,
    dedup_key,
    is_dedup_key,
)
from tickets.local import LocalTicketBackend

LINK = "link:leaf01/33|spine02/5"


def test_dedup_key_shape_and_determinism() -> None:
    key = dedup_key("h100-4k", LINK)
    assert key.startswith("ibdedup-")
    assert len(key) == len("ibdedup-") + 16
    assert is_dedup_key(key)
    assert key == dedup_key("h100-4k", LINK)
    # Pinned: the key must never change between releases, or open tickets would be forgotten.
    assert key == "ibdedup-0794dc842c0065b9"


def test_dedup_key_is_stable_across_processes() -> None:
    code = f"from tickets.base import dedup_key; print(dedup_key('h100-4k', {LINK!r}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == dedup_key("h100-4k", LINK)


def test_dedup_key_separates_fabrics_and_components() -> None:
    assert dedup_key("fabric-a", LINK) != dedup_key("fabric-b", LINK)
    assert dedup_key("f", "link:a/1|b/1") != dedup_key("f", "link:a/1|b/2")
    assert dedup_key("a", "b:c") != dedup_key("a:b", "c")
    # Names are case-insensitive (component ids are case-folded) and surrounding blanks do not count.
    assert dedup_key(" Fabric ", "LINK:Leaf01/33|Spine02/5") == dedup_key("fabric", "link:leaf01/33|spine02/5")


def test_dedup_key_needs_both_names() -> None:
    with pytest.raises(ValueError, match="needs a fabric and a component"):
        dedup_key("", LINK)
    with pytest.raises(ValueError, match="needs a fabric and a component"):
        dedup_key("f", "  ")


@settings(max_examples=60)
@given(st.text(min_size=1).filter(str.strip), st.text(min_size=1).filter(str.strip))
def test_dedup_key_is_always_a_valid_jira_label(fabric: str, component: str) -> None:
    key = dedup_key(fabric, component)
    assert is_dedup_key(key)
    assert not any(ch.isspace() for ch in key)
    assert key.isascii()
    assert key == key.lower()


def test_is_dedup_key_rejects_other_strings() -> None:
    assert not is_dedup_key("ibdedup-XYZ")
    assert not is_dedup_key("ibdedup-0123")
    assert not is_dedup_key("OPS-17")


def test_ticket_is_frozen() -> None:
    ticket = Ticket("LOCAL-1", "ibdedup-0", "s", "d", TicketStatus.OPEN, ("a",), None, T0)
    assert ticket.is_open
    assert ticket.comments == 0
    with pytest.raises(FrozenInstanceError):
        ticket.status = TicketStatus.RESOLVED  # type: ignore[misc]


def test_error_hierarchy() -> None:
    assert issubclass(TicketNotFoundError, TicketError)
    assert issubclass(BackendUnavailableError, TicketError)
    assert issubclass(TicketConflictError, TicketError)
    err = TicketNotFoundError("OPS-9")
    assert err.key == "OPS-9"
    assert "OPS-9" in str(err)


def test_local_backend_satisfies_the_protocol() -> None:
    backend: TicketBackend = LocalTicketBackend.__new__(LocalTicketBackend)
    assert isinstance(backend, TicketBackend)
    assert backend.name == "local"


def test_tickets_package_depends_on_nothing_in_the_project() -> None:
    code = (
        "import sys, tickets.base, tickets.local; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('fabric', 'topology')); "
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
