"""``DumpReader``: an element of UFM's systems, links or ports list that it keeps is exactly what validation and
``model_dump`` make of it, and the topology read at start-up (``SpooledList``) refuses what validation refuses, in
its words."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import httpx
import pytest
import respx
from ufm_fakes import ClientFactory, port_payload

from fabric.ufm.client import UfmClient
from fabric.ufm.errors import UfmMalformedResponseError
from fabric.ufm.models import DumpReader, Link, Port, System, UfmModel
from fabric.ufm.snapshot import read_topology, spooled_topology

PALETTE: tuple[Any, ...] = ("1c34da0300728606_1", "4x", " N/A ", "n/a", "", "None", "null", "NDR", 7, 0, -3,
                            2**70, 1.5, 2.0, True, None, [], ["a", "b"], ["a", 1], [None], {}, {"k": [1]}, "12")
"""Values of every JSON type, UFM's "not available" spellings among them, strings that read as numbers."""


def _element(model: type[UfmModel], rng: random.Random) -> dict[str, Any]:
    fields = [*model.model_fields, "extra_field", "module"]
    return {name: rng.choice(PALETTE) for name in rng.sample(fields, rng.randint(0, len(fields)))}


@pytest.mark.parametrize("model", [System, Port, Link])
def test_a_kept_element_is_what_validation_and_dump_give(model: type[UfmModel]) -> None:
    reader = DumpReader(model)
    rng = random.Random(23)
    usual = model.model_validate(_usual(model)).model_dump()
    kept = 0
    for _ in range(4000):
        item = _element(model, rng) if rng.random() < 0.5 else {**usual, **_element(model, rng)}
        if not reader.kept(item):
            continue
        kept += 1
        dumped = model.model_validate(item).model_dump()
        assert reader.dump(item) == dumped, item
        assert list(reader.dump(item)) == list(dumped), item  # the fields in the same order
    assert kept > 50


@pytest.mark.parametrize("model", [System, Port, Link])
def test_what_ufm_sends_is_kept_without_validation(model: type[UfmModel]) -> None:
    assert DumpReader(model).kept(_usual(model))


def _usual(model: type[UfmModel]) -> dict[str, Any]:
    """An element in the shape UFM sends it."""
    if model is Port:
        return port_payload()
    if model is Link:
        return {"name": "a_1:b_1", "source_guid": "1c34da0300728606", "source_port": "1", "source_port_dname": "1",
                "destination_guid": "0c42a103001b8256", "destination_port": "1", "width": "4x", "capabilities": [],
                "cable_info": {}}
    return {"guid": "1c34da0300728606", "system_name": "leaf01", "type": "switch", "ports": ["1c34da0300728606_1"]}


@pytest.mark.parametrize(("field", "value", "says"), [
    ("system_name", 5, "system_name\n  Input should be a valid string"),
    ("name", None, "name\n  Input should be a valid string"),
    ("capabilities", 3, "capabilities\n  Input should be a valid list"),
])
def test_a_port_validation_refuses_is_refused_in_its_words(router: respx.Router, make_client: ClientFactory,
                                                           field: str, value: Any, says: str) -> None:
    ports = [port_payload(), {**port_payload("1c34da0300728606_2"), field: value}]
    router.get("/ufmRest/resources/ports").respond(200, json=ports)
    router.get("/ufmRest/resources/systems").respond(200, json=[_usual(System)])
    router.get("/ufmRest/resources/links").respond(200, json=[])

    async def read(ufm: UfmClient) -> None:
        async with spooled_topology(ufm) as lists:
            read_topology(lists, "UFM")

    async def go() -> None:
        async with make_client() as ufm:
            await read(ufm)

    with pytest.raises(UfmMalformedResponseError) as caught:
        asyncio.run(go())
    message = str(caught.value)
    assert "UFM's answer has the wrong shape: element 1 is not a valid Port" in message
    assert says in message and "GET /ufmRest/resources/ports" in message


def test_the_reading_counts_what_the_lists_show(router: respx.Router, make_client: ClientFactory) -> None:
    ports = [port_payload(), port_payload("1c34da0300728606_2", physical_state="Disabled"),
             port_payload("1c34da0300728606_3", logical_state="N/A", number="N/A")]  # validated, not kept
    router.get("/ufmRest/resources/ports").respond(200, content=json.dumps(ports).encode())
    router.get("/ufmRest/resources/systems").respond(200, json={"data": [_usual(System)]})
    router.get("/ufmRest/resources/links").respond(200, json=[])

    async def go() -> tuple[int, int, int, frozenset[str]]:
        async with make_client() as ufm, spooled_topology(ufm) as lists:
            found = read_topology(lists, "UFM")
        return found.systems, found.ports, found.active_ports, found.disabled_ports

    assert asyncio.run(go()) == (1, 3, 1, frozenset({"1c34da0300728606_2"}))


def test_a_read_failing_mid_body_is_tried_again_from_the_start(router: respx.Router,
                                                                make_client: ClientFactory) -> None:
    whole = json.dumps([port_payload(), port_payload("1c34da0300728606_2")]).encode()

    class CutShort(httpx.AsyncByteStream):
        async def __aiter__(self):  # type: ignore[no-untyped-def]
            yield whole[:40]
            raise httpx.ReadError("connection reset")

    route = router.get("/ufmRest/resources/ports")
    route.side_effect = [httpx.Response(200, stream=CutShort()), httpx.Response(200, content=whole)]

    async def go() -> list[str]:
        async with make_client() as ufm:
            with await ufm.topology_list("ports") as spooled:
                return [e["name"] for e in spooled.elements()]

    assert asyncio.run(go()) == ["1c34da0300728606_1", "1c34da0300728606_2"]
    assert route.call_count == 2
