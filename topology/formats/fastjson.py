"""Large JSON documents decoded by pydantic-core's parser, to exactly what ``json.loads`` would return.

pydantic-core (installed with pydantic) builds a UFM response's objects faster than ``json.loads`` (15-45 % less
time on a snapshot's documents, in a fresh process), and faster still when told which fields of a list's objects
to keep (``decode_entries``: the rest is checked, not built, nor freed later). The two parsers agree on every
document both accept; what pydantic-core refuses (bad JSON, but also text ``json.loads`` accepts: a lone
surrogate escape, nesting deeper than 200, a number of over 4,300 digits) raises ``Refused``, and the caller
decodes it with the standard library, for its result or its error. One case goes the other way: pydantic-core
reads integers of up to 4,300 digits whatever ``sys.get_int_max_str_digits()`` says, so when that limit is set
lower nothing is decoded here.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pydantic_core import SchemaValidator

_BOM = b"\xef\xbb\xbf"
_FAST_INT_DIGITS = 4300
"""The longest integer pydantic-core reads (Python's default ``sys.int_max_str_digits``)."""


class Refused(Exception):
    """pydantic-core does not decode this document exactly as ``json.loads`` would: decode it with that."""


def decode(data: bytes, *, cache_strings: Literal["all", "keys"] = "keys") -> Any:
    """The document ``data`` holds (UTF-8, an optional BOM), or ``Refused``. ``cache_strings``: which strings the
    parser makes once for all their repeats; keys only by default, as a snapshot's values are mostly distinct
    (names, GUIDs) and caching them costs more than it saves; all of them for UFM's events, which repeat theirs."""
    _check_int_limit()
    from pydantic_core import from_json  # 17 ms of imports, only for commands that read a document

    try:
        return from_json(data.removeprefix(_BOM), cache_strings=cache_strings)
    except ValueError:  # its message is not the standard library's, nor its line and column
        raise Refused from None


def decode_entries(data: bytes, fields: tuple[str, ...]) -> Any:
    """A list of objects (or ``{"data": [...]}`` of them, as UFM pages) keeping only ``fields`` of each object:
    what ``json.loads`` gives, less the other fields. ``Refused`` for a document of any other shape."""
    _check_int_limit()
    try:
        return _entries_validator(fields).validate_json(data.removeprefix(_BOM))
    except ValueError:  # bad JSON, or not a list of objects (a ValidationError): the whole document tells which
        raise Refused from None


def _check_int_limit() -> None:
    limit = sys.get_int_max_str_digits()
    if 0 < limit < _FAST_INT_DIGITS:
        raise Refused


@lru_cache(maxsize=8)
def _entries_validator(fields: tuple[str, ...]) -> SchemaValidator:
    from pydantic_core import SchemaValidator, core_schema

    entry = core_schema.typed_dict_schema(
        {name: core_schema.typed_dict_field(core_schema.any_schema(), required=False) for name in fields},
        extra_behavior="ignore",
    )
    entries = core_schema.list_schema(entry)
    wrapped = core_schema.typed_dict_schema({"data": core_schema.typed_dict_field(entries)}, extra_behavior="ignore")
    return SchemaValidator(core_schema.union_schema([entries, wrapped], mode="left_to_right"),
                           core_schema.CoreConfig(strict=True, cache_strings="keys"))
