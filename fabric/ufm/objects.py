"""Names of UFM objects: GUIDs, port names and the object paths carried by events.

Pure string handling, shared by the REST models and the ``event.log`` parser.

Formats (as UFM writes them):
- a port name is ``<guid>_<port number>`` with a lower-case 16-hex GUID and no ``0x``
  (e.g. ``1c34da0300728606_1``);
- an IBPort object path looks like ``default(34) / Switch: leaf01 / NA / 16`` or
  ``default / Computer: node-0218 / NA / HCA-1/1``;
- a Link object path holds both ends, ``<guid>_<p> ... : <guid>_<p>``.  UNCONFIRMED beyond UFM's own
  parsers, so when the path does not hold two ends the description's ``(Switch:name:port)<guid>:<p>``
  form (seen in "Link went down" messages) is tried as a fallback.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_GUID_RE = re.compile(r"^(?:0x)?([0-9a-fA-F]{1,16})$")
_PORT_NAME_RE = re.compile(r"^(?:0x)?([0-9a-fA-F]{1,16})_(\d+)$")
# <guid>_<port> anywhere in a path; the GUID is the usual 16 hex digits (``0x`` tolerated).
_PATH_END_RE = re.compile(r"(?<![0-9A-Za-z])(?:0x)?([0-9a-fA-F]{16})_(\d+)(?!\d)")
# "...)9c0591030090e000:33 - (...)fc6a1c0300244e00:8" inside a link-down description.
_DESC_END_RE = re.compile(r"(?<![0-9A-Za-z])(?:0x)?([0-9a-fA-F]{16}):(\d+)(?!\d)")
_SITE_SUFFIX_RE = re.compile(r"\(\d+\)$")
_DEVICE_SEGMENT_RE = re.compile(r"^([A-Za-z][\w ]*?): ?(.+)$")
_NA = frozenset({"", "NA", "N/A", "n/a", "na", "None"})


def normalize_guid(guid: str) -> str:
    """``0x1C34DA0300728606`` → ``1c34da0300728606`` (lower case, no ``0x``, zero-padded to 16)."""
    match = _GUID_RE.match(guid.strip())
    if match is None:
        raise ValueError(f"not a GUID: {guid!r}")
    return match.group(1).lower().rjust(16, "0")


@dataclass(frozen=True, slots=True)
class PortEnd:
    """One end of a link, or one port: the GUID UFM names the port by, and the port number."""

    guid: str
    port: int

    @property
    def name(self) -> str:
        """UFM's port name, ``<guid>_<port>``."""
        return f"{self.guid}_{self.port}"

    @classmethod
    def parse(cls, port_name: str) -> PortEnd:
        """Parse a UFM port name such as ``1c34da0300728606_1`` (raises ``ValueError``)."""
        match = _PORT_NAME_RE.match(port_name.strip())
        if match is None:
            raise ValueError(f"not a UFM port name (<guid>_<n>): {port_name!r}")
        return cls(guid=match.group(1).lower().rjust(16, "0"), port=int(match.group(2)))

    def __str__(self) -> str:
        return self.name



@dataclass(frozen=True, slots=True)
class ObjectRef:
    """What an event's object path says about the object it concerns.

    ``device_kind`` is the word before the colon of the device segment (``Switch``, ``Computer``…),
    ``device_name`` the name after it, ``port_label`` the last segment of an IBPort path as UFM shows
    it (``16``, ``HCA-1/1``, ``1/17/1``), ``ends`` the two ends of a Link.
    """

    object_type: str | None
    site: str | None = None
    device_kind: str | None = None
    device_name: str | None = None
    port_label: str | None = None
    ends: tuple[PortEnd, PortEnd] | None = None


def _two_pairs(regex: re.Pattern[str], text: str) -> tuple[tuple[str, int], tuple[str, int]] | None:
    """The first two distinct (GUID, port) that ``regex`` finds in ``text``, as plain tuples: a storm over every
    cable names a link not seen before in each event, so this runs once an event."""
    first: tuple[str, int] | None = None
    for guid, port in regex.findall(text):
        end = (guid.lower(), int(port))
        if first is None:
            first = end
        elif end != first:
            return first, end
    return None


def _two_ends(regex: re.Pattern[str], text: str) -> tuple[PortEnd, PortEnd] | None:
    pairs = _two_pairs(regex, text)
    return None if pairs is None else (PortEnd(*pairs[0]), PortEnd(*pairs[1]))


def path_end_names(object_path: str) -> tuple[str, str] | None:
    """The UFM port names (``<guid>_<n>``) of the two ends ``link_ends`` finds in a Link's object path, without
    building them as ``PortEnd``."""
    pairs = _two_pairs(_PATH_END_RE, object_path)
    return None if pairs is None else (f"{pairs[0][0]}_{pairs[0][1]}", f"{pairs[1][0]}_{pairs[1][1]}")


def link_ends(object_path: str | None, description: str | None = None) -> tuple[PortEnd, PortEnd] | None:
    """The two ends of a link named in an object path, else in a description; ``None`` if not found."""
    if object_path:
        ends = _two_ends(_PATH_END_RE, object_path)
        if ends is not None:
            return ends
    if description:
        ends = _two_ends(_PATH_END_RE, description)
        if ends is not None:
            return ends
        return _two_ends(_DESC_END_RE, description)
    return None


def parse_object_path(object_type: str | None, object_path: str | None, description: str | None = None) -> ObjectRef:
    """Split an event's object path into site, device and port (or the two ends of a link).

    Never raises: parts that cannot be found are ``None``.
    """
    if not object_path:
        found = link_ends(None, description) if object_type == "Link" else None
        return ObjectRef(object_type=object_type, ends=found)
    segments = [segment.strip() for segment in object_path.split(" / ")]
    site: str | None = None
    device_kind: str | None = None
    device_name: str | None = None
    device_index: int | None = None
    for index, segment in enumerate(segments):
        match = _DEVICE_SEGMENT_RE.match(segment)
        if match is not None and not _PATH_END_RE.search(segment):
            device_kind, device_name = match.group(1), match.group(2).strip()
            device_index = index
            break
    first = segments[0]
    if device_index != 0 and ":" not in first and not _PATH_END_RE.search(first):
        site = _SITE_SUFFIX_RE.sub("", first) or None
    port_label: str | None = None
    ends: tuple[PortEnd, PortEnd] | None = None
    if object_type == "Link":
        ends = link_ends(object_path, description)
        device_kind = device_name = None
    elif device_index is not None and object_type in ("IBPort", "Port"):
        tail = [segment for segment in segments[device_index + 1 :] if segment not in _NA]
        if tail:
            port_label = tail[-1]
    return ObjectRef(
        object_type=object_type,
        site=site,
        device_kind=device_kind,
        device_name=device_name,
        port_label=port_label,
        ends=ends,
    )
