"""How UFM names the object an event is about, in REST (``object_name``/``object_path``) and in ``event.log``.

Confirmed by real UFM output:
- an IBPort path is ``default / Switch: <name> / NA / <port label>`` (``/resources/ports`` ``path`` field,
  and an ``event.log`` line ``IBPort [default(34) / Switch: c931ibsw-leaf01 / NA / 16] [dev_id: <guid>]``);
- a Link object in ``event.log`` reads ``Link [Source <guid>_<p>  TO Dest: <guid>_<p>]`` with no dev_id,
  its message ``Link went down: <end> - <end>``, an end written ``(Switch:<name>:<label>)<guid>:<port>``
  in recent releases.

UNCONFIRMED, chosen to be consistent with the above: a port event's ``object_name`` is the port name
``<guid>_<n>``; a link event's ``object_name`` is the link name of ``/resources/links``
(``<guid>_<p>:<guid>_<p>``) and its ``object_path`` the ``Source … TO Dest: …`` text; a switch or host
event names the node GUID with path ``default / Switch: <name>`` (``Computer: <name>``); a module event
names the port the module sits in.  A computer end in a link message is ``(Computer:<host>:<label>)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from topology.formats.ufm_render import SITE, PortRef


@dataclass(frozen=True, slots=True)
class EventObject:
    """The object an event is about, in every form UFM writes it."""

    object_type: str
    object_name: str
    object_path: str
    dev_id: str | None
    """The node GUID shown as ``[dev_id: …]`` in ``event.log`` (absent for links and the site)."""


def port_object(port: PortRef, object_type: str = "IBPort") -> EventObject:
    return EventObject(object_type, port.name, port.path, port.guid)


def module_object(port: PortRef) -> EventObject:
    """The transceiver module of a port."""
    return EventObject("Module", port.name, port.path, port.guid)


def link_name(a: PortRef, b: PortRef) -> str:
    return f"{a.name}:{b.name}"


def link_object(a: PortRef, b: PortRef) -> EventObject:
    return EventObject("Link", link_name(a, b), f"Source {a.name}  TO Dest: {b.name}", None)


def link_ends_text(a: PortRef, b: PortRef) -> str:
    return f"{a.link_end} - {b.link_end}"


def node_object(guid: str, name: str, *, switch: bool) -> EventObject:
    word = "Switch" if switch else "Computer"
    return EventObject(word, guid, f"{SITE} / {word}: {name}", guid)


def site_object() -> EventObject:
    return EventObject("Site", SITE, SITE, None)
