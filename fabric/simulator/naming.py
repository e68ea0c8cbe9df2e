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

SITE = "default"


@dataclass(frozen=True, slots=True)
class PortName:
    """What naming needs to know about one port."""

    name: str
    guid: str
    number: int
    system_guid: str
    system_name: str
    dname: str
    node_description: str
    is_switch: bool

    @property
    def kind_word(self) -> str:
        return "Switch" if self.is_switch else "Computer"

    @property
    def path(self) -> str:
        return f"{SITE} / {self.kind_word}: {self.system_name} / NA / {self.dname}"

    @property
    def peer_info(self) -> str:
        """How UFM's threshold messages name a peer: ``Switch: leaf01 / 16``."""
        return f"{self.kind_word}: {self.system_name} / {self.dname}"

    @property
    def sm_name(self) -> str:
        """How OpenSM messages name a port: ``<node>:<label>`` (``T2-E63-L-U37:1/19/2``)."""
        return f"{self.system_name}:{self.dname}"

    @property
    def link_end(self) -> str:
        """One end as a link message writes it: ``(Switch:leaf01:16)b8599f0000000001:16``."""
        return f"({self.kind_word}:{self.system_name}:{self.dname}){self.guid}:{self.number}"


@dataclass(frozen=True, slots=True)
class EventObject:
    """The object an event is about, in every form UFM writes it."""

    object_type: str
    object_name: str
    object_path: str
    dev_id: str | None
    """The node GUID shown as ``[dev_id: …]`` in ``event.log`` (absent for links and the site)."""


def port_object(port: PortName, object_type: str = "IBPort") -> EventObject:
    return EventObject(object_type, port.name, port.path, port.guid)


def module_object(port: PortName) -> EventObject:
    """The transceiver module of a port."""
    return EventObject("Module", port.name, port.path, port.guid)


def link_name(a: PortName, b: PortName) -> str:
    return f"{a.name}:{b.name}"


def link_object(a: PortName, b: PortName) -> EventObject:
    return EventObject("Link", link_name(a, b), f"Source {a.name}  TO Dest: {b.name}", None)


def link_ends_text(a: PortName, b: PortName) -> str:
    return f"{a.link_end} - {b.link_end}"


def node_object(guid: str, name: str, *, switch: bool) -> EventObject:
    word = "Switch" if switch else "Computer"
    return EventObject(word, guid, f"{SITE} / {word}: {name}", guid)


def site_object() -> EventObject:
    return EventObject("Site", SITE, SITE, None)
