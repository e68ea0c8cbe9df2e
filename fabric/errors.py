"""One error hierarchy for the service: ``FabricError``, with a ``kind`` each family shares.

Every error a person can fix — bad input, a bad configuration, UFM refusing or failing, the ticket system
failing, the database being unusable — is a ``FabricError`` whose message names what and where; anything else
is a bug and keeps its traceback. The command line maps every ``FabricError`` to one line and exit code 2 in
one place (``fabric.cli.app``); the engine counts cycle failures by ``kind``.

``topology`` and ``tickets`` know nothing of this package (they sit below it), so their two families,
``topology.errors.InputError`` and ``tickets.base.TicketError``, are adopted by :func:`as_fabric_error`.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import ClassVar

from tickets.base import TicketError
from topology.errors import InputError


class ErrorKind(StrEnum):
    INPUT = "input"
    """A file, option or request that cannot be used as it stands."""
    CONFIG = "config"
    UFM = "ufm"
    TICKET = "ticket"
    STORE = "store"


class FabricError(Exception):
    """Base class of the errors a person can act on; ``kind`` says which family."""

    kind: ClassVar[ErrorKind] = ErrorKind.INPUT


class BadInputError(FabricError):
    """Input the service cannot use, adopted from ``topology.errors.InputError`` or raised directly."""

    kind = ErrorKind.INPUT


class TicketSystemError(FabricError):
    """The ticket system failed or refused (adopted from ``tickets.base.TicketError``)."""

    kind = ErrorKind.TICKET


def quoted(value: object, limit: int = 40) -> str:
    """``value`` as an error message quotes it: ``repr``, cut, so that a pasted megabyte stays one readable line."""
    try:
        text = repr(value)
    except ValueError:  # an integer past Python's digit limit for conversion to text
        if isinstance(value, int):
            return f"<an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits>"
        return "<a value too large to show>"
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def as_fabric_error(exc: BaseException) -> FabricError | None:
    """``exc`` as a ``FabricError``, or ``None`` when it is not one a person can act on (a bug)."""
    if isinstance(exc, FabricError):
        return exc
    if isinstance(exc, InputError):
        adopted: FabricError = BadInputError(str(exc))
    elif isinstance(exc, TicketError):
        adopted = TicketSystemError(str(exc))
    else:
        return None
    adopted.__cause__ = exc
    return adopted
