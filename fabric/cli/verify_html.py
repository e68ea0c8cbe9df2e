"""``fabricctl verify --html``: the report as one self-contained HTML file, the one attached to the data-centre ticket.

Everything is inline (CSS, the SVG picture); the page names no other resource and runs no script, and its
Content-Security-Policy forbids both, so it opens the same on a laptop with no network as where it was made. Jinja2
escapes every value (autoescape on); names are also made visible (``topology.printable``) so a hidden character in a
switch's name shows. The picture and the legend come from ``topology.picture`` already escaped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from jinja2 import Environment, StrictUndefined
from markupsafe import Markup

from fabric.cli.verify_render import rate
from topology.model import Cable, Fabric
from topology.picture import OVERVIEW_PODS, VERIFY_STATES, fabric_svg, layout_of, legend_svg, marks_by_pod, pod_svg
from topology.picture.marks import STYLES, CableState
from topology.picture.verified import verify_figures, verify_marks
from topology.printable import visible
from topology.verify import VerifyReport

DETAILED_PODS = 24
"""The most pods drawn in detail below the picture (those with marked cables, first by number)."""
LISTED_MEMBERS = 40
"""The most switches named for a partition."""


@dataclass(frozen=True, slots=True)
class CableRow:
    state: CableState
    planned: str
    as_built: str
    origin: str


def _cable_rows(report: VerifyReport) -> list[CableRow]:
    plan, actual = report.plan, report.actual

    def row(state: CableState, cable: Cable, as_built: str) -> CableRow:
        return CableRow(state, plan.describe_cable(cable), as_built, cable.origin or "")

    return [
        *(row(CableState.MISSING, cable, "nothing on either port") for cable in report.missing),
        *(row(CableState.MISWIRED, m.expected, "; ".join(actual.describe_cable(c) for c in m.actual)
              + (f" (swapped with {plan.describe_cable(m.swapped_with)})" if m.swapped_with else ""))
          for m in report.miswired),
        *(row(CableState.DEGRADED, d.planned, f"{rate(d.actual.width, d.actual.speed_gbps)}, planned "
              f"{rate(d.expected_width, d.expected_speed_gbps)}") for d in report.degraded),
        *(CableRow(CableState.UNEXPECTED, "", actual.describe_cable(cable), "") for cable in report.unexpected),
    ]


def _names(fabric: Fabric, keys: list[str]) -> str:
    shown = ", ".join(fabric.devices[key].name for key in keys[:LISTED_MEMBERS])
    return shown + (f" and {len(keys) - LISTED_MEMBERS} more" if len(keys) > LISTED_MEMBERS else "")


def render_verify_html(report: VerifyReport) -> str:
    """The whole report as an HTML document."""
    plan = report.plan
    layout = layout_of(plan)
    marks = verify_marks(report)
    figures = verify_figures(report)
    detailed = sorted(marks_by_pod(layout, marks))[:DETAILED_PODS]
    anchors = set(detailed)
    picture = fabric_svg(layout, marks, figures, pod_href=lambda n: f"#pod-{n}" if n in anchors else None)
    environment = Environment(autoescape=True, undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    environment.filters["shown"] = visible
    return environment.from_string(_TEMPLATE).render(
        report=report,
        summary=report.summary(),
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        picture=Markup(picture),
        legend=Markup(legend_svg(VERIFY_STATES, pods=len(layout.pods) > OVERVIEW_PODS)),
        pods=[(number, Markup(pod_svg(layout, number, marks, figures))) for number in detailed],
        marked_pods=len(marks_by_pod(layout, marks)),
        rows=_cable_rows(report),
        styles=STYLES,
        partitions=[(len(members), _names(plan, members)) for members in report.components],
        leaves=[(plan.devices[leaf.leaf].name, figures[leaf.leaf]) for leaf in report.leaves],
        unknown=[report.actual.devices[key].name for key in report.unknown_devices],
        absent=[plan.devices[key].name for key in report.absent_devices],
    )


_TEMPLATE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Cabling report: {{ report.actual.source | shown }}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1d2430; }
h1 { font-size: 1.4em; margin-bottom: 0.2em; } h2 { font-size: 1.15em; margin-top: 1.8em; }
.verdict { font-weight: bold; padding: 0.2em 0.6em; border-radius: 4px; color: #fff; }
.matches { background: #2ca02c; } .differs { background: #d62728; }
table { border-collapse: collapse; margin: 0.5em 0; } th, td { border: 1px solid #c9d3df; padding: 2px 8px; }
th { background: #eef2f7; text-align: left; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
.picture { overflow-x: auto; border: 1px solid #c9d3df; padding: 4px; }
.picture svg { max-width: 100%; height: auto; }
.swatch { display: inline-block; width: 1.6em; height: 0.35em; vertical-align: middle; margin-right: 0.4em; }
.below { color: #b01e1e; font-weight: bold; } .reduced { color: #9a6b00; } .muted { color: #666; }
</style>
</head>
<body>
<h1>Cabling report</h1>
<p>As built: <b>{{ report.actual.source | shown }}</b> against the plan <b>{{ report.plan.source | shown }}</b>
<span class="verdict {{ 'matches' if report.matches else 'differs' }}" id="verdict">
{{- 'MATCHES the plan' if report.matches else 'DOES NOT MATCH the plan' -}}</span></p>
<p class="muted">Made by fabricctl verify, {{ generated }}; guard: {{ '%g' % (report.guard * 100) }}% of each leaf's
planned paths to core.</p>

<h2>Summary</h2>
<table id="summary"><tr><th>check</th><th>count</th></tr>
{% for check, count in summary.items() %}<tr><td>{{ check }}</td><td class="n">{{ count }}</td></tr>
{% endfor %}</table>

<h2>The fabric</h2>
<div class="picture">{{ picture }}</div>
{{ legend }}
{% if pods %}
<h2>Pods with marked cables</h2>
{% if marked_pods > pods | length %}<p class="muted">The first {{ pods | length }} of {{ marked_pods }}.</p>{% endif %}
{% for number, svg in pods %}<h3 id="pod-{{ number }}">Pod {{ number }}</h3>
<div class="picture">{{ svg }}</div>
{% endfor %}
{% endif %}

<h2>Partitions</h2>
<p>{{ partitions | length }} switch partition{{ '' if partitions | length == 1 else 's' }}
(planned {{ report.planned_components }}).</p>
{% if partitions | length > 1 %}<table id="partitions"><tr><th>switches</th><th>members</th></tr>
{% for size, members in partitions %}<tr><td class="n">{{ size }}</td><td>{{ members | shown }}</td></tr>
{% endfor %}</table>{% endif %}

<h2>Cables that differ from the plan</h2>
{% if rows %}<table id="cables"><tr><th>state</th><th>planned cable</th><th>as built</th><th>plan line</th></tr>
{% for row in rows %}<tr data-cable="{{ (row.planned or row.as_built) | shown }}" data-state="{{ row.state.value }}">
<td><span class="swatch" style="background: {{ styles[row.state].colour }}"></span>{{ styles[row.state].label }}</td>
<td>{{ row.planned | shown }}</td><td>{{ row.as_built | shown }}</td><td>{{ row.origin | shown }}</td></tr>
{% endfor %}</table>{% else %}<p>None: every planned cable is where the plan puts it.</p>{% endif %}

{% if unknown or absent or report.odd_names or report.plan.conflicts %}
<h2>Devices</h2>
{% if unknown %}<p>Not in the plan: {{ unknown | join(', ') | shown }}</p>{% endif %}
{% if absent %}<p>Planned but absent: {{ absent | join(', ') | shown }}</p>{% endif %}
{% if report.odd_names %}<table id="odd-names"><tr><th>side</th><th>name</th><th>what is odd</th>
<th>looks like the planned</th></tr>
{% for odd in report.odd_names %}<tr><td>{{ odd.side }}</td><td>{{ odd.name | shown }}</td>
<td>{{ (odd.why or 'plain ASCII: the planned name it looks like is not') | shown }}</td>
<td>{{ (odd.looks_like or '') | shown }}</td></tr>
{% endfor %}</table>{% endif %}
{% for error in report.plan.conflicts %}<p>Plan conflict: {{ error | string | shown }}</p>{% endfor %}
{% endif %}

<h2>Paths to core, each leaf</h2>
{% if leaves %}<table id="leaves"><tr><th>leaf</th><th>paths</th><th>planned</th><th>guard minimum</th>
<th>cores reached</th><th>planned cores</th></tr>
{% for name, leaf in leaves %}<tr class="{{ leaf.health }}" data-leaf="{{ name | shown }}">
<td>{{ name | shown }}</td><td class="n">{{ leaf.paths }}</td><td class="n">{{ leaf.planned }}</td>
<td class="n">{{ leaf.minimum }}</td><td class="n">{{ leaf.cores }}</td><td class="n">{{ leaf.planned_cores }}</td></tr>
{% endfor %}</table>
{% else %}<p class="muted">The plan has no host links, so leaves cannot be told apart.</p>{% endif %}
</body>
</html>
"""
