"""Pydantic models of UFM REST payloads.

Every model keeps fields it does not know (``extra="allow"``): a new UFM release adding a field never
breaks parsing.  Fields this service relies on are typed; fields UFM fills with ``"N/A"`` are read
leniently.  Timestamps become timezone-aware UTC datetimes; UFM writes them without a zone, and they are
read as UTC unless a validation context ``{"tz": <tzinfo>}`` says otherwise (the zone UFM's timestamps
are written in is UNCONFIRMED).

Lists may come bare (``[...]``) or wrapped (``{"data": [...]}``): :func:`unwrap_list` (``topology.jsonlist``) is
the one place that knows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime, tzinfo
from enum import StrEnum
from typing import Annotated, Any, NoReturn, Self, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from fabric.errors import quoted
from fabric.ufm.objects import ObjectRef, PortEnd, normalize_guid, parse_object_path
from topology.jsonlist import ShapeError, unwrap_list
from topology.numerals import whole_number

__all__ = [
    "EVENT_FIELDS",
    "Alarm",
    "DumpReader",
    "Event",
    "EventReader",
    "Job",
    "JobStatus",
    "Link",
    "Port",
    "ShapeError",
    "System",
    "UfmModel",
    "UfmTimestamps",
    "UnhealthyPort",
    "Versioning",
    "construct_event",
    "parse_list",
    "parse_ufm_timestamp",
    "unwrap_list",
]

_NA_STRINGS = frozenset({"", "n/a", "na", "none", "null"})


# --------------------------------------------------------------------------------------------------
# lenient scalar types


def _is_na(value: object) -> bool:
    return value is None or (isinstance(value, str) and value.strip().lower() in _NA_STRINGS)


def _loose_int(value: object) -> int | None:
    """``"N/A"``/``None``/unparseable → ``None``; ``"12"``/``12`` → 12.  For fields nothing depends on."""
    if _is_na(value) or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def _to_str(value: object) -> object:
    """Numbers become strings (UFM is inconsistent about ``"37"`` vs ``37``); ``None`` stays ``None``."""
    if type(value) is str:  # nearly always: ahead of the union ``isinstance`` below (a storm validates 100,000)
        return value
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return str(value)
    return value


def _na_to_none(value: object) -> object:
    return None if _is_na(value) else value


def _str_list(value: object) -> object:
    """``None`` → ``[]``; a lone string → ``[string]``; lists pass through."""
    if value is None:
        return []
    if isinstance(value, str):
        return [] if value == "" else [value]
    return value


class TimestampRangeError(ValueError):
    """A timestamp that reads as a date but is no time this platform can hold (UTC beyond year 1..9999)."""


def parse_ufm_timestamp(value: object, tz: tzinfo = UTC) -> datetime:
    """Parse a UFM timestamp into an aware UTC datetime.

    Accepts ``"2017-09-19 10:49:03.018"``, ``"2024-05-28 08:03:05"``, ISO 8601 with ``T`` and/or an
    offset, ``datetime`` objects and epoch seconds (or milliseconds).  A timestamp without a zone is
    taken to be in ``tz``.  Raises ``ValueError`` for anything else.
    """
    try:
        if isinstance(value, datetime):
            parsed = value
        elif isinstance(value, int | float) and not isinstance(value, bool):
            seconds = float(value) / 1000.0 if value > 1e11 else float(value)
            return datetime.fromtimestamp(seconds, tz=UTC)
        elif isinstance(value, str):
            parsed = datetime.fromisoformat(value.strip())
        else:
            raise ValueError("not a string, a number or a datetime")
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=tz)
        return parsed.astimezone(UTC)
    except (OverflowError, OSError):
        # A time that does not exist in UTC (9999-12-31T23:59:59-07:00) or is past what the platform holds.
        raise TimestampRangeError(f"not a UFM timestamp: {quoted(value)} is out of range") from None
    except ValueError:
        raise ValueError(f"not a UFM timestamp: {quoted(value)}") from None


class UfmTimestamps:
    """``parse_ufm_timestamp(value, tz)``, remembering the last text read: a list's events come in bursts that
    share one (a storm's 100,000 events, a cycle's worth of a week's history)."""

    __slots__ = ("_last_text", "_last_when", "tz")

    def __init__(self, tz: tzinfo = UTC) -> None:
        self.tz = tz
        self._last_text: str | None = None
        self._last_when = datetime.min

    def parse(self, value: object) -> datetime:
        if type(value) is str and value == self._last_text:
            return self._last_when
        when = parse_ufm_timestamp(value, self.tz)
        if type(value) is str:
            self._last_text, self._last_when = value, when
        return when


def _context_tz(info: ValidationInfo) -> tzinfo:
    context = info.context
    # ``dict`` first: an ABC's ``isinstance`` costs a microsecond, and every event's timestamp asks.
    if isinstance(context, (dict, Mapping)):
        tz = context.get("tz")
        if isinstance(tz, tzinfo):
            return tz
    return UTC


def _strict_ts(value: object, info: ValidationInfo) -> datetime:
    return parse_ufm_timestamp(value, _context_tz(info))


def _loose_ts(value: object, info: ValidationInfo) -> datetime | None:
    if _is_na(value):
        return None
    try:
        return parse_ufm_timestamp(value, _context_tz(info))
    except ValueError:
        return None


LooseInt = Annotated[int | None, BeforeValidator(_loose_int)]
CoercedStr = Annotated[str | None, BeforeValidator(_to_str)]
NaStr = Annotated[str | None, BeforeValidator(_na_to_none), BeforeValidator(_to_str)]
StrList = Annotated[list[str], BeforeValidator(_str_list)]
UtcDatetime = Annotated[datetime, BeforeValidator(_strict_ts)]
LooseUtcDatetime = Annotated[datetime | None, BeforeValidator(_loose_ts)]
Counter = Annotated[int | float | str | None, BeforeValidator(_na_to_none)]


class UfmModel(BaseModel):
    """Base of every UFM payload model: unknown fields are kept, never fatal."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    @classmethod
    def fast_reader(cls, tz: tzinfo) -> Callable[[Any], Self | None] | None:
        """What builds this model from an element of a UFM list without pydantic's validation, when the element
        has the exact shape UFM sends (``None`` from it otherwise, and the element is validated); ``None`` when
        the model has no such reader. Only a model that UFM sends by the hundred thousand has one."""
        return None


# --------------------------------------------------------------------------------------------------
# resources


class System(UfmModel):
    """An entry of ``GET /resources/systems``."""

    guid: Annotated[str, BeforeValidator(_to_str)]
    system_guid: CoercedStr = None
    name: CoercedStr = None
    system_name: str | None = None
    description: str | None = None
    model: str | None = None
    type: str | None = None
    ip: str | None = None
    technology: str | None = None
    vendor: str | None = None
    role: str | None = None
    state: str | None = None
    severity: str | None = None
    fw_version: str | None = None
    ports: StrList = Field(default_factory=list)
    modules: StrList = Field(default_factory=list)
    capabilities: StrList = Field(default_factory=list)

    @property
    def is_switch(self) -> bool:
        return (self.type or "").lower() == "switch"

    @property
    def known_ip(self) -> str | None:
        """The management IP, or ``None`` when UFM says ``0.0.0.0`` (unknown)."""
        return None if _is_na(self.ip) or self.ip == "0.0.0.0" else self.ip


class Port(UfmModel):
    """An entry of ``GET /resources/ports`` (or the single element of ``/resources/ports/<name>``)."""

    name: str
    guid: CoercedStr = None
    systemID: CoercedStr = None
    system_name: str | None = None
    system_ip: str | None = None
    number: LooseInt = None
    external_number: LooseInt = None
    dname: CoercedStr = None
    node_description: str | None = None
    description: str | None = None
    peer: NaStr = None
    peer_guid: NaStr = None
    peer_node_guid: NaStr = None
    peer_node_name: NaStr = None
    peer_node_description: NaStr = None
    peer_port_dname: NaStr = None
    peer_lid: LooseInt = None
    logical_state: str | None = None
    physical_state: str | None = None
    active_speed: str | None = None
    active_width: str | None = None
    severity: str | None = None
    high_ber_severity: str | None = None
    lid: LooseInt = None
    mtu: LooseInt = None
    tier: LooseInt = None
    path: str | None = None
    capabilities: StrList = Field(default_factory=list)

    @property
    def system_guid(self) -> str | None:
        """The GUID of the system (switch or host) the port belongs to, from ``systemID``."""
        if self.systemID is None or _is_na(self.systemID):
            return None
        return normalize_guid(self.systemID)

    @property
    def is_disabled(self) -> bool:
        """UFM's ``physical_state`` is ``"Disabled"`` (the port was administratively disabled)."""
        return (self.physical_state or "").strip().lower() == "disabled"

    @property
    def is_switch_port(self) -> bool:
        return (self.description or "").lower().startswith("switch")

    @property
    def end(self) -> PortEnd | None:
        """The port name parsed as ``<guid>_<n>``, or ``None`` if the name has another form."""
        try:
            return PortEnd.parse(self.name)
        except ValueError:
            return None


def _width_lanes(width: str | None) -> int | None:
    if width is None:
        return None
    match = re.search(r"(\d+)\s*x", width, flags=re.IGNORECASE)
    return int(match.group(1)) if match else None


class Link(UfmModel):
    """An entry of ``GET /resources/links``."""

    name: str | None = None
    source_guid: Annotated[str, BeforeValidator(_to_str)]
    source_port: Annotated[str, BeforeValidator(_to_str)]
    source_port_dname: CoercedStr = None
    source_port_name: str | None = None
    source_port_node_description: str | None = None
    destination_guid: Annotated[str, BeforeValidator(_to_str)]
    destination_port: Annotated[str, BeforeValidator(_to_str)]
    destination_port_dname: CoercedStr = None
    destination_port_name: str | None = None
    destination_port_node_description: str | None = None
    width: str | None = None
    severity: str | None = None
    capabilities: StrList = Field(default_factory=list)
    cable_info: dict[str, Any] | list[Any] | None = None

    @property
    def lanes(self) -> int | None:
        """Lane count from ``width``: ``"4x"`` and ``"IB_4x"`` → 4; ``None`` if absent or odd."""
        return _width_lanes(self.width)

    @property
    def source(self) -> PortEnd:
        return PortEnd(guid=normalize_guid(self.source_guid), port=int(self.source_port))

    @property
    def destination(self) -> PortEnd:
        return PortEnd(guid=normalize_guid(self.destination_guid), port=int(self.destination_port))


class DumpReader:
    """Whether validation keeps an element of UFM's systems, links or ports list as it is (every field it holds
    already of its final type: a string where a string belongs, no ``"N/A"`` where it reads none), told without
    validating. Such an element is what ``model.model_validate(item).model_dump()`` gives but for the fields it
    leaves out, which a reader asking ``item.get(name, default)`` sees as their defaults (``dump`` adds them). The
    start-up of h100-32k reads 196,608 ports and 98,304 links: validated, then dumped, they took 7 s
    (``benchmarks/bench_start.py``); ``tests/ufm/test_ufm_dump_reader.py`` holds this to validation."""

    __slots__ = ("_defaults", "_ints", "_lists", "_na_strs", "_others", "_required", "_strs")

    def __init__(self, model: type[UfmModel]) -> None:
        self._defaults: dict[str, object] = {}
        required: list[str] = []
        strs: list[str] = []
        na_strs: list[str] = []
        ints: list[str] = []
        lists: list[str] = []
        others: list[str] = []
        for name, info in model.model_fields.items():
            # A required field's place is kept (a kept element has it): ``dump`` gives the fields in the model's order.
            required_here = info.is_required()
            self._defaults[name] = None if required_here else info.get_default(call_default_factory=True)
            if required_here:
                required.append(name)  # a string where one is required: see below
            validators = {item.func for item in info.metadata if isinstance(item, BeforeValidator)}
            if _str_list in validators:
                lists.append(name)
            elif _loose_int in validators:
                ints.append(name)
            elif _na_to_none in validators:
                na_strs.append(name)
            elif info.annotation in (str, str | None) and validators <= {_to_str}:
                strs.append(name)
            elif info.annotation == dict[str, Any] | list[Any] | None and not validators:
                others.append(name)
            else:
                raise TypeError(f"{model.__name__}.{name}: a field DumpReader has no check for")
            if required_here and name not in strs:
                raise TypeError(f"{model.__name__}.{name}: a required field that is not a string")
        self._required = tuple(required)
        self._strs, self._na_strs, self._ints = tuple(strs), tuple(na_strs), tuple(ints)
        self._lists, self._others = tuple(lists), tuple(others)

    def kept(self, item: object) -> bool:
        """Validation would keep ``item`` as it is."""
        if type(item) is not dict:
            return False
        get = item.get
        # Passes in C over each kind of field's values, not a loop of the interpreter's.
        if not set(map(type, map(get, self._required))) <= _STR \
                or not set(map(type, map(get, self._strs))) <= _STR_OR_NONE \
                or not set(map(type, map(get, self._ints))) <= _INT_OR_NONE:
            return False
        na_strs = tuple(map(get, self._na_strs))
        if not set(map(type, na_strs)) <= _STR_OR_NONE or "" in na_strs \
                or not _NA_STRINGS.isdisjoint(map(str.lower, map(str.strip, filter(None, na_strs)))):
            return False
        for name in self._lists:
            found = get(name, _EMPTY)
            if type(found) is not list or not set(map(type, found)) <= _STR:
                return False
        return all(type(get(name)) in _JSON_CONTAINER_OR_NONE for name in self._others)

    def dump(self, item: dict[str, Any]) -> dict[str, Any]:
        """A kept ``item`` as ``model_dump`` gives it: every field, in the model's order, then the extra ones."""
        values = self._defaults | item
        for name in self._lists:
            if values[name] is self._defaults[name]:
                values[name] = []  # each element a list of its own, as validation gives
        return values


_EMPTY: list[str] = []
_STR = frozenset({str})
_STR_OR_NONE = frozenset({str, type(None)})
_INT_OR_NONE = frozenset({int, type(None)})
_JSON_CONTAINER_OR_NONE = frozenset({dict, list, type(None)})


# --------------------------------------------------------------------------------------------------
# events and alarms

SEVERITIES = {"info": "Info", "warning": "Warning", "minor": "Minor", "critical": "Critical"}
"""UFM's severities by lower-case name, as UFM spells them."""


def _normalise_severity(value: object) -> object:
    if isinstance(value, str):
        return SEVERITIES.get(value.strip().lower(), value)
    return value


def _int_like(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and whole_number(value.strip()) is not None


class Event(UfmModel):
    """A UFM event, from ``GET /app/events`` or from a line of ``event.log``.

    Two REST shapes exist.  Up to UFM 6.16 ``type`` is the event number as a string; from 6.17
    ``type`` is the object type and ``event_type`` holds the number.  Both are normalised into
    ``event_id`` (the number) and ``object_type`` (``None`` in the old shape unless the payload
    carries it some other way).  The raw ``type``/``event_type`` are kept as they came.
    """

    id: int
    event_id: int
    object_type: str | None = None
    timestamp: UtcDatetime
    name: str | None = None
    type: CoercedStr = None
    event_type: CoercedStr = None
    severity: Annotated[str | None, BeforeValidator(_normalise_severity)] = None
    counter: Counter = None
    category: str | None = None
    object_name: CoercedStr = None
    object_path: str | None = None
    write_to_syslog: bool | None = None
    description: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _normalise_shape(cls, data: Any) -> Any:
        if not isinstance(data, (dict, Mapping)):  # ``dict`` first: see ``_context_tz``
            return data
        out = dict(data)
        if "event_id" in out:
            return out
        raw_type, raw_event_type = out.get("type"), out.get("event_type")
        if _int_like(raw_event_type):
            out["event_id"] = raw_event_type
            if "object_type" not in out and isinstance(raw_type, str) and not _int_like(raw_type):
                out["object_type"] = raw_type
        elif _int_like(raw_type):
            out["event_id"] = raw_type
        return out

    @field_validator("id", "event_id", mode="before")
    @classmethod
    def _strict_int(cls, value: Any) -> Any:
        # "227" is fine, 227.0 is fine, True or "abc" are not.
        if isinstance(value, bool):
            raise ValueError("a boolean is not an id")
        return value

    @classmethod
    def fast_reader(cls, tz: tzinfo) -> Callable[[Any], Event | None]:
        return EventReader(tz)

    @property
    def ref(self) -> ObjectRef:
        """The object path split into site/device/port, or the two ends of a link."""
        return parse_object_path(self.object_type, self.object_path, self.description)

    @property
    def link_ends(self) -> tuple[PortEnd, PortEnd] | None:
        """For a Link event, its two ends (``None`` otherwise or when they cannot be found)."""
        if self.object_type != "Link":
            return None
        return self.ref.ends


EVENT_FIELDS = tuple(Event.model_fields)
"""``Event``'s fields in declaration order: the order of its ``__dict__``."""
_EVENT_FIELD_SET = frozenset(EVENT_FIELDS)
_NO_VALUES = dict.fromkeys(EVENT_FIELDS)
_new_object = object.__new__
_set_attribute = object.__setattr__


def construct_event(values: dict[str, object], extra: dict[str, object], fields_set: set[str]) -> Event:
    """The ``Event`` that validation would give, from ``values`` already in their final form, holding every field in
    declaration order: ``model_construct`` without its per-field alias and default lookups. ``extra``: the fields
    ``Event`` does not declare; ``fields_set``: ``model_fields_set`` (validation counts the extra fields in it,
    ``model_construct`` does not)."""
    event: Event = _new_object(Event)
    _set_attribute(event, "__dict__", values)
    _set_attribute(event, "__pydantic_fields_set__", fields_set)
    _set_attribute(event, "__pydantic_extra__", extra)
    _set_attribute(event, "__pydantic_private__", None)
    return event


_OPTIONAL_STR = ("object_type", "name", "type", "event_type", "category", "object_name", "object_path", "description")
"""Fields whose value UFM sends as a string or null, kept as they come."""
_USUAL_KEYS = _EVENT_FIELD_SET - {"event_id"}
"""The keys of an element that holds no extra field (and no ``event_id``, which only validation normalises)."""
_AS_SPELT = {severity: severity for severity in SEVERITIES.values()}
_TYPES_KEPT = 256
"""How many distinct ``type`` strings an ``EventReader`` remembers (UFM's object types are a dozen)."""
_REPEATED = ("name", "type", "event_type", "category", "object_type")
"""Event fields whose texts a list repeats: an event type's name and category, the object type, the type number."""
_TEXTS_KEPT = 4096
"""How many distinct ``_REPEATED`` texts an ``EventReader`` keeps (UFM's event types are a few hundred)."""


class SharedFieldsSet(set[str]):
    """An event's fields set (``model_fields_set``) that the events read with the same keys share: pydantic wants a
    ``set``, and changes it only when a field is assigned to, which nothing does to an event read. Changing it
    raises, so that a change cannot reach the other events."""

    def _refuse(self, *_: object) -> NoReturn:
        raise TypeError("an event's fields set is shared with the events read with the same keys: not changed")

    add = discard = remove = update = difference_update = intersection_update = _refuse
    symmetric_difference_update = clear = pop = _refuse
    __ior__ = __iand__ = __isub__ = __ixor__ = _refuse


def _event_number(text: str) -> int | None:
    # ASCII digits only: ``str.isdigit`` admits other scripts' digits, which the int validator refuses.
    return int(text) if text.isascii() and text.isdigit() and len(text) < 19 else None


class EventReader:
    """``Event.model_validate(item, context={"tz": tz})`` for an element of UFM's event list in the shape UFM sends
    it (either of its two), at a fraction of the validation's cost: a storm's 100,000 events took 0.66 s to
    validate, the largest part of a storm's cycle. It builds exactly what validation builds (fields, their order,
    what was set, the extra fields; ``tests/ufm/test_ufm_event_reader.py`` holds it to that over any element), and
    only from an element whose every field is already of its final type: ``None`` for anything else (a number where
    a string belongs, an ``event_id`` given, a malformed time), which is then validated and, when wrong, refused in
    the model's words."""

    __slots__ = ("_fields_sets", "_numbers", "_texts", "_timestamps")

    def __init__(self, tz: tzinfo = UTC) -> None:
        self._timestamps = UfmTimestamps(tz)
        self._numbers: dict[str, bool] = {}
        """``_int_like`` of the ``type`` strings seen: a list repeats a handful of them (``Link``, ``IBPort``...)."""
        self._texts: dict[str, str] = {}
        """The ``_REPEATED`` texts seen, each as the one object every event that repeats it holds."""
        self._fields_sets: dict[tuple[tuple[str, ...], bool], SharedFieldsSet] = {}
        """The fields set of the events read, by the element's keys and whether ``object_type`` came from ``type``."""

    def __call__(self, item: Any) -> Event | None:
        if type(item) is not dict:
            return None
        values = _NO_VALUES | item
        extra: dict[str, object] = {}
        if not item.keys() <= _USUAL_KEYS:
            if "event_id" in item:
                return None
            extra = {key: values.pop(key) for key in item if key not in _EVENT_FIELD_SET}
        # One pass in C over the string fields' types, not a loop of the interpreter's.
        if not set(map(type, map(values.__getitem__, _OPTIONAL_STR))) <= _STR_OR_NONE:
            return None
        stamp = values["timestamp"]
        if type(values["id"]) is not int or type(stamp) is not str:
            return None
        try:
            values["timestamp"] = self._timestamps.parse(stamp)
        except ValueError:
            return None
        severity = values["severity"]
        if type(severity) is str:
            values["severity"] = _AS_SPELT.get(severity) or SEVERITIES.get(severity.strip().lower(), severity)
        elif severity is not None:
            return None
        counter = values["counter"]
        if type(counter) is str:
            if counter == "N/A" or counter.strip().lower() in _NA_STRINGS:
                values["counter"] = None
        elif counter is not None and type(counter) is not int and type(counter) is not float:
            return None
        written = values["write_to_syslog"]
        if written is not None and type(written) is not bool:
            return None
        # ``Event._normalise_shape``: the number in ``event_type`` (6.17 on) or in ``type`` (up to 6.16).
        raw_event_type, raw_type = values["event_type"], values["type"]
        typed = False
        if raw_event_type is not None:
            event_number = _event_number(raw_event_type)
            if event_number is not None and "object_type" not in item and raw_type is not None \
                    and not self._int_like(raw_type):
                values["object_type"] = raw_type
                typed = True
        else:
            event_number = None if raw_type is None else _event_number(raw_type)
        if event_number is None:
            return None
        values["event_id"] = event_number
        # A storm's events hold these for the whole cycle: decoded anew, each event's own were 240 bytes.
        texts = self._texts
        if len(texts) >= _TEXTS_KEPT:
            texts.clear()
        for name in _REPEATED:
            if (text := values[name]) is not None:
                values[name] = texts.setdefault(text, text)
        return construct_event(values, extra, self._fields_set(item, typed))

    def _fields_set(self, item: dict[str, object], typed: bool) -> SharedFieldsSet:
        """What validation counts as set: the element's keys (the extra fields too), ``event_id``, and
        ``object_type`` when it came from ``type`` (``typed``); one set for all the elements with the same keys
        (a set of an event's own was 700 bytes, the largest part of what an event holds)."""
        key = (tuple(item), typed)
        found = self._fields_sets.get(key)
        if found is None:
            if len(self._fields_sets) >= _TYPES_KEPT:
                self._fields_sets.clear()
            found = self._fields_sets[key] = SharedFieldsSet({*item, "event_id", *(("object_type",) if typed else ())})
        return found

    def _int_like(self, text: str) -> bool:
        known = self._numbers.get(text)
        if known is None:
            if len(self._numbers) >= _TYPES_KEPT:
                self._numbers.clear()
            known = self._numbers[text] = _int_like(text)
        return known


class Alarm(UfmModel):
    """An entry of ``GET /app/alarms``."""

    id: int
    event_type: LooseInt = None
    type: CoercedStr = None
    name: str | None = None
    summary: str | None = None
    reason: str | None = None
    severity: Annotated[str | None, BeforeValidator(_normalise_severity)] = None
    timestamp: LooseUtcDatetime = None
    event_count: LooseInt = None
    duration: LooseInt = None
    counter: Counter = None
    related_object_name: CoercedStr = None
    related_object_path: str | None = None


# --------------------------------------------------------------------------------------------------
# jobs


class JobStatus(StrEnum):
    """Job statuses documented by UFM."""

    RUNNING = "Running"
    COMPLETED = "Completed"
    COMPLETED_WITH_ERRORS = "Completed With Errors"
    COMPLETED_WITH_WARNINGS = "Completed With Warnings"
    ABORTED = "Aborted"


_IN_PROGRESS = frozenset({"running", "pending", "queued", "scheduled", "in progress", "waiting"})
_SUCCEEDED = frozenset({JobStatus.COMPLETED.lower(), JobStatus.COMPLETED_WITH_WARNINGS.lower()})


class Job(UfmModel):
    """``GET /jobs/<id>``.  Field names are UFM's (capitalised)."""

    ID: CoercedStr = None
    Status: str
    Progress: LooseInt = None
    Description: str | None = None
    RelatedObjects: StrList = Field(default_factory=list)
    Created: LooseUtcDatetime = None
    LastUpdated: LooseUtcDatetime = None
    Summary: Any = None
    CreatedBy: str | None = None
    Operation: str | None = None
    Foreground: bool | None = None

    @property
    def status(self) -> JobStatus | None:
        """The status as a :class:`JobStatus`, or ``None`` for a status UFM did not document."""
        wanted = self.Status.strip().lower()
        for member in JobStatus:
            if member.lower() == wanted:
                return member
        return None

    @property
    def in_progress(self) -> bool:
        """Still running (``Running``, or a pending-like status)."""
        return self.Status.strip().lower() in _IN_PROGRESS

    @property
    def succeeded(self) -> bool:
        """``Completed`` or ``Completed With Warnings``."""
        return self.Status.strip().lower() in _SUCCEEDED

    @property
    def failed(self) -> bool:
        """Finished without success: ``Completed With Errors``, ``Aborted`` or an unknown status."""
        return not self.in_progress and not self.succeeded


# --------------------------------------------------------------------------------------------------
# unhealthy ports


def _port_name(guid: str | None, number: str | None, fallback: str | None) -> str | None:
    port = whole_number(str(number).strip()) if number else None
    if guid and port is not None:
        try:
            return PortEnd(guid=normalize_guid(guid), port=port).name
        except ValueError:
            pass
    if fallback:
        try:
            return PortEnd.parse(fallback).name
        except ValueError:
            return None
    return None


class UnhealthyPort(UfmModel):
    """An entry of ``GET /app/unhealthy_ports``.

    ``Condition`` is a string in some documented examples and a list in others; it is always a list
    here.
    """

    UnhealthyGUID: CoercedStr = None
    UnhealthyPort: CoercedStr = None
    UnhealthyPortNumber: CoercedStr = None
    UnhealthyPortDname: CoercedStr = None
    UnhealthyNode: str | None = None
    PeerGUID: NaStr = None
    PeerPort: NaStr = None
    PeerPortNumber: NaStr = None
    PeerPortDname: NaStr = None
    PeerNode: NaStr = None
    PeerLID: LooseInt = None
    State: str | None = None
    Condition: StrList = Field(default_factory=list)
    StatusTime: LooseUtcDatetime = None

    @property
    def port_name(self) -> str | None:
        """The ``Unhealthy*`` side as ``<guid>_<n>`` (from GUID + number, else from ``UnhealthyPort``)."""
        return _port_name(self.UnhealthyGUID, self.UnhealthyPortNumber, self.UnhealthyPort)

    @property
    def peer_port_name(self) -> str | None:
        """The ``Peer*`` side as ``<guid>_<n>``, when UFM gives it."""
        return _port_name(self.PeerGUID, self.PeerPortNumber, self.PeerPort)

    @property
    def ports(self) -> frozenset[str]:
        """The ports the entry names, both sides: the port marked and its cable's other end.

        Which side UFM puts the port it was asked to mark on is UNCONFIRMED: NVIDIA's ``batch_isolate_devices.py``
        looks for it on the ``Peer*`` side (a port without a cable is on the ``Unhealthy*`` side, its peers
        ``N/A``), and the REST guide's examples name a host's port on the ``Unhealthy*`` side. Both sides are ends
        of one cable, so a reader that takes an entry for its cable needs no answer.
        """
        return frozenset(name for name in (self.port_name, self.peer_port_name) if name is not None)

    @property
    def manual(self) -> bool:
        """Marked by ``PUT /app/unhealthy_ports`` (condition ``MANUAL``, in either form of ``Condition``): an
        action of the caller's, isolate or no_discover. Any other condition is OpenSM's own health policy, whose
        action for it (report, isolate, no_discover) the entry does not say (``State`` is a severity in the REST
        guide's examples)."""
        return any(condition.strip().upper() == "MANUAL" for condition in self.Condition)


# --------------------------------------------------------------------------------------------------
# versioning


class Versioning(UfmModel):
    """``GET /app/versioning``: counters that move when a class of objects changes."""

    alarms_version: LooseInt = None
    ports_version: LooseInt = None
    links_version: LooseInt = None
    switches_version: LooseInt = None
    servers_version: LooseInt = None
    sites_version: LooseInt = None
    event_policies_version: LooseInt = None

    def versions(self) -> dict[str, int]:
        """Every ``*_version`` counter present, known or extra."""
        out: dict[str, int] = {}
        for key, value in {**self.__dict__, **(self.model_extra or {})}.items():
            number = _loose_int(value)
            if key.endswith("_version") and number is not None:
                out[key] = number
        return out


# --------------------------------------------------------------------------------------------------
# lists

M = TypeVar("M", bound=UfmModel)


def parse_list(model: type[M], payload: Any, *, tz: tzinfo = UTC,
               keep: Callable[[Iterable[Any]], Iterable[Any]] | None = None) -> list[M]:
    """Validate every element of a (possibly wrapped) list, or of an iterable of its elements; any bad element
    fails the whole list. ``keep``: which of the raw elements to validate at all (the rest are dropped
    unvalidated)."""
    items: Iterable[Any] = payload if isinstance(payload, Iterator) else unwrap_list(payload)
    if keep is not None:
        items = keep(items)
    out: list[M] = []
    context = {"tz": tz}
    fast = model.fast_reader(tz)
    for index, item in enumerate(items):
        if fast is not None and (built := fast(item)) is not None:
            out.append(built)
            continue
        if not isinstance(item, (dict, Mapping)):  # ``dict`` first: see ``_context_tz``
            raise ShapeError(f"element {index} is a {type(item).__name__}, not an object")
        try:
            out.append(model.model_validate(item, context=context))
        except ValidationError as exc:
            raise ShapeError(f"element {index} is not a valid {model.__name__}: {exc}") from exc
    return out


def parse_one(model: type[M], payload: Any, *, tz: tzinfo = UTC) -> M:
    """Validate a single object."""
    if not isinstance(payload, Mapping):
        raise ShapeError(f"expected a JSON object for {model.__name__}, got {type(payload).__name__}")
    try:
        return model.model_validate(payload, context={"tz": tz})
    except ValidationError as exc:
        raise ShapeError(f"not a valid {model.__name__}: {exc}") from exc
