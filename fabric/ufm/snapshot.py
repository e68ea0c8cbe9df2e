"""One read of UFM's systems, links and ports, and the as-built fabric they describe.

``verify --ufm`` and the engine both read UFM's view of the fabric through this module, so they agree on
what "as built" means (the same three resources, read in parallel, turned into a ``Fabric`` the same way). Each
body goes to a temporary file as it arrives and is folded into the fabric an element at a time: no list of UFM's
is held whole, in bytes or in objects, whatever the fabric's size.
Saved (``fabricctl ufm snapshot``, ``fabricctl simulate --snapshot``) it is the directory that ``verify
--as-built`` and ``replay --as-built`` read: ``systems.json``, ``links.json``, ``ports.json``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from fabric.ufm.models import DumpReader
from fabric.ufm.spooled import SpooledList
from topology.formats.ufm_snapshot import DOCUMENTS, UfmFabricBuilder
from topology.model import Fabric


class TopologySource(Protocol):
    """What a snapshot reads (``UfmClient`` provides it)."""

    async def topology_list(self, name: str) -> SpooledList: ...


@asynccontextmanager
async def spooled_topology(ufm: TopologySource) -> AsyncIterator[Mapping[str, SpooledList]]:
    """Systems, links and ports, read in parallel, each body in a temporary file until the block ends. When one
    read fails the others are cancelled and waited for before the error is raised, so none is left running (and
    retrying) against a client its caller is about to close."""
    reads = {name: asyncio.ensure_future(ufm.topology_list(name)) for name in DOCUMENTS}
    try:
        await asyncio.gather(*reads.values())
    except BaseException:
        for read in reads.values():
            read.cancel()
        for outcome in await asyncio.gather(*reads.values(), return_exceptions=True):
            if isinstance(outcome, SpooledList):
                outcome.close()
        raise
    lists = {name: read.result() for name, read in reads.items()}
    try:
        yield lists
    finally:
        for spooled in lists.values():
            spooled.close()


def topology_digest(lists: Mapping[str, SpooledList]) -> bytes:
    """One digest of the three lists' bytes: two reads of equal digests read the same bytes, so the same topology
    (``read_topology`` makes the same of them)."""
    digest = hashlib.sha256()
    for name in DOCUMENTS:
        digest.update(name.encode() + lists[name].digest())
    return digest.digest()


@dataclass(frozen=True, slots=True)
class UfmTopology:
    """What one read of UFM's systems, links and ports shows: the as-built fabric, and the figures and ports the
    engine judges the reading by."""

    fabric: Fabric
    systems: int
    ports: int
    active_ports: int
    disabled_ports: frozenset[str]
    """UFM ports whose physical state is Disabled."""


def read_topology(lists: Mapping[str, SpooledList], source: str, *, prefix: str | None = None) -> UfmTopology:
    """The as-built fabric, each list folded into it an element at a time (ports, systems, then links); errors cite
    ``GET <prefix>/resources/<name>`` when ``prefix`` is given, ``<source>/<name>.json`` otherwise."""
    documents = ({name: f"GET {prefix}/resources/{name}" for name in DOCUMENTS} if prefix is not None else None)
    builder = UfmFabricBuilder(source, documents=documents)
    ports = active = 0
    disabled: set[str] = set()
    for ports, entry in enumerate(lists["ports"].elements(), start=1):
        builder.add_port(entry, ports - 1)
        if (entry.get("logical_state") or "").strip().lower() == "active":
            active += 1
        if (entry.get("physical_state") or "").strip().lower() == "disabled":
            disabled.add(entry["name"])
    systems = 0
    for systems, entry in enumerate(lists["systems"].elements(), start=1):
        builder.add_system(entry, systems - 1)
    for index, entry in enumerate(lists["links"].elements()):
        builder.add_link(entry, index)
    return UfmTopology(builder.build(), systems, ports, active, frozenset(disabled))


def save_topology(lists: Mapping[str, SpooledList], directory: Path) -> dict[str, int]:
    """Save the three lists as ``directory``/systems.json, links.json and ports.json, each element as validation
    gives it (every field of its model, then the extra ones); returns how many elements each holds. Every element
    is checked before ``directory`` is touched (an element UFM sent wrong leaves no half-written snapshot); an
    error writing raises ``OSError``."""
    counts: dict[str, int] = {}
    with tempfile.TemporaryFile(prefix="fabric-snapshot-") as systems, \
            tempfile.TemporaryFile(prefix="fabric-snapshot-") as links, \
            tempfile.TemporaryFile(prefix="fabric-snapshot-") as ports:
        staged = {"systems": systems, "links": links, "ports": ports}
        for name, spooled in lists.items():
            counts[name] = _write_list(staged[name], spooled, DumpReader(spooled.model))
        write_snapshot_documents(directory, staged)
    return counts


def _write_list(out: IO[bytes], spooled: SpooledList, reader: DumpReader) -> int:
    """The elements of ``spooled`` written to ``out`` as ``json.dumps(elements, indent=1)`` writes the list, one
    at a time; how many there were."""
    count = 0
    for count, element in enumerate(spooled.elements(), start=1):
        text = json.dumps(reader.dump(element), indent=1).replace("\n", "\n ")  # one level in: the list's
        out.write(f"{'[' if count == 1 else ','}\n {text}".encode())
    out.write(b"\n]" if count else b"[]")
    out.seek(0)
    return count


def write_snapshot_documents(directory: Path, documents: Mapping[str, bytes | IO[bytes]]) -> None:
    """Write each of ``systems``, ``links`` and ``ports`` (encoded JSON, or a file read from where it stands) to
    ``directory``/<name>.json.

    All three are written beside their final names first and only then renamed over them, so a failed write
    leaves an existing snapshot as it was.  Raises OSError (e.g. the directory cannot be created or written).
    """
    if set(documents) != set(DOCUMENTS):
        raise ValueError(f"a snapshot is exactly {', '.join(DOCUMENTS)}, got {', '.join(sorted(documents))}")
    directory.mkdir(parents=True, exist_ok=True)
    written: dict[str, str] = {}
    try:
        for name in DOCUMENTS:
            handle, written[name] = tempfile.mkstemp(prefix=f".{name}.", suffix=".json", dir=directory)
            with os.fdopen(handle, "wb") as out:
                document = documents[name]
                if isinstance(document, bytes):
                    out.write(document)
                else:
                    shutil.copyfileobj(document, out)
        for name in DOCUMENTS:
            os.replace(written.pop(name), directory / f"{name}.json")
    finally:
        for leftover in written.values():
            os.unlink(leftover)
