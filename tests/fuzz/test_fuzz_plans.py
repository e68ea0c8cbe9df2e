"""Every wiring-plan and as-built reader, on its own valid input corrupted: a ``Fabric`` or an ``InputError``, never
another exception, within the time bound of an example."""

from __future__ import annotations

import json
import tempfile
import unicodedata
from functools import cache
from pathlib import Path
from typing import Any

from fuzz_support import corrupted, corrupted_json, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st
from support import ibnetdiscover_text

from topology import strictjson
from topology.errors import InputError
from topology.formats.asbuilt import load_as_built
from topology.formats.ibnetdiscover import parse_ibnetdiscover
from topology.formats.ndt import ndt_text, parse_ndt
from topology.formats.ufm_render import write_ufm_snapshot
from topology.formats.ufm_snapshot import DOCUMENTS, read_ufm_snapshot
from topology.generate import PRESETS, fat_tree
from topology.model import Fabric


@cache
def _plan() -> Fabric:
    return fat_tree(PRESETS["tiny"])


@cache
def _snapshot() -> dict[str, Any]:
    """The tiny fabric's systems, links and ports documents, decoded."""
    with tempfile.TemporaryDirectory() as directory:
        write_ufm_snapshot(_plan(), Path(directory))
        return {name: json.loads((Path(directory) / f"{name}.json").read_text()) for name in DOCUMENTS}


def _read(read: Any, *args: Any) -> bool:
    """``read(*args)`` gives a fabric (a plan's device names hold no control character; an as-built source's may,
    for ``verify`` to flag) (``True``), or a one-line ``InputError`` (``False``)."""
    try:
        fabric = read(*args)
    except InputError as refused:
        assert "\n" not in str(refused), "one line"
        return False
    assert isinstance(fabric, Fabric)
    for device in fabric.devices.values() if fabric.plan else ():
        assert not any(unicodedata.category(char) == "Cc" for char in device.name), device.name
    return True


@fuzz_settings(200)
@given(st.data())
def test_an_ndt_plan_corrupted_is_read_or_refused(data: st.DataObject) -> None:
    text = data.draw(corrupted(ndt_text(_plan())))
    _read(parse_ndt, text.splitlines(keepends=True), "plan.csv")


@fuzz_settings(200)
@given(st.data())
def test_an_ibnetdiscover_dump_corrupted_is_read_or_refused(data: st.DataObject) -> None:
    text = data.draw(corrupted(ibnetdiscover_text(_plan())))
    _read(parse_ibnetdiscover, text.split("\n"), "dump.txt")


@fuzz_settings(120)
@given(st.data(), st.sampled_from(DOCUMENTS))
def test_a_ufm_snapshot_with_a_document_corrupted_is_read_or_refused(tmp_path_factory: Any, data: st.DataObject,
                                                                     document: str) -> None:
    """A snapshot read is one whose documents hold nothing a reader should not trust (a key given twice, NaN)."""
    directory = tmp_path_factory.mktemp("snapshot")
    text = data.draw(corrupted_json(_snapshot()[document]))
    for name, value in _snapshot().items():
        (directory / f"{name}.json").write_text(text if name == document else json.dumps(value), encoding="utf-8",
                                                errors="surrogatepass")
    if _read(read_ufm_snapshot, directory):
        strictjson.loads((directory / f"{document}.json").read_bytes())  # a byte-order mark is allowed


@fuzz_settings(80)
@given(st.data(), st.sampled_from(["ndt", "ibnetdiscover"]))
def test_a_plan_file_of_either_kind_is_sniffed_and_read_or_refused(tmp_path_factory: Any, data: st.DataObject,
                                                                   kind: str) -> None:
    valid = ndt_text(_plan()) if kind == "ndt" else ibnetdiscover_text(_plan())
    path = tmp_path_factory.mktemp("plan") / "plan.txt"
    path.write_bytes(data.draw(corrupted(valid)).encode("utf-8", "surrogatepass"))
    _read(load_as_built, path)
