"""``receive()``: an OTLP/HTTP traces receiver a notebook starts, turning each trace into a run as it ends.

Rule kept: the receiver reads what any OTLP exporter sends (``POST /v1/traces``, protobuf or JSON,
gzip or not) through the one import door (:func:`~footprint_lab.otel._spans.read_spans`,
:func:`~footprint_lab.otel._importer.from_spans`), and answers anything else by name with the
HTTP status it deserves, never quoting the body: 404 another path, 405 another method, 411 no
``Content-Length``, 413 a body (or its unzipped bytes) over ``max_body_bytes``, 415 a content type
or encoding other than OTLP's, 400 a body that is not spans. A refused request never stops it.
Spans wait grouped by trace; a trace becomes runs when its root span (one naming no parent)
arrives, and each run is appended to ``receiver.runs`` and handed to every subscriber. A request is
answered once its spans are read and held: the import runs on the receiver's own worker thread, so an
exporter never waits for it (``settle()`` waits for the imports still under way).

Listens on 127.0.0.1 by default: a trace holds prompts and tool results, so it is offered to
other machines only when ``host`` says so.

Pattern: a ``ThreadingHTTPServer`` on a daemon thread, one worker thread importing ended traces in
the order they ended; one lock over the pending traces and the runs; subscribers called outside it,
each on the event loop it names (``loop=``) when it has one, so a notebook's widget is fed on the
kernel's loop.

Role: the live door of :mod:`footprint_lab.otel`; imports ``opentelemetry-proto`` for protobuf bodies.
:class:`footprint_lab.batch.RunSet` lives above this package: ``RunSet.from_runs(receiver.runs)``
makes a set of what arrived.
"""

from __future__ import annotations

import asyncio
import json
import queue
import threading
import zlib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from footprint_lab.base.refusal import Refusal, describe_shape
from footprint_lab.core.run import Run
from footprint_lab.otel._importer import check_redact, from_spans
from footprint_lab.otel._spans import SpanData, read_spans
from footprint_lab.otel.refusals import OtelReceiverError, OtelSpansError, OtlpRequestRefused
from footprint_lab.redact.policy import Redaction

#: the largest body (and unzipped body) a request may carry by default: 16 MiB
MAX_BODY_BYTES = 16 * 1024 * 1024
PROTOBUF, JSON = "application/x-protobuf", "application/json"
_FIX_TYPE = ("Send OTLP traces: Content-Type application/x-protobuf or application/json, Content-Encoding gzip or "
             "none (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf or http/json)")


