"""``topology.inputs``: the one way files named by an operator are opened and read whole.

Devices, directories and sockets are refused before they are opened; a whole read never takes more than its bound
and a byte, from a file or an endless pipe; a peeked stream reads from its start; a streamed line is capped."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topology.errors import InputError
from topology.inputs import DOCUMENT, Bound, capped_lines, open_input, peeked, read_input

SMALL = Bound(1000, "a test file")


@contextmanager
def _pipe(chunks: Iterator[bytes]) -> Iterator[int]:
    """The read end of a pipe a thread fills with ``chunks`` (until they end or the reader closes its end)."""
    read_end, write_end = os.pipe()

    def write() -> None:
        try:
            for chunk in chunks:
                os.write(write_end, chunk)
        except BrokenPipeError:  # the reader had enough
            pass
        finally:
            os.close(write_end)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        yield read_end
    finally:
        writer.join(timeout=10)


def _endless(chunk: bytes) -> Iterator[bytes]:
    while True:
        yield chunk


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null", "/dev/urandom"])
def test_a_character_device_is_refused_without_reading_it(device: str) -> None:
    began = time.monotonic()
    with pytest.raises(InputError) as refused:
        read_input(device, DOCUMENT)
    assert str(refused.value) == f"{device}: is a character device (like /dev/zero or a terminal), not a file"
    assert time.monotonic() - began < 1


def test_a_directory_and_a_socket_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a directory, not a file"):
        read_input(tmp_path, DOCUMENT)
    path = tmp_path / "listening.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(InputError, match=f"^{path}: is a socket, not a file$"):
            open_input(path)


def test_a_missing_or_unreadable_path_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=f"^{tmp_path / 'absent'}: no such file$"):
        read_input(tmp_path / "absent", DOCUMENT)
    with pytest.raises(InputError, match="cannot read: Not a directory"):
        (tmp_path / "file").write_text("x")
        read_input(tmp_path / "file" / "below", DOCUMENT)


def test_a_file_over_its_bound_is_refused_by_its_size_naming_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "plan.csv"
    with path.open("wb") as sparse:  # a gibibyte and a byte, and no disk: refused before a byte is read
        sparse.truncate(DOCUMENT.limit + 1)
    with pytest.raises(InputError) as refused:
        read_input(path, DOCUMENT)
    assert str(refused.value) == (f"{path}: larger than 1 GiB, the most a wiring plan, ibnetdiscover dump, UFM "
                                  "snapshot file or event document may hold")
    exact = tmp_path / "exact"
    exact.write_bytes(b"x" * SMALL.limit)
    assert read_input(exact, SMALL) == b"x" * SMALL.limit


def test_an_endless_pipe_costs_the_bound_not_all_memory() -> None:
    with _pipe(_endless(b"\0" * 65536)) as read_end:
        path = f"/dev/fd/{read_end}"
        with pytest.raises(InputError, match="larger than 1,000 bytes, the most a test file may hold"):
            read_input(path, SMALL)
        os.close(read_end)  # the writer then stops: a broken pipe


def test_the_standard_input_only_where_a_command_takes_it(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^-: no such file$"):
        open_input("-")
    with _pipe(iter([b"from the pipe"])) as read_end:
        saved = os.dup(0)
        os.dup2(read_end, 0)
        try:
            with open_input("-", stdin=True) as stream:
                assert stream.read() == b"from the pipe"
        finally:
            os.dup2(saved, 0)
            os.close(saved)
            os.close(read_end)


def test_a_fifo_is_read_like_a_file(tmp_path: Path) -> None:
    fifo = tmp_path / "plan.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_bytes, args=(b"a,b\n" * 100,), daemon=True)
    writer.start()
    assert read_input(fifo, SMALL) == b"a,b\n" * 100
    writer.join(timeout=10)


def test_a_peeked_pipe_is_read_again_from_its_start() -> None:
    with _pipe(iter([b"12", b"345", b"6789"])) as read_end, os.fdopen(read_end, "rb") as stream:
        head, whole = peeked(stream, 4)
        assert head == b"1234"
        assert whole.read() == b"123456789"


def test_an_endless_line_is_cut_and_read_past() -> None:
    chunks = [b"short\n", *[b"x" * 4096] * 2560, b"\n", b"after\n"]  # a line of 10 MiB between two short ones
    with _pipe(iter(chunks)) as read_end, os.fdopen(read_end, "rb") as stream:
        lines = list(capped_lines(stream, 100))
    assert lines == [b"short\n", b"x" * 101, b"after\n"]


@settings(max_examples=60, deadline=2000, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.binary(max_size=300), limit=st.integers(0, 300), through_a_pipe=st.booleans())
def test_a_whole_read_gives_the_content_or_refuses_it(tmp_path: Path, content: bytes, limit: int,
                                                      through_a_pipe: bool) -> None:
    """From a file or a pipe alike: the content when it fits the bound, else ``InputError`` naming the bound."""
    bound = Bound(limit, "a test file")
    path = tmp_path / "content"
    path.write_bytes(content)
    with _pipe(iter([content])) as read_end:
        source = f"/dev/fd/{read_end}" if through_a_pipe else str(path)
        try:
            if len(content) <= limit:
                assert read_input(source, bound) == content
            else:
                with pytest.raises(InputError, match=f"larger than {bound.shown()}"):
                    read_input(source, bound)
        finally:
            os.close(read_end)


@settings(max_examples=60, deadline=2000)
@given(lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=8),
       limit=st.integers(1, 30))
def test_capped_lines_give_every_line_that_fits_whole(lines: list[bytes], limit: int) -> None:
    with _pipe(iter([b"".join(line + b"\n" for line in lines)])) as read_end, os.fdopen(read_end, "rb") as stream:
        got = list(capped_lines(stream, limit))
    assert got == [line + b"\n" if len(line) < limit else (line + b"\n")[:limit + 1] for line in lines]
