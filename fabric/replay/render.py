"""The replay report as tables for a terminal (the JSON report is ``fabric.replay.report``'s)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fabric.replay.report import ReplayReport
from fabric.terminal import LineTable, cell

if TYPE_CHECKING:
    from rich.console import Console

_STYLE = {"disable": "bold red", "defer": "yellow", "ticket": "cyan", "reopen": "cyan", "halt": "bold magenta",
          "quarantine": "bold red", "enable": "green", "record": "dim"}


def _target_text(entry: Mapping[str, Any]) -> str:
    if "link" in entry:
        link = entry["link"]
        return f"{link['a']} {link['a_port']} | {link['b']} {link['b_port']}"
    if "port" in entry:
        return f"{entry['port']['device']} {entry['port']['port']}"
    return str(entry.get("device", "the fabric"))


def _when(entry: Mapping[str, Any]) -> str:
    """``MM-DD HH:MM:SS``: a replay spans days, and the year is in the summary."""
    return str(entry["at"])[5:19].replace("T", " ")


def render_table(report: ReplayReport, console: Console) -> None:
    """Every decision on one line (on a terminal, cells cut with "…" to its width: the whole reason and the guard's
    figures are in ``--format json``), then the summary."""
    from rich.table import Table

    table = LineTable(console, "Decisions (dry run, UTC)", "at", "action", "rule", "component", "why")
    for entry in report.decision_entries():
        action = entry["action"]
        table.add(_when(entry), cell(action, _STYLE.get(action, "")), entry["rule"], _target_text(entry),
                  entry["reason"])
    if report.summary["decisions"]:
        console.print(table)
    else:
        console.print("No decisions: nothing in these events would have made the policy act.")
    if report.explained:
        explained = LineTable(console, "Link-downs explained (not counted as cable faults)", "at", "component", "why")
        for entry in report.explained:
            explained.add(_when(entry), _target_text(entry), entry["reason"])
        console.print(explained)
    summary = report.summary
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    skipped = ", ".join(f"{count} {why}" for why, count in summary["skipped_events"].items()) or "none"
    rows = [
        ("events", f"{summary['events']} ({summary['first_event']} .. {summary['last_event']})"),
        ("skipped", skipped),
        ("signals / findings", f"{summary['signals']} / {summary['findings']}"),
        ("would disable", str(summary["disabled"])),
        ("would defer", str(summary["deferred"])),
        ("would ticket", str(summary["ticketed"])),
        ("quarantined", str(summary["quarantined"])),
        ("switch faults", f"{summary['switch_faults']} ({summary['folded']} cable findings folded into them)"),
        ("storm breaker", f"tripped {summary['halted']} time(s), {summary['held']} findings held"
                          + ("; still halted at the end" if summary["halted_at_end"] else "")),
        ("recorded only", str(summary["recorded"])),
        ("explained link-downs", str(summary["explained"])),
        ("replay", f"{summary['steps']} steps of {summary['interval_seconds']:g} s, dry run; model "
                   f"{summary['model']['source']} ({summary['model']['cables']} cables)"),
    ]
    for label, value in rows:
        grid.add_row(label, cell(value))
    for example in summary["malformed"]:
        grid.add_row("malformed", cell(example))
    console.print(grid)
    console.print("[bold]would act[/]" if report.would_act else "no action would be taken")
