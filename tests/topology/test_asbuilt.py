"""``load_as_built``: whatever file it is given, a fabric or one InputError naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topology.errors import InputError
from topology.formats.asbuilt import load_as_built

# Heads that send the sniffer down each reader: an ibnetdiscover dump, an NDT plan, anything else.
HEADS = st.sampled_from([b"", b"vendid=0x2c9\nswitchguid=0xa1\n", b"caguid=0xb1\n",
                         b"StartDevice,StartPort,EndDevice,EndPort\n",
                         b"\xef\xbb\xbf#StartDevice,StartPort,EndDevice,EndPort\n"])


# Bodies that once crashed a reader: huge port numbers, a short row under a header in a later column.
ODD_BODIES = st.sampled_from([b"sw1,Port " + b"9" * 5000 + b",sw2,Port 1\n", b"x\n", b"a,b\n",
                              b'Switch 2 "S-00000000000000a1"# "s"\n[' + b"9" * 5000
                              + b']"S-00000000000000a2"[1]# "t"\n',
                              b",StartDevice,StartPort,EndDevice,EndPort\n\n,a\n"])


@settings(max_examples=150, deadline=None)
@given(HEADS, ODD_BODIES | st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_any_file_is_a_fabric_or_an_input_error_naming_it(tmp_path_factory: pytest.TempPathFactory, head: bytes,
                                                          body: bytes) -> None:
    path = tmp_path_factory.getbasetemp() / "as-built.txt"
    path.write_bytes(head + body)
    try:
        load_as_built(path)
    except InputError as exc:
        assert exc.source == str(path) and "\n" not in str(exc)


def test_missing_source(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_as_built(tmp_path / "absent")
