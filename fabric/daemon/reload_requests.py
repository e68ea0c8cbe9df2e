"""A reload asked of the engine process through the store: a request row naming the instance, then SIGHUP.

The API process (``POST /api/v1/reload``) records the request and signals its engine process; the engine process
reloads, and records what came of it as the request's outcome, which the API process answers with. The outcome is
the reload's message, prefixed by ``applied`` or by why nothing was (``NotApplied``), so the answer's status can be
told from it, and the audit trail reads as the answer did.
"""

from __future__ import annotations

from fabric.api.context import NotApplied, Reload

_APPLIED = "applied"


def outcome_text(reload: Reload) -> str:
    """What a request's outcome column keeps of ``reload``."""
    return f"{reload.not_applied.value if reload.not_applied else _APPLIED}: {reload.message}"


def reload_of(outcome: str) -> Reload:
    """The reload an outcome recorded by ``outcome_text`` says."""
    head, _, message = outcome.partition(": ")
    if head == _APPLIED:
        return Reload(message)
    try:
        return Reload(message, not_applied=NotApplied(head))
    except ValueError:  # not written by outcome_text: shown whole, as nothing applied
        return Reload(outcome, not_applied=NotApplied.INVALID)
