"""URLs in messages: the password of ``user:password@`` and secret query values never shown."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from topology.redact import redacted_url

secret = st.text(st.characters(codec="utf-8", exclude_characters="?#"), min_size=4, max_size=30)


@settings(max_examples=200, deadline=1000)
@given(password=secret, scheme=st.sampled_from(["http", "https", "postgresql+psycopg", ""]),
       port=st.sampled_from(["", ":8000", ":99999"]), path=st.sampled_from(["", "/", "/ufmRest", "/db?sslmode=x"]))
@example(password="http", scheme="http", port="", path="")  # CI found it: a password that the scheme holds
def test_a_password_in_a_url_is_never_shown(password: str, scheme: str, port: str, path: str) -> None:
    url = f"{scheme}{'://' if scheme else ''}admin:{password}@ufm.example{port}{path}"
    shown = redacted_url(url)
    # The whole URL as it was but the password (the sampled paths hold no secret): a password that is a part of
    # the scheme, port or path ("http", "8000") is no leak, and is not taken for one.
    assert shown == f"{scheme}{'://' if scheme else ''}admin:***@ufm.example{port}{path}", shown


@pytest.mark.parametrize(("url", "shown"), [
    ("https://ufm.example/ufmRest", "https://ufm.example/ufmRest"),
    ("sqlite:////var/lib/fabric/fabric.db", "sqlite:////var/lib/fabric/fabric.db"),
    ("https://admin@ufm.example", "https://admin@ufm.example"),
    ("http://h/x?token=abc&page=2&api_key=k", "http://h/x?token=***&page=2&api_key=***"),
    ("postgresql+psycopg://fabric:pw@db/x?sslpassword=y", "postgresql+psycopg://fabric:***@db/x?sslpassword=***"),
    ("http://admin:s3cret@[::1:9/x", "http://admin:***@[::1:9/x"),
    ("http://admin:pa/ss@h/x", "http://admin:***@h/x"),
])
def test_what_a_url_shows(url: str, shown: str) -> None:
    assert redacted_url(url) == shown
