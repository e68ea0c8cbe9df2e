"""The plan's index, handed from the engine's process to the API's: the API process does not read the plan itself.

Both processes need the wiring plan: the engine its model, the API only the index of it that host health and the
components' filters read (``fabric.api.plan_index``). The engine process reads the plan first thing at each start
(its preflight), so it writes the index's plain values (``marshal``) into the run directory there and then
(``hand_over``), and the API process loads them (``handed_over``) instead of reading and modelling the plan a second
time. The API process thus never holds a model of the plan, whose memory would add to the engine's when the two
processes' start-ups overlap (``docs/benchmarks.md``, session 23).

The file is written whole or not at all (``rundir.write_whole``) in the run directory, which is this instance's
alone (mode 0700), and ``marshal`` runs no code named by the file. It is written once for the run directory: the
API loads it once, so an engine process started again after a crash does not make it again (a changed ``[fabric]
plan`` takes a restart of the daemon, as any change of the plan always did).
"""

from __future__ import annotations

import marshal
from pathlib import Path

from fabric.api.plan_index import PlanIndex, index_of_values, index_values
from fabric.daemon.rundir import write_whole
from topology.model import Fabric

INDEX_NAME = "plan-index.marshal"


def hand_over(directory: Path, plan: Fabric) -> None:
    """``plan``'s index written for the API process, unless an engine process of this run wrote it already."""
    if not (directory / INDEX_NAME).exists():
        write_whole(directory, INDEX_NAME, marshal.dumps(index_values(plan)))


def handed_over(directory: Path) -> PlanIndex | None:
    """The index the engine process wrote (``None``: not written yet)."""
    try:
        data = (directory / INDEX_NAME).read_bytes()
    except FileNotFoundError:
        return None
    return index_of_values(marshal.loads(data))
