"""Child process of the UFM benchmark: fetch and parse lists from a UFM, print timings as one JSON line."""

from __future__ import annotations

import asyncio
import json
import sys
import time

from fabric.ufm.auth import BasicAuth
from fabric.ufm.client import UfmClient


async def fetch(url: str, what: str) -> dict[str, float | int]:
    timings: dict[str, float | int] = {}
    async with UfmClient(url, BasicAuth("admin", "123456"), timeout=120.0) as client:
        for name in what.split(","):
            started = time.perf_counter()
            items = await getattr(client, name)()
            timings[f"{name}_s"] = time.perf_counter() - started
            timings[f"{name}_count"] = len(items)
    return timings


if __name__ == "__main__":
    print(json.dumps(asyncio.run(fetch(sys.argv[1], sys.argv[2]))))
