"""The policy is the only writer of a component's state and of what the capacity guard counts.

``fabric.remediation.policy`` (``decide``) and ``fabric.remediation.observe`` (what the controller observed between
cycles) make every record and every change of the guard; the pipeline owns the guard; the engine persists what
they decided (``Engine._put_records``), and the store implements the writes. Anything else that builds a record,
moves a lifecycle, writes a record to the store or changes a guard is a back door past the policy: replay would not
see it, and the decision log would not explain it. The type checker refuses a guard's mutators to those holding a
``GuardReading``; this test refuses the rest by reading the code.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("fabric", "topology", "tickets")
POLICY = {"fabric/remediation/policy.py", "fabric/remediation/observe.py"}
GUARD_OWNERS = POLICY | {"fabric/remediation/pipeline.py", "topology/guard.py"}
RECORD_WRITERS = {"fabric/controller/engine.py"}
GUARD_MUTATORS = frozenset({"mark_down", "mark_up", "take_out", "restore", "put_back", "remember_disables",
                            "carry_over"})


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            yield relative, ast.parse(path.read_text(encoding="utf-8"), filename=relative)


def _calls(tree: ast.Module) -> Iterator[ast.Call]:
    return (node for node in ast.walk(tree) if isinstance(node, ast.Call))


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def back_doors(modules: list[tuple[str, ast.Module]]) -> list[str]:
    found: list[str] = []
    for path, tree in modules:
        for call in _calls(tree):
            name, where = _name(call.func), f"{path}:{call.lineno}"
            if path not in POLICY and not path.startswith("fabric/store/"):  # the store reads records back
                if name == "ComponentRecord":
                    found.append(f"{where}: builds a component record outside the policy")
                if name == "replace" and any(k.arg == "lifecycle" for k in call.keywords):
                    found.append(f"{where}: moves a lifecycle outside the policy")
            if name == "put_component" and path not in RECORD_WRITERS and not path.startswith("fabric/store/"):
                found.append(f"{where}: writes a component record the policy did not decide")
            if (name in GUARD_MUTATORS and isinstance(call.func, ast.Attribute) and path not in GUARD_OWNERS
                    and ast.unparse(call.func.value).endswith("guard")):
                found.append(f"{where}: changes the capacity guard outside the policy")
    return found


def test_no_module_but_the_policy_writes_state_or_changes_the_guard() -> None:
    assert back_doors(list(_modules())) == []


@pytest.mark.parametrize(("path", "code"), [
    ("fabric/controller/reconcile.py", "changed = replace(record, lifecycle=Lifecycle.AWAITING_REPAIR)"),
    ("fabric/controller/reconcile.py", "store.put_component(component, record, ticket_dedup_key=key)"),
    ("fabric/controller/recovery.py", "guard.take_out(cable, now)"),
    ("fabric/controller/engine.py", "self.pipeline.guard.mark_up(cable)"),
    ("fabric/replay/run.py", "record = ComponentRecord(Lifecycle.DISABLED, now, 'x', 'y')"),
])
def test_each_kind_of_back_door_is_found(path: str, code: str) -> None:
    """The reader finds the back doors the policy closed (issue 22): a lifecycle moved by reconciliation, a record
    written by it, the guard changed by recovery or the engine, a record made by replay."""
    assert len(back_doors([(path, ast.parse(code))])) == 1
