"""What UFM shows out of service, and how (``controller.ports_out``): a port disabled, or named by an entry of
``/app/unhealthy_ports`` that a ``PUT`` made, in either form UFM gives its ``Condition``, on either side."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabric.controller.ports_out import Listing, PortsOut, listings
from fabric.ufm.client import PortActionMethod
from fabric.ufm.models import UnhealthyPort

LEAF, SPINE, OTHER = "1c34da0300728606_7", "0c42a103001b8256_1", "0c42a103001b8256_2"


def entry(condition: Any, *, peer: bool = True) -> UnhealthyPort:
    """An entry as the REST guide's list example has it: the port asked for on the ``Peer*`` side."""
    fields = {"UnhealthyGUID": "1c34da0300728606", "UnhealthyPortNumber": "7", "Condition": condition,
              "State": "Info"}
    if peer:
        fields |= {"PeerGUID": "0c42a103001b8256", "PeerPortNumber": 1}
    return UnhealthyPort.model_validate(fields)


@pytest.mark.parametrize("condition", ["MANUAL", ["MANUAL"], ["NOISY", "MANUAL"]])
def test_an_entry_a_put_made_isolates_both_ends_of_its_cable(condition: Any) -> None:
    out = PortsOut(["aa00000000000001_1"], listings([entry(condition)]))
    for port in (LEAF, SPINE):
        assert port in out and out.shows(port, PortActionMethod.ISOLATE)
        assert not out.shows(port, PortActionMethod.DISABLE) and out.describe(port) == "isolated"
    assert out.shows("aa00000000000001_1", PortActionMethod.DISABLE) and OTHER not in out
    assert list(out) == sorted(["aa00000000000001_1", LEAF, SPINE])


@pytest.mark.parametrize("condition", ["FLAPPING", ["FLAPPING"], [], None])
def test_opensms_own_entries_are_unhealthy_but_no_ones_isolation(condition: Any) -> None:
    out = PortsOut((), listings([entry(condition)]))
    assert LEAF not in out and SPINE not in out  # no port write to converge or undo
    assert out.unhealthy == {LEAF, SPINE}  # but their cable may carry no traffic: counted down


def test_a_port_without_a_cable_is_listed_alone() -> None:
    out = PortsOut((), listings([entry("MANUAL", peer=False)]))
    assert out.isolated == {LEAF}


def test_a_port_both_disabled_and_isolated_says_so() -> None:
    assert PortsOut([LEAF], listings([entry("MANUAL")])).describe(LEAF) == "disabled and isolated"


_PORTS = st.sampled_from([LEAF, SPINE, OTHER, "aa00000000000001_1"])
_LISTINGS = st.frozensets(st.builds(Listing, st.frozensets(_PORTS, min_size=1, max_size=2), st.booleans()),
                          max_size=4)


@given(before=_LISTINGS, fresh=_LISTINGS, port=_PORTS)
def test_a_read_for_one_port_changes_what_is_known_of_that_port_only(before: frozenset[Listing],
                                                                     fresh: frozenset[Listing], port: str) -> None:
    """Settling one write reads the whole list, but takes from it only the entries naming its port: an entry
    someone else made meanwhile is left for the next reading, which tells the guard."""
    out = PortsOut((), before)
    out.note_listed(port, fresh)
    assert out.shows(port, PortActionMethod.ISOLATE) == any(port in e.ports and e.manual for e in fresh)
    assert {e for e in out.listed if port not in e.ports} == {e for e in before if port not in e.ports}
