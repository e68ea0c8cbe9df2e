"""After a job the daemon gives the allocator's free memory back to the system (glibc's ``malloc_trim``).

What a cycle frees stays in glibc's heap for the next allocation, and one block still in use above it (the heap
only shrinks from its top by itself) keeps all of it resident: after a storm's cycle, hundreds of MiB."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.daemon import gcpolicy

BLOCKS, BLOCK = 40_000, 4096
"""160 MiB in blocks that glibc serves from its heap (above pymalloc's 512 bytes, below mmap's threshold)."""


def _resident_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(gcpolicy._TRIM is None, reason="the C library is not glibc: nothing to give back this way")
def test_memory_a_job_freed_under_a_block_still_in_use_goes_back_to_the_system() -> None:
    blocks = [bytes(BLOCK) for _ in range(BLOCKS)]
    pinned = bytes(BLOCK)  # above them in the heap: glibc cannot shrink its heap from the top past it
    blocks.clear()
    held = _resident_mib()
    gcpolicy.release_freed_memory()
    released = held - _resident_mib()
    assert released > 100, f"{released:.0f} MiB given back of the {BLOCKS * BLOCK / 2**20:.0f} MiB freed"
    assert pinned