class Receiver:
    """A running OTLP/HTTP receiver: ``url`` to point exporters at, ``runs`` as they arrive, ``stop()``."""

    def __init__(self, host: str, port: int, max_body_bytes: int, redact: Redaction | None = None) -> None:
        self.max_body_bytes = max_body_bytes
        #: the policy each run is recorded under (``None``: none)
        self.redact = redact
        #: the runs made so far, in the order their traces ended (``RunSet.from_runs(receiver.runs)`` for a set)
        self.runs: list[Run] = []
        #: requests answered with an error status, by status (``{415: 2, 400: 1}``)
        self.refused: dict[int, int] = {}
        #: subscriber calls that raised (the receiver goes on)
        self.listener_errors = 0
        #: spans that arrived for a trace already made into runs (not imported again)
        self.late_spans = 0
        #: traces whose spans the import refused once their root arrived (a loop of parents across requests)
        self.import_errors = 0
        self._ended: queue.Queue[list[SpanData] | threading.Event | None] = queue.Queue()
        self._pending: dict[str, list[SpanData]] = {}
        self._done: set[str] = set()
        self._listeners: list[tuple[Callable[[Run], Any], Any]] = []
        self._lock = threading.Lock()
        try:
            self._server = _Server((host, port), _Handler)
        except OSError:
            raise OtelReceiverError("port", "a port this machine will not listen on (taken, or not allowed)",
                                    "Pass port=0 for a free one, or another port") from None
        self._server.receiver = self
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="footprint_lab-otlp-receiver", daemon=True)
        self._thread.start()
        self._worker = threading.Thread(target=self._work, name="footprint_lab-otlp-import", daemon=True)
        self._worker.start()

    @property
    def host(self) -> str:
        return str(self._server.server_address[0])

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The traces endpoint (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``); the base URL is this without ``/v1/traces``."""
        host = self.host
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}/v1/traces"

    @property
    def pending(self) -> int:
        """How many traces wait for their root span."""
        with self._lock:
            return len(self._pending)

    def subscribe(self, callback: Callable[[Run], Any], *,
                  loop: asyncio.AbstractEventLoop | None = None) -> Callable[[], None]:
        """Call ``callback(run)`` for each run from now on; returns a function that stops it.

        With ``loop`` (an asyncio event loop, such as the notebook kernel's), the call is made on
        that loop (``loop.call_soon_threadsafe``); otherwise on the receiver's own thread. A callback
        that raises is counted in ``listener_errors`` and the receiver goes on.
        """
        if not callable(callback):
            raise OtelReceiverError("callback", describe_shape(callback), "Pass a function taking one run")
        if loop is not None and not callable(getattr(loop, "call_soon_threadsafe", None)):
            raise OtelReceiverError("loop", describe_shape(loop), "Pass an asyncio event loop, or leave it out")
        entry = (callback, loop)
        with self._lock:
            self._listeners.append(entry)

        def unsubscribe() -> None:
            with self._lock:
                if entry in self._listeners:
                    self._listeners.remove(entry)

        return unsubscribe

    def settle(self, timeout: float = 10.0) -> bool:
        """Wait until every trace that ended so far is imported; ``False`` if ``timeout`` seconds passed first."""
        done = threading.Event()
        self._ended.put(done)  # the worker sets it once everything queued before it is imported
        return done.wait(timeout)

    def flush(self) -> None:
        """Make runs of every trace still waiting for its root span (its spans as they are), and wait for them."""
        with self._lock:
            traces, self._pending = list(self._pending.values()), {}
            self._done.update(spans[0].trace_id for spans in traces)
        for spans in traces:
            self._ended.put(spans)
        self.settle()

    def stop(self) -> None:
        """Stop listening, once the traces that ended are imported (traces still waiting stay in ``pending``)."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
        self.settle()
        self._ended.put(None)
        self._worker.join(5)

    def __enter__(self) -> Receiver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"Receiver(url={self.url!r}, runs={len(self.runs)}, pending={self.pending})"

    # -- what the handler calls ---------------------------------------------------------------
    def take(self, spans: list[SpanData]) -> None:
        """Keep ``spans`` with their traces; the traces whose root has now arrived go to be imported."""
        with self._lock:
            touched: dict[str, None] = {}
            for span in spans:
                if span.trace_id in self._done:
                    self.late_spans += 1
                    continue
                self._pending.setdefault(span.trace_id, []).append(span)
                touched[span.trace_id] = None
            for trace in touched:
                held = self._pending[trace]
                if any(span.parent_id is None for span in held):
                    self._ended.put(self._pending.pop(trace))
                    self._done.add(trace)

    def _work(self) -> None:
        """The import worker: each ended trace in turn, until ``stop()`` sends ``None``."""
        while True:
            spans = self._ended.get()
            if spans is None:
                return
            if isinstance(spans, threading.Event):
                spans.set()
                continue
            try:
                self._import(spans)
            except Refusal:  # spans that hold together only per request (a loop across requests): counted
                with self._lock:
                    self.import_errors += 1

    def _import(self, spans: list[SpanData]) -> None:
        try:
            runs = from_spans(spans, progress=False, redact=self.redact)  # a worker thread: no bar in any cell
        except OtelSpansError:  # a trace with no LLM span (a web server's own requests) makes no run
            return
        with self._lock:
            self.runs.extend(runs)
            listeners = list(self._listeners)
        for run in runs:
            for callback, loop in listeners:
                if loop is not None:
                    loop.call_soon_threadsafe(self._call, callback, run)
                else:
                    self._call(callback, run)

    def _call(self, callback: Callable[[Run], Any], run: Run) -> None:
        try:
            callback(run)
        except Exception:  # a subscriber never breaks the receiver
            with self._lock:
                self.listener_errors += 1

    def count(self, status: int) -> None:
        with self._lock:
            self.refused[status] = self.refused.get(status, 0) + 1


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    receiver: Receiver


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30  # a client that stops sending mid-body frees its thread

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        self._refuse(OtlpRequestRefused(405, "a GET request", "POST spans to /v1/traces"))

    do_PUT = do_DELETE = do_PATCH = do_GET

    def do_POST(self) -> None:
        receiver: Receiver = self.server.receiver  # type: ignore[attr-defined]
        try:
            body, kind = self._body(receiver.max_body_bytes)
            spans = read_spans(_decode(body, kind), rooted=False)
            receiver.take(spans)
        except OtlpRequestRefused as refused:
            self._refuse(refused)
            return
        except Refusal as refused:  # spans that do not hold together: named by the import door
            self._refuse(OtlpRequestRefused(400, f"spans the import refused ({refused.code})", str(refused)
                                            .rstrip(".")))
            return
        self._reply(200, b"" if kind == PROTOBUF else b"{}", kind)

    def _body(self, cap: int) -> tuple[bytes, str]:
        if self.path.split("?", 1)[0].rstrip("/") != "/v1/traces":
            raise OtlpRequestRefused(404, "a POST to a path other than /v1/traces",
                                     "Point the exporter at receiver.url (it ends in /v1/traces)")
        kind = (self.headers.get("content-type") or "").split(";", 1)[0].strip().lower()
        if kind not in (PROTOBUF, JSON):
            raise OtlpRequestRefused(415, "a body that is not OTLP protobuf or JSON by its content type", _FIX_TYPE)
        encoding = (self.headers.get("content-encoding") or "identity").strip().lower()
        if encoding not in ("identity", "gzip"):
            raise OtlpRequestRefused(415, "a body in a content encoding other than gzip", _FIX_TYPE)
        length = self.headers.get("content-length")
        if length is None or not length.strip().isdigit():
            raise OtlpRequestRefused(411, "a body without a Content-Length", "Send the body with its length")
        if int(length) > cap:
            raise OtlpRequestRefused(413, f"a body of {int(length)} bytes, over the cap of {cap}",
                                     "Send smaller batches (BatchSpanProcessor(max_export_batch_size=...)), or "
                                     "start the receiver with a larger max_body_bytes")
        body = self.rfile.read(int(length))
        if len(body) < int(length):
            raise OtlpRequestRefused(400, "a body shorter than its Content-Length", "Send the whole body")
        if encoding == "gzip":
            unzip = zlib.decompressobj(16 + zlib.MAX_WBITS)
            try:
                body = unzip.decompress(body, cap + 1)
            except zlib.error:
                raise OtlpRequestRefused(400, "a body that is not gzip data though it says so",
                                         "Send gzip data with Content-Encoding: gzip, or plain bytes without it"
                                         ) from None
            if len(body) > cap or unzip.unconsumed_tail:
                raise OtlpRequestRefused(413, f"a gzip body that unzips past the cap of {cap} bytes",
                                         "Send smaller batches, or start the receiver with a larger max_body_bytes")
        return body, kind

    def _refuse(self, refused: OtlpRequestRefused) -> None:
        self.server.receiver.count(refused.status)  # type: ignore[attr-defined]
        if refused.status in (411, 413):  # the body was not read: the connection cannot carry another request
            self.close_connection = True
        payload = json.dumps({"code": refused.code, "message": str(refused)}).encode()
        self._reply(refused.status, payload, JSON)

    def _reply(self, status: int, payload: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(payload)))
        if self.close_connection:
            self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(payload)


