"""One of UFM's list answers, its body in a temporary file, read an element at a time.

UFM answers ``/resources/ports`` of h100-32k with 146 MB of JSON. Held as bytes, decoded whole and validated into a
list of models, the three topology lists took 1.5 GB at start-up. Spooled to a file as it arrives
(``UfmHttp.get_spooled``) and decoded a piece at a time from it (``topology.jsonlist.file_items``), each element
is handed on and dropped before the next is decoded: memory stays at a piece or two whatever the list's size.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from datetime import tzinfo
from typing import IO, Any, Protocol, TypeVar

from pydantic import ValidationError

from fabric.ufm.errors import BODY_EXCERPT_CHARS
from fabric.ufm.http import UfmHttp
from fabric.ufm.models import DumpReader, ShapeError, UfmModel
from topology.jsonlist import file_items
from topology.strictjson import JsonError

__all__ = ["SpooledList", "body_start", "file_digest"]

_BLOCK = 1 << 20
"""Bytes of a spooled body read at a time to take its digest."""


class _Digest(Protocol):
    def update(self, data: bytes, /) -> None: ...


HashT = TypeVar("HashT", bound=_Digest)

_SHOWN_BYTES = 4 * (BODY_EXCERPT_CHARS + 1)
"""Bytes enough for the characters an error shows of a body (and to tell that more follow), at four a character."""


class SpooledList:
    """``GET <path>``'s body in ``file``, read as a list of ``model``. Close it (or use it as a context manager)."""

    def __init__(self, file: IO[bytes], model: type[UfmModel], path: str, status: int, http: UfmHttp,
                 tz: tzinfo) -> None:
        self.model = model
        self._file, self._path, self._status, self._http, self._tz = file, path, status, http, tz

    def __enter__(self) -> SpooledList:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._file.close()

    def digest(self) -> bytes:
        """SHA-256 of the body as UFM sent it (0.12 s for h100-32k's 190 MB of lists)."""
        return file_digest(self._file, 0, os.fstat(self._file.fileno()).st_size, hashlib.sha256()).digest()

    def elements(self) -> Iterator[dict[str, Any]]:
        """Each element as validation keeps it (``DumpReader``: read its fields with ``get(name, default)``), from
        the list's start, decoded as it is asked for. A body that is not JSON the project reads, or an element
        the model refuses, raises the ``UfmMalformedResponseError`` the whole body read at once raised, when the
        reading reaches it."""
        reader = DumpReader(self.model)
        context = {"tz": self._tz}
        self._file.seek(0)
        try:
            for index, item in enumerate(file_items(self._file)):
                if reader.kept(item):
                    yield item
                    continue
                if not isinstance(item, dict):
                    raise ShapeError(f"element {index} is a {type(item).__name__}, not an object")
                try:
                    yield self.model.model_validate(item, context=context).model_dump()
                except ValidationError as exc:
                    raise ShapeError(f"element {index} is not a valid {self.model.__name__}: {exc}") from exc
        except ShapeError as exc:
            raise self._http.malformed("GET", self._path, self._status, body_start(self._file), exc) from exc
        except JsonError as exc:
            raise self._http.not_json("GET", self._path, self._status, body_start(self._file), None, exc) from exc


def body_start(file: IO[bytes]) -> bytes:
    """The first bytes of a body spooled to ``file``, as much as an error shows of it."""
    return os.pread(file.fileno(), _SHOWN_BYTES, 0)


def file_digest(file: IO[bytes], start: int, stop: int, digest: HashT) -> HashT:
    """``digest`` updated with the open ``file``'s bytes from ``start`` to ``stop``, read a block at a time (whatever
    the file's position)."""
    for at in range(start, stop, _BLOCK):
        digest.update(os.pread(file.fileno(), min(_BLOCK, stop - at), at))
    return digest
