"""`engram serve` refuses a body it will not take before reading it: a client that declares 60 MB is answered
413 while it has sent a few bytes, and the server goes on serving."""

from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

import httpx
import pytest

from tests.e2e.conftest import Server

pytestmark = pytest.mark.e2e
DECLARED = 60_000_000


def _response(sock: socket.socket) -> tuple[int, dict]:
    """The status and JSON body of one HTTP/1.1 response read from `sock`."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65_536)
        assert chunk, f"the server closed the connection without answering: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = int(next(v for k, _, v in (line.partition(": ") for line in lines[1:]) if k.lower() == "content-length"))
    while len(body) < length:
        chunk = sock.recv(65_536)
        assert chunk, "the server closed the connection mid-answer"
        body += chunk
    return int(lines[0].split()[1]), json.loads(body[:length])


def test_a_body_declared_too_large_is_answered_413_before_it_is_sent(local_server: Server) -> None:
    url = urlsplit(local_server.url)
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        sock.sendall(f"POST /v1/worlds/limits/events HTTP/1.1\r\nHost: {url.netloc}\r\n"
                     f"Content-Type: application/json\r\nContent-Length: {DECLARED}\r\n\r\n".encode()
                     + b'{"events": [')  # 12 of the 60,000,000 bytes: the rest is never sent
        status, body = _response(sock)  # a server that waits for the body times out here instead
    assert (status, body["error"]["code"]) == (413, "payload_too_large")
    assert httpx.get(f"{local_server.url}/v1/health", timeout=10).status_code == 200