def _decode(body: bytes, kind: str) -> Any:
    if kind == PROTOBUF:
        from footprint_lab.otel._otlp import decode

        return decode(body)
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        raise OtlpRequestRefused(400, f"{len(body)} bytes that are not JSON", "Send OTLP JSON") from None
    if not isinstance(data, dict) or "resourceSpans" not in data:
        raise OtelSpansError(f"{describe_shape(data)} without 'resourceSpans'")
    return data


def receive(port: int = 0, host: str = "127.0.0.1", *, max_body_bytes: int = MAX_BODY_BYTES,
            on_run: Callable[[Run], Any] | None = None, redact: Redaction | None = None) -> Receiver:
    """Start an OTLP/HTTP traces receiver on a background thread; returns it running.

    ``port``: 0 (a free one) by default; ``host``: 127.0.0.1 (this machine only) by default.
    ``max_body_bytes``: the largest request body, and unzipped body, taken (16 MiB). ``on_run``: a
    function called with each run as its trace ends (see :meth:`Receiver.subscribe`). Point an
    exporter at ``receiver.url``; ``receiver.runs`` holds the runs; ``with receive() as receiver:``
    stops it at the end of the block. ``redact``: the policy each run is recorded under (see
    :func:`~footprint_lab.otel.from_spans`).
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise OtelReceiverError("port", describe_shape(port), "Pass a whole number from 0 (a free port) to 65535")
    if not isinstance(host, str) or not host:
        raise OtelReceiverError("host", describe_shape(host), "Pass an address as text, such as '127.0.0.1'")
    if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int) or max_body_bytes < 1:
        raise OtelReceiverError("max_body_bytes", describe_shape(max_body_bytes), "Pass a whole number of bytes from 1")
    if on_run is not None and not callable(on_run):
        raise OtelReceiverError("on_run", describe_shape(on_run), "Pass a function taking one run, or None")
    check_redact("receive", redact)
    receiver = Receiver(host, port, max_body_bytes, redact)
    if on_run is not None:
        receiver.subscribe(on_run)
    return receiver
