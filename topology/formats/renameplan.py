"""The rename plan ``fabricctl identify --rename-plan`` writes: a CSV of the switches to rename in UFM.

UNCONFIRMED: no UFM REST call that renames a switch (sets a system's ``system_name``) is documented in the UFM
Enterprise REST API guides or used in NVIDIA's UFM SDK, as far as we could check; UFM shows a switch by the node
description the switch reports. So the plan is a file an operator applies (on the switch, or through the
node-name-map that ``identify --node-name-map`` writes for OpenSM and the diagnostics; MLNX-OS documents
``ib nodename <guid> name <name>`` for the same pairs on a switch that runs the subnet manager), not a call this
service makes.
Only ``unique`` matches are in it: a rename on weaker evidence is a guess.
"""

from __future__ import annotations

import csv
import io

from topology.identify import Identification

COLUMNS = ("guid", "current_name", "new_name")


def render_rename_plan(identification: Identification) -> str:
    """One row per switch named ``unique`` whose current name is not its planned name, by planned name."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    rows = sorted((m.planned, m.guid or "", m.name) for m in identification.switches
                  if m.planned is not None and m.planned != m.name)
    writer.writerows((f"0x{guid}" if guid else "", current, new) for new, guid, current in rows)
    return out.getvalue()
