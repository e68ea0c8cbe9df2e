"""The node-name-map file of OpenSM and infiniband-diags (``ibnetdiscover --node-name-map``, ``ibdiagnet``,
``opensm``'s ``node_name_map_name``): GUIDs to the names a person reads.

The format, as the infiniband-diags man pages document it (ibnetdiscover(8), "NODE NAME MAP FILE FORMAT"; the
parser is OpenSM's, in opensm-libs): one node a line, its GUID (``0x`` and hex digits) then its name in double
quotes; ``#`` starts a comment line; blank lines are skipped. A name
cannot hold a double quote or a line break, so such a name is refused rather than written broken.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from topology.errors import InputError
from topology.model import canonical_guid
from topology.ports import excerpt

_ENTRY = re.compile(r'^(?:0x)?(?P<guid>[0-9A-Fa-f]{1,16})\s+"(?P<name>[^"]*)"\s*(?:#.*)?$')


def render_node_name_map(names: Iterable[tuple[str, str]], header: Iterable[str] = ()) -> str:
    """``(guid, name)`` pairs as a node-name-map file, each ``header`` line a comment above them."""
    lines = [f"# {line}" for line in header]
    for guid, name in names:
        if '"' in name or not name.isprintable():
            raise InputError(f"the name {excerpt(name)} cannot go in a node-name-map (a quote or a control "
                             "character)", source=f"GUID {guid}")
        lines.append(f'0x{canonical_guid(guid)} "{name}"')
    return "\n".join(lines) + "\n"


def parse_node_name_map(text: str, source: str) -> dict[str, str]:
    """GUID (canonical, see ``canonical_guid``) -> name; a line that is neither an entry nor a comment is an error
    naming it, as is a GUID given twice."""
    names: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        entry = _ENTRY.match(line)
        if entry is None:
            raise InputError(f'not a node-name-map entry (0x<guid> "<name>"): {excerpt(line)}', source=source,
                             line=number)
        guid = canonical_guid(entry["guid"])
        if guid in names:
            raise InputError(f"GUID 0x{guid} is named twice", source=source, line=number)
        names[guid] = entry["name"]
    return names


def mapped(names: Mapping[str, str], guid: str, description: str) -> str:
    """What the diagnostics print for a node given a map: its mapped name, else its node description."""
    return names.get(canonical_guid(guid), description)
