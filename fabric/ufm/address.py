"""What names a UFM and how long to wait for it: the base URL and the request timeout, checked; and UFM
Telemetry's instance and the largest sample taken from it.

Kept free of HTTP libraries so that the command line can check its ``--ufm`` options without loading them.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

DEFAULT_TIMEOUT_S = 30.0
"""Seconds each of connecting, sending and reading one request may take, unless told otherwise."""
MAX_TIMEOUT_S = 3600.0
_HOST_AND_PORT = re.compile(r"^[\w.-]+(?::\d+)?(?:/\S*)?$")
"""``ufm.example``, ``127.0.0.1:8000``: a URL without its scheme."""


def check_base_url(url: str) -> str:
    """``url`` without its trailing slash if it can be UFM's base URL; else ValueError saying what is wrong."""
    if not url.strip():
        raise ValueError("the URL is empty")
    if any(character.isspace() for character in url):
        raise ValueError("a URL cannot contain spaces")
    if not url.lower().startswith(("http://", "https://")):
        hint = f" (e.g. https://{url})" if _HOST_AND_PORT.match(url) else ""
        raise ValueError(f"the URL must start with http:// or https://{hint}")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # an unclosed [IPv6 address, a port that is no number or past 65535
        raise ValueError(f"not a valid URL: {exc}") from None
    if not parts.hostname:
        raise ValueError("the URL names no host")
    if port == 0:
        raise ValueError("port 0 cannot be connected to")
    if parts.query or parts.fragment:
        raise ValueError("the URL must not have a query (?...) or a fragment (#...)")
    return url.rstrip("/")


def check_timeout(seconds: float) -> float:
    """``seconds`` if it can be a request timeout (more than 0, at most an hour); else ValueError."""
    if not 0.0 < seconds <= MAX_TIMEOUT_S:  # false for NaN too
        raise ValueError(f"a timeout must be more than 0 and at most {MAX_TIMEOUT_S:g} seconds, got {seconds!r:.40}")
    return float(seconds)


TELEMETRY_URL = "http://127.0.0.1:9002"
"""UFM Telemetry on the UFM host (where NVIDIA's PDR plugin reads it)."""
TELEMETRY_INSTANCE = "low_freq_debug"
"""UFM Telemetry's secondary instance, whose counters the PDR plugin decides from."""
TELEMETRY_MAX_BYTES = 256 * 1024 * 1024
"""The largest sample taken, unless told otherwise: the simulator's h100-32k sample (~200,000 ports) is 21 MB."""
MAX_TELEMETRY_BYTES = 4 * 1024 * 1024 * 1024


def check_instance(name: str) -> str:
    """``name`` if it can be a telemetry instance (one segment of the URL's path); else ValueError."""
    if not name or any(c in name for c in "/?#%\\") or not name.isprintable() or any(c.isspace() for c in name):
        raise ValueError(f"a telemetry instance is a name without '/', '?', '#', '%' or spaces, got {name!r:.60}")
    return name


def check_max_bytes(value: int) -> int:
    """``value`` if it can be the largest sample taken (1 byte to 4 GiB); else ValueError."""
    if not 0 < value <= MAX_TELEMETRY_BYTES:
        raise ValueError(f"max_bytes must be from 1 to {MAX_TELEMETRY_BYTES:,}, got {value!r:.40}")
    return value
