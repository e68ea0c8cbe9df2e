"""The replay report as tables for a terminal (the JSON report is ``ReplayReport.write_json``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fabric.replay.run import ReplayReport

_STYLE = {"disable": "bold red", "defer": "yellow", "ticket": "cyan", "reopen": "cyan", "halt": "bold magenta",
          "quarantine": "bold red", "enable": "green", "record": "dim"}


def _target_text(entry: Mapping[str, Any]) -> str:
    if "link" in entry:
        link = entry["link"]
        return f"{link['a']} {link['a_port']}\n{link['b']} {link['b_port']}"
    if "port" in entry:
        return f"{entry['port']['device']} {entry['port']['port']}"
    return str(entry.get("device", "the fabric"))


def _guard_text(figures: Mapping[str, Any]) -> str:
    if "worst_leaf" not in figures:
        return ""
    return (f"{figures['worst_leaf']}: {figures['worst_leaf_paths']}->{figures['worst_leaf_paths_after']} paths "
            f"(min {figures['worst_leaf_minimum']}); {figures['disabled']}/{figures['cap']} disabled, "
            f"{figures['disables_last_hour']}/{figures['hourly_limit']} this hour")


def render_table(report: ReplayReport, console: Any) -> None:
    """Every decision as a rich table, then the summary."""
    from rich.table import Table

    table = Table(title="Decisions (dry run)", show_lines=False, expand=True)
    table.add_column("at (UTC)", no_wrap=True)
    table.add_column("action", no_wrap=True)
    table.add_column("rule")
    table.add_column("component")
    table.add_column("reason", ratio=3)
    table.add_column("guard", ratio=1)
    for entry in report.decisions:
        action = entry["action"]
        table.add_row(entry["at"][:19].replace("T", " "), f"[{_STYLE.get(action, '')}]{action}[/]", entry["rule"],
                      _target_text(entry), entry["reason"], _guard_text(entry["guard"]))
    if report.decisions:
        console.print(table)
    else:
        console.print("No decisions: nothing in these events would have made the policy act.")
    if report.explained:
        explained = Table(title="Link-downs explained (not counted as cable faults)", expand=True)
        for column in ("at (UTC)", "component", "why"):
            explained.add_column(column)
        for entry in report.explained:
            explained.add_row(entry["at"][:19].replace("T", " "), _target_text(entry), entry["reason"])
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
        ("storm breaker", f"tripped {summary['halted']} time(s), {summary['held']} findings held"
                          + ("; still halted at the end" if summary["halted_at_end"] else "")),
        ("recorded only", str(summary["recorded"])),
        ("explained link-downs", str(summary["explained"])),
        ("replay", f"{summary['steps']} steps of {summary['interval_seconds']:g} s, dry run; model "
                   f"{summary['model']['source']} ({summary['model']['cables']} cables)"),
    ]
    for label, value in rows:
        grid.add_row(label, value)
    for example in summary["malformed"]:
        grid.add_row("malformed", example)
    console.print(grid)
    console.print("[bold]would act[/]" if report.would_act else "no action would be taken")
