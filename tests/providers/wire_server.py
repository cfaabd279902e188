"""A real HTTP/1.1 server on 127.0.0.1 that plays scripted replies over real sockets.

Provider tests point a provider's ``base_url`` here. Each request takes the next scripted
:class:`Reply` (or the ``fallback``): a whole JSON body, a chunked stream (optionally slow,
or cut off mid-way), a stall that never answers, or a dropped connection. Every request is
kept as :class:`Received` (path, headers, JSON body, client port) for the test to inspect,
and ``peak`` is the most requests the server was answering at one moment.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass
class Reply:
    """One scripted reply."""

    status: int = 200
    body: Any = None  # a dict (sent as JSON), str or bytes: sent whole with Content-Length
    chunks: list[str] | None = None  # sent one by one with chunked transfer encoding
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    delay: float = 0.0  # pause before each chunk
    cut: bool = False  # close the socket after the chunks, without the terminating chunk
    stall: bool = False  # read the request and never answer
    stall_after: int | None = None  # send this many chunks, then go quiet without ending the body
    drop: bool = False  # close the connection without sending anything


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    client_port: int


class WireServer:
    """The server and its script; ``url`` is its base URL."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.fallback: Reply | None = None
        self.received: list[Received] = []
        self.release = threading.Event()
        self.in_flight = 0
        self.peak = 0
        self._count = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.wire = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def queue(self, *replies: Reply) -> WireServer:
        self.replies.extend(replies)
        return self

    def next_reply(self) -> Reply:
        if self.replies:
            return self.replies.popleft()
        if self.fallback is not None:
            return self.fallback
        return Reply(status=599, body={"error": "the test scripted no reply for this request"})

    def close(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default 5 would drop the connections of a burst of concurrent runs


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Flush each chunk as its own segment, as real streaming servers do (no Nagle delay).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        wire: WireServer = self.server.wire  # type: ignore[attr-defined]
        with wire._count:
            wire.in_flight += 1
            wire.peak = max(wire.peak, wire.in_flight)
        self._counted = True
        try:
            self._answer(wire)
        finally:
            self._finishing(wire)

    def _finishing(self, wire: WireServer) -> None:
        """The request stops counting as in flight just before its last bytes go out: a client can send
        its next request only after reading them, so a gated client never shows two at once, however
        late this thread gets to run again."""
        if getattr(self, "_counted", False):
            self._counted = False
            with wire._count:
                wire.in_flight -= 1

    def _answer(self, wire: WireServer) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode()
        wire.received.append(Received(self.command, self.path, {k.lower(): v for k, v in self.headers.items()},
                                      body, self.client_address[1]))
        reply = wire.next_reply()
        if reply.stall:
            wire.release.wait(30)
            self.close_connection = True
            return
        if reply.drop:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.send_response(reply.status)
        self.send_header("content-type", reply.content_type)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if reply.chunks is None:
            payload = reply.body
            data = payload if isinstance(payload, bytes) else (
                payload.encode() if isinstance(payload, str) else json.dumps(payload).encode())
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self._finishing(wire)
            self.wfile.write(data)
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for position, chunk in enumerate(reply.chunks):
            if position == reply.stall_after:
                wire.release.wait(30)
                self.close_connection = True
                return
            if reply.delay:
                time.sleep(reply.delay)
            data = chunk.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        if reply.cut:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self._finishing(wire)
        self.wfile.write(b"0\r\n\r\n")


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text()


def fixture_json(name: str) -> Any:
    return json.loads(fixture_text(name))


def sse_events(text: str) -> list[str]:
    """A server-sent-events body split into its events (one chunk each, as a server flushes them)."""
    return [event.strip("\n") + "\n\n" for event in text.split("\n\n") if event.strip()]


def ndjson_lines(text: str) -> list[str]:
    return [line + "\n" for line in text.splitlines() if line.strip()]


def stream_reply(name: str, **options: Any) -> Reply:
    """A streamed reply from a fixture file (``.sse`` or ``.ndjson``)."""
    text = fixture_text(name)
    if name.endswith(".sse"):
        return Reply(chunks=sse_events(text), content_type="text/event-stream", **options)
    return Reply(chunks=ndjson_lines(text), content_type="application/x-ndjson", **options)


def json_reply(name: str, **options: Any) -> Reply:
    return Reply(body=fixture_json(name), **options)
