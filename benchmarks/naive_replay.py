"""The baseline ``fabricctl replay`` is measured against: a UFM event.log scanner as operators write them.

The approach of Imbue's published ``ufm_events`` script (written afresh here): read the file line by line,
match each line against one full-line regex, parse its timestamp with ``datetime.strptime``, and print a
"disable" line for every event whose id is on a list of fault events. No fabric model, no time windows, no
attribution, no capacity guard: it decides nothing well, it is the cost of merely reading a log in Python.

    python -m benchmarks.naive_replay event.log > actions.txt
"""

from __future__ import annotations

import re
import sys
from datetime import datetime

LINE = re.compile(
    r"^(?P<timestamp>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d+) \[(?P<entry_id>\d+)\] \[(?P<code>\d+)\] "
    r"(?P<level>\w+) \[(?P<topic>\w+)\] (?P<device_type>\w+) \[(?P<device>[^\]]+)\]"
    r"(?: \[dev_id: (?P<device_id>\w+)\])?: (?P<message>.*)$"
)
# The fault events of the rule table in docs/design.md: link and port down, error thresholds, BER, retransmission,
# temperature and module faults, degraded width or speed, unhealthy ports.
DISABLE_ON = frozenset({110, 111, 112, 113, 114, 130, 276, 329, 392, 394, 701, 702, 750, 911, 912, 915, 916, 917,
                        918, 919})


def main(path: str) -> int:
    disables = unparsed = 0
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            match = LINE.match(line.rstrip("\n"))
            if match is None:
                unparsed += 1
                continue
            when = datetime.strptime(match["timestamp"], "%Y-%m-%d %H:%M:%S.%f")
            code = int(match["code"])
            if code in DISABLE_ON:
                disables += 1
                print(f"{when.isoformat()} disable {match['device']} (event {code} #{match['entry_id']}): "
                      f"{match['message'][:100]}")
    print(f"{disables} disable lines, {unparsed} lines not parsed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
