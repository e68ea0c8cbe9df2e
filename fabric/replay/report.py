"""Where a replay's decisions go as the virtual clock takes them, and the report written from them.

The decisions of a long replay outnumber everything else it keeps (95,000 of them for a week of h100-4k), so
none of the ways to keep them holds them in memory but the one tests and small inputs use:

- ``KeptDecisions``: a list (tests, and ``replay`` called as a library);
- ``SpooledDecisions``: one JSON text a line in a temporary file, read back once the replay is over: the JSON
  document opens with the summary, which is complete only then, and the terminal's table comes after it too;
- ``DecisionLines``: ``--format jsonl``, each decision written out as one line the moment it is taken.

Each can ``restart`` (forget what it was given) unless it has written to the output already: a replay that
finds its event.log out of time order starts again from the events sorted in memory (``fabric.replay.run``).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any, Protocol

from topology import strictjson

encode_entry = json.JSONEncoder(separators=(", ", ": ")).encode
"""One decision or explanation as the report writes it, on one line (quick to write, easy to grep)."""


class DecisionSink(Protocol):
    def add(self, entry: dict[str, Any]) -> None:
        """One more decision, in the order they were taken."""

    def restart(self) -> bool:
        """Forget the decisions given so far; False when they cannot be taken back (written out already)."""


class KeptDecisions(list[dict[str, Any]]):
    """The decisions in memory."""

    def add(self, entry: dict[str, Any]) -> None:
        self.append(entry)

    def restart(self) -> bool:
        self.clear()
        return True


class TextSpool:
    """Texts of one line each, in order, in a temporary file: read again each time it is iterated, deleted when
    closed (or at the process's end)."""

    def __init__(self) -> None:
        # Open for the spool's lifetime, past any one block.
        self._file = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
        self._count = 0

    def add(self, text: str) -> None:
        self._file.write(text + "\n")
        self._count += 1

    def clear(self) -> None:
        self._file.seek(0)
        self._file.truncate()
        self._count = 0

    def __iter__(self) -> Iterator[str]:
        self._file.flush()
        self._file.seek(0)
        try:
            for line in self._file:
                yield line[:-1]
        finally:
            self._file.seek(0, 2)  # to append again where it ends

    def __len__(self) -> int:
        return self._count

    def close(self) -> None:
        self._file.close()


class SpooledDecisions:
    """The decisions in a temporary file (deleted when closed), one encoded entry a line."""

    def __init__(self) -> None:
        self._lines = TextSpool()

    def add(self, entry: dict[str, Any]) -> None:
        self._lines.add(encode_entry(entry))

    def restart(self) -> bool:
        self._lines.clear()
        return True

    def texts(self) -> Iterator[str]:
        """The encoded entries, in order."""
        return iter(self._lines)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (strictjson.loads(text) for text in self.texts())

    def __len__(self) -> int:
        return len(self._lines)

    def close(self) -> None:
        self._lines.close()


class DecisionLines:
    """``--format jsonl``: ``{"decision": {...}}`` on ``out``, one line each, as they are taken."""

    def __init__(self, out: IO[str]) -> None:
        self._out = out
        self._written = False

    def add(self, entry: dict[str, Any]) -> None:
        self._out.write('{"decision": ' + encode_entry(entry) + "}\n")
        self._written = True

    def restart(self) -> bool:
        return not self._written


class ExplainedLog(TextSpool):
    """The explained link-downs, encoded, in order."""

    def take_back(self) -> list[str]:
        """What was written, removed from the file (to be put in order again with what came too late)."""
        texts = list(self)
        self.clear()
        return texts


@dataclass(slots=True)
class ReplayReport:
    summary: dict[str, Any]
    decisions: DecisionSink
    explained_texts: ExplainedLog
    """The explained link-downs, each encoded, sorted."""
    would_act: bool

    @property
    def explained(self) -> list[dict[str, Any]]:
        return [strictjson.loads(text) for text in self.explained_texts]

    def decision_entries(self) -> Iterator[dict[str, Any]]:
        """The decisions kept or spooled (none for ``DecisionLines``: they are written out already)."""
        decisions = self.decisions
        return iter(decisions) if isinstance(decisions, KeptDecisions | SpooledDecisions) else iter(())

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary, "decisions": list(self.decision_entries()), "explained": self.explained}

    def write_json(self, out: IO[str]) -> None:
        """The JSON document, written piece by piece: one decision and one explanation per line."""
        decisions = self.decisions
        if not isinstance(decisions, KeptDecisions | SpooledDecisions):
            raise TypeError("the decisions were written out already")
        out.write('{"summary": ')
        out.write(json.dumps(self.summary, indent=2).replace("\n", "\n "))
        texts = decisions.texts() if isinstance(decisions, SpooledDecisions) else map(encode_entry, decisions)
        for name, entries in (("decisions", texts), ("explained", iter(self.explained_texts))):
            out.write(f',\n "{name}": [')
            first = True
            for text in entries:
                out.write(("\n  " if first else ",\n  ") + text)
                first = False
            out.write("]" if first else "\n ]")
        out.write("}\n")

    def write_jsonl_end(self, out: IO[str]) -> None:
        """What ``--format jsonl`` writes after the decisions: ``{"explained": {...}}`` lines, then
        ``{"summary": {...}}``."""
        for text in self.explained_texts:
            out.write('{"explained": ' + text + "}\n")
        out.write(json.dumps({"summary": self.summary}) + "\n")
