"""URLs as messages show them: never with the password of ``user:password@`` or a secret in the query.

A UFM, Jira, API or database URL reaches error messages and logs whole: an operator who typed
``--ufm https://admin:s3cret@ufm`` must not find the password in the error, in a terminal's scroll-back or in a log
pipeline. Every message that shows a URL shows ``redacted_url(url)``: the password and the values of query
parameters that name a secret become ``***``; the user, host, port and path stay, to say which URL is meant.

Plain text, no URL parser: a URL a parser refuses (an unclosed ``[``, a port past 65535) is the likeliest to end up
in an error message, and must be redacted as well.
"""

from __future__ import annotations

import re

MASK = "***"

_PASSWORD = re.compile(r"^(?P<head>\s*(?:[A-Za-z][A-Za-z0-9+.-]*://[^/?#@:\s]*:|[^/?#@:\s]*:(?!//)))[^?#]*@")
"""``scheme://user:`` (or ``user:``: a scheme forgotten) then the password, up to the last ``@`` before a query: a
password may hold an ``@`` or a ``/`` (which a URL parser would read as the start of the path, and show). A path
holding an ``@`` is hidden with it: more hidden than needed, never less."""
_SECRET_PARAMETER = re.compile(
    r"(?P<head>[?&;](?:[^=&#;]*(?:pass|pwd|token|secret|key|auth|signature|credential)[^=&#;]*)=)[^&#;]*",
    re.IGNORECASE)
"""A query parameter whose name says it holds a secret (``password``, ``access_token``, ``api_key``, ``sig``...)."""


def redacted_url(url: str) -> str:
    """``url`` with its password and secret query values replaced by ``***``."""
    if "@" not in url and "=" not in url:
        return url
    return _SECRET_PARAMETER.sub(rf"\g<head>{MASK}", _PASSWORD.sub(rf"\g<head>{MASK}@", url))
