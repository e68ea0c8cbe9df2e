"""The runs ``fabricctl bisect`` reads: each a list of hosts and whether it failed, as JSON or as text.

JSON: a list of ``{"hosts": ["h1", ...], "failed": true}``. Text: one run a line, its outcome first then its
hosts, separated by blanks or commas (``fail pod01-node01 pod01-node02``; ``pass`` or ``ok``, ``fail`` or
``failed``); ``#`` starts a comment. A file whose first character is ``[`` is JSON. Every refusal is a
``ValueError`` naming the source and the line or field.
"""

from __future__ import annotations

import re
from typing import Any

from fabric.remediation.bisect import Run
from topology.strictjson import JsonError, loads

_OUTCOMES = {"fail": True, "failed": True, "pass": False, "passed": False, "ok": False}
_SEPARATORS = re.compile(r"[\s,]+")


def parse_runs(text: str, source: str) -> list[Run]:
    runs = _json_runs(text, source) if text.lstrip().startswith("[") else _text_runs(text, source)
    if not runs:
        raise ValueError(f"{source}: no run in it")
    return runs


def _text_runs(text: str, source: str) -> list[Run]:
    runs: list[Run] = []
    for number, line in enumerate(text.splitlines(), 1):
        words = [word for word in _SEPARATORS.split(line.split("#", 1)[0]) if word]
        if not words:
            continue
        outcome = _OUTCOMES.get(words[0].casefold())
        if outcome is None:
            raise ValueError(f"{source}: line {number}: {words[0]!r} is not an outcome (fail or pass, then the hosts)")
        if len(words) == 1:
            raise ValueError(f"{source}: line {number}: a run with no host")
        runs.append(Run(frozenset(words[1:]), outcome))
    return runs


def _json_runs(text: str, source: str) -> list[Run]:
    try:
        document: Any = loads(text)
    except JsonError as exc:
        raise ValueError(f"{source}: {exc}") from None
    if not isinstance(document, list):
        raise ValueError(f"{source}: a list of runs, each {{\"hosts\": [...], \"failed\": true|false}}")
    runs: list[Run] = []
    for at, run in enumerate(document):
        where = f"{source}: [{at}]"
        if not isinstance(run, dict) or set(run) != {"hosts", "failed"}:
            raise ValueError(f"{where}: a run is {{\"hosts\": [...], \"failed\": true|false}}")
        hosts, failed = run["hosts"], run["failed"]
        if not isinstance(failed, bool):
            raise ValueError(f"{where}.failed: true or false, not {failed!r}")
        if not isinstance(hosts, list) or not hosts:
            raise ValueError(f"{where}.hosts: a list of one host or more")
        for index, host in enumerate(hosts):
            if not isinstance(host, str) or not host.strip() or host != host.strip():
                raise ValueError(f"{where}.hosts[{index}]: a host's name, not {host!r}")
        runs.append(Run(frozenset(hosts), failed))
    return runs
