"""``fabricctl webhook``: the receiver alone, as a process, on the daemon's configuration and database."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
from raw_http import connect, until_closed
from webhook_support import SECRET, jira_body, signed

from fabric.controller.ticketing import Ticketing
from fabric.store import Store
from tickets.local import LocalTicketBackend

NOW = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)


def fabricctl(*args: str, secret: str = SECRET) -> subprocess.Popen[str]:
    env = {**os.environ, "FABRIC_TICKETS__WEBHOOK_SECRET": secret}
    return subprocess.Popen([sys.executable, "-m", "fabric.cli", *args], env=env, stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True)


def listening_at(process: subprocess.Popen[str]) -> re.Match[str]:
    """The receiver's "listening" line, read from its stderr: whatever comes before it (a library's warning) is
    kept to explain a failure, as is the exit code of a receiver that stopped instead."""
    assert process.stderr is not None
    seen: list[str] = []
    for line in process.stderr:
        found = re.search(r"on (http://127\.0\.0\.1:\d+) for fabric lab: POST /webhooks/jira \(signed\)", line)
        if found:
            return found
        seen.append(line)
        assert len(seen) < 50, seen
    raise AssertionError(f"the receiver ended (exit {process.wait(timeout=30)}) without listening: {seen}")


def test_the_receiver_alone_stores_deliveries_for_the_daemon(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fabric.db'}"
    store = Store.open(url, fabric="lab", clock=lambda: NOW)
    key = Ticketing(store, LocalTicketBackend(store.engine, clock=lambda: NOW), "lab").ensure_open(
        None, "storm", "a storm").key
    config = tmp_path / "config.toml"
    config.write_text(f'[fabric]\nname = "lab"\n[store]\nurl = "{url}"\n')
    process = fabricctl("webhook", "--config", str(config), "--port", "0")
    try:
        found = listening_at(process)
        body = jira_body(key)
        response = httpx.post(f"{found[1]}/webhooks/jira", content=body, headers=signed(body, "d-1"), timeout=30)
        assert response.status_code == 202
        assert httpx.post(f"{found[1]}/webhooks/jira", content=body, timeout=30).status_code == 401
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert [d.id for d in store.unprocessed_deliveries()] == ["d-1"]
    store.close()


def test_the_receiver_alone_needs_the_daemons_database(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[store]\nurl = "sqlite:///{tmp_path / "none.db"}"\n')
    process = fabricctl("webhook", "--config", str(config), "--port", "0")
    _, errors = process.communicate(timeout=60)
    assert process.returncode == 2
    (line,) = errors.strip().splitlines()
    assert line.startswith("fabricctl: error:") and "none.db" in line
    assert not (tmp_path / "none.db").exists()


def test_an_unreadable_secret_file_is_one_line_at_start(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fabric.db'}"
    Store.open(url, fabric="default").close()
    config = tmp_path / "config.toml"
    config.write_text(f'[store]\nurl = "{url}"\n[tickets]\nwebhook_secret_file = "{tmp_path / "gone"}"\n')
    process = fabricctl("webhook", "--config", str(config), "--port", "0")
    _, errors = process.communicate(timeout=60)
    assert process.returncode == 2
    (line,) = errors.strip().splitlines()
    assert "tickets.webhook_secret_file: cannot read the webhook secret file" in line


def test_the_receiver_alone_lets_go_of_a_body_shorter_than_it_said(tmp_path: Path) -> None:
    """Its server reads within the configuration's [api] read_timeout, as the daemon's does: a delivery whose body
    stops short of its Content-Length is answered 408 and the connection closed (raw socket, 127.0.0.1)."""
    url = f"sqlite:///{tmp_path / 'fabric.db'}"
    Store.open(url, fabric="lab").close()
    config = tmp_path / "config.toml"
    config.write_text(f'[fabric]\nname = "lab"\n[store]\nurl = "{url}"\n[api]\nread_timeout = "1s"\n')
    process = fabricctl("webhook", "--config", str(config), "--port", "0")
    try:
        port = int(listening_at(process)[1].rsplit(":", 1)[1])
        sock = connect(port)
        sock.sendall(b"POST /webhooks/jira HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 5000\r\n\r\n{\"webhookEvent\": ")
        began = time.monotonic()
        answer = until_closed(sock)
        assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer
        assert time.monotonic() - began < 3
    finally:
        process.terminate()
        process.wait(timeout=30)
