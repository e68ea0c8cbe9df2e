"""Large JSON documents decoded by pydantic-core's parser, to exactly what ``json.loads`` would return.

pydantic-core (installed with pydantic) parses a UFM response of ports into Python objects about twice as fast
as ``json.loads``. The two agree on every document both accept; what pydantic-core refuses (bad JSON, but also
text ``json.loads`` accepts: a lone surrogate escape, nesting deeper than 200, a number of over 4,300 digits)
raises ``Refused``, and the caller decodes it with the standard library for its result or its error. One case
goes the other way: pydantic-core reads integers of up to 4,300 digits whatever ``sys.get_int_max_str_digits()``
says, so when that limit is set lower the standard library decodes everything.
"""

from __future__ import annotations

import sys
from typing import Any

_BOM = b"\xef\xbb\xbf"
_FAST_INT_DIGITS = 4300
"""The longest integer pydantic-core reads (Python's default ``sys.int_max_str_digits``)."""


class Refused(Exception):
    """pydantic-core does not decode this document exactly as ``json.loads`` would: decode it with that."""


def decode(data: bytes) -> Any:
    """The document ``data`` holds (UTF-8, an optional BOM), or ``Refused``."""
    limit = sys.get_int_max_str_digits()
    if 0 < limit < _FAST_INT_DIGITS:
        raise Refused
    from pydantic_core import from_json  # 17 ms of imports, only for commands that read a document

    try:
        # Keys only: a snapshot's values are mostly distinct (names, GUIDs), caching them costs more than it saves.
        return from_json(data.removeprefix(_BOM), cache_strings="keys")
    except ValueError:  # its message is not the standard library's, nor its line and column
        raise Refused from None
