"""The one HTTP path every real provider takes: pooled, bounded, retried, recorded.

Rules kept here:

- One ``httpx.AsyncClient`` per provider instance *and per event loop*. A client's pooled
  connections belong to the loop that opened them, and ``run_sync`` inside Jupyter drives a
  run on a private loop in a worker thread, so a client is never handed to another loop: a
  new loop gets its own, which is closed when that loop shuts down.
- Every phase has a limit (connect, read, write, pool), and every attempt a ``deadline`` from
  the moment it is sent, so a call never hangs, not even on a server that trickles bytes or
  sends keep-alive comments without end. A reply is read no further than ``max_reply_bytes``
  (its ``Content-Length``, when it states one, is judged before anything is read), and no
  deeper than :data:`~footprint_lab.base.saved_json.MAX_NESTING` levels of JSON.
- Requests to one endpoint (scheme, host, port) share one gate in the process, however many
  providers aim at it, across every loop and thread; it admits the smallest
  ``max_concurrency`` among the live providers aimed there (:mod:`~footprint_lab.providers._gate`).
  The others wait their turn before anything is sent, so a server that serves one request
  at a time is never handed a second, even by a fresh provider built for each rerun.
- Rate limits, failing servers and connections dropped before a response are retried a
  bounded number of times (the policy and the naming of each failure live in
  :mod:`~footprint_lab.providers.failures`). So is a reply the server cut short (a stream
  that ended before it said why the reply stopped, a connection closed mid-reply): once the
  response bytes were read, that is the only failure retried, and only while no streamed
  text has reached the run's ``on_token``, since text already shown must not be shown twice.
  A cut after text was delivered is raised, and the run is what is tried again. Every
  attempt reads with a fresh stream parser (a parser holds a partial reply), and the
  recorded exchange says how many attempts the call took (``attempts``).
- Every failure becomes a typed :mod:`footprint_lab.providers.errors` class whose message
  names the fix; no raw ``httpx`` exception escapes, and neither does a reply of the wrong
  shape (a string where an object belongs, a list where a number does): whatever a wire
  format's reader trips on in a reply is a :class:`ProviderResponseError` that says what kind
  of value was wrong, never the value.
- The request and response are recorded as sent and received: the JSON body exactly as
  serialised, the headers the client actually sent minus any that carry a credential,
  the response body (or every stream event, decoded, in order).

Providers plug in the wire format: the body, a decoder for a whole reply, the stream
framing (``sse`` or ``ndjson``) and a factory of :class:`StreamParser`
(:mod:`footprint_lab.providers._wire_format`, with what a wire format raises). This module knows
no wire format of its own; the bodies themselves, sent and read, are
:mod:`footprint_lab.providers._bodies`'s.
"""

from __future__ import annotations

import asyncio
import json
import threading
import weakref
from collections.abc import AsyncGenerator
from typing import Any

import httpx

from footprint_lab.providers._bodies import body_lines, capped_bytes, load_body, read_stream, serialize, whole_body
from footprint_lab.providers._gate import gate_for
from footprint_lab.providers._wire_format import Decoder, Missing, ParserFactory, ServerError, StreamParser, wrong_shape
from footprint_lab.providers.errors import ProviderError
from footprint_lab.providers.failures import Failures, Hints, Limits, display_url
from footprint_lab.providers.types import LLMResponse, TokenCallback

#: Header names containing any of these are never recorded.
_SECRET_MARKERS = ("auth", "key", "token", "secret", "cookie", "signature", "password", "credential")


class _Downstream(Exception):
    """An exception raised by the run's own ``on_token``: passed on as it is, never taken for a faulty reply."""

    def __init__(self, error: Exception) -> None:
        super().__init__("on_token failed")
        self.error = error


class _Failed(Exception):
    """An attempt whose reply was an HTTP error: the typed error, and the wait before another (``None``: none)."""

    def __init__(self, error: ProviderError, wait: float | None) -> None:
        super().__init__(str(error))
        self.error = error
        self.wait = wait


class _CutShort(Exception):
    """A reply the server cut short, carrying the typed error to raise if it is not sent again."""

    def __init__(self, error: ProviderError) -> None:
        super().__init__(str(error))
        self.error = error


class _Relay:
    """Hands streamed text on to the run's ``on_token``, remembering whether any was handed."""

    __slots__ = ("delivered", "on_token")

    def __init__(self, on_token: TokenCallback) -> None:
        self.on_token = on_token
        self.delivered = False

    def __call__(self, text: str) -> None:
        if not isinstance(text, str):
            raise wrong_shape(text)
        self.delivered = True
        try:
            self.on_token(text)
        except Exception as error:
            raise _Downstream(error) from error


def safe_headers(headers: httpx.Headers) -> dict[str, str]:
    """The headers minus every one whose name suggests a credential."""
    return {
        name: value for name, value in headers.items()
        if not any(marker in name.lower() for marker in _SECRET_MARKERS)
    }


async def _closed_with_loop(client: httpx.AsyncClient) -> AsyncGenerator[None, None]:
    """Suspended for the life of a loop; the loop's shutdown closes it, and so the client.

    ``asyncio.run`` (and so ``run_sync``'s private loop) closes every open async generator
    before closing the loop, so a client's connections are closed on the loop they belong
    to instead of being left for the garbage collector.
    """
    try:
        yield
    finally:
        await client.aclose()


class Wire(Failures):
    """One provider's HTTP client(s), retry policy and recorder of exchanges."""

    def __init__(
        self, *, provider: str, base_url: str, headers: dict[str, str], limits: Limits, hints: Hints,
    ) -> None:
        self.provider = provider
        self.base_url = base_url
        self.shown_url = display_url(base_url)
        self.limits = limits
        self.hints = hints
        self._headers = headers
        # credential values, so an error body that echoes one is recorded without it
        secrets = [v for k, v in headers.items() if any(m in k.lower() for m in _SECRET_MARKERS) and v]
        self._secrets = sorted({*secrets, *(v.split(" ", 1)[1] for v in secrets if " " in v)}, key=len, reverse=True)
        self._timeout = httpx.Timeout(limits.timeout, connect=limits.connect_timeout)
        self._pool = httpx.Limits(max_connections=limits.max_connections,
                                  max_keepalive_connections=limits.max_connections)
        self._clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[httpx.AsyncClient, AsyncGenerator[None, None]]
        ] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self.gate = gate_for(base_url, self, limits.max_concurrency)
        self._shown_urls: dict[bytes, str] = {}

    # -- clients ---------------------------------------------------------------------------
    async def client(self) -> httpx.AsyncClient:
        """This loop's client, opened on first use; a client never crosses loops."""
        loop = asyncio.get_running_loop()
        held = self._clients.get(loop)
        if held is not None and not held[0].is_closed:
            return held[0]
        client = httpx.AsyncClient(base_url=self.base_url, headers=self._headers, timeout=self._timeout,
                                   limits=self._pool)
        keeper = _closed_with_loop(client)
        await anext(keeper)  # runs to its yield without suspending: registered with this loop's shutdown
        with self._lock:
            for stale in [other for other in self._clients if other.is_closed()]:
                del self._clients[stale]
            self._clients[loop] = (client, keeper)
        return client

    async def aclose(self) -> None:
        """Close this loop's client (its pooled connections); the next call opens a new one."""
        with self._lock:
            held = self._clients.pop(asyncio.get_running_loop(), None)
        if held is not None:
            await held[1].aclose()

    # -- one call --------------------------------------------------------------------------
    async def call(self, path: str, body: dict[str, Any], *, framing: str, decode: Decoder,
                   parser: ParserFactory | None, on_token: TokenCallback | None = None) -> LLMResponse:
        """Send ``body`` and read the reply (its exchange on ``.wire``), retrying what may pass.

        ``parser`` (``None``: the reply comes whole) makes each attempt's stream parser, which
        hands text deltas on to ``on_token``.
        """
        client = await self.client()
        content = serialize(body)
        relay = _Relay(on_token) if on_token is not None else None
        loop = asyncio.get_running_loop()
        ends: float | None = None  # when the call's deadline runs out: set as its first attempt is sent
        attempt = 0
        while True:
            attempt += 1
            try:
                async with self.gate.slot():
                    ends = ends if ends is not None else loop.time() + self.limits.deadline
                    async with asyncio.timeout_at(ends):
                        return await self._attempt(client, path, content, body, framing, decode,
                                                   parser(relay) if parser is not None else None, attempt)
            except _Failed as failed:
                error, wait = failed.error, failed.wait
            except _CutShort as cut:
                error = cut.error
                wait = None if relay is not None and relay.delivered else self._backoff(attempt)
            except TimeoutError:
                error, wait = self._deadline_error(attempt), None
            except httpx.TimeoutException as exc:
                error = self._timeout_error(exc, attempt)
                wait = self._backoff(attempt) if isinstance(exc, httpx.ConnectTimeout) else None
            except httpx.ConnectError as exc:
                raise self._unreachable() from exc
            except httpx.TransportError:
                # The connection dropped before any response: safe to send again.
                error = self._unavailable(None, attempt, None)
                wait = self._backoff(attempt)
            except _Downstream as downstream:
                raise downstream.error from None
            if wait is None or attempt > self.limits.max_retries or loop.time() + wait >= (ends or 0):
                raise error
            await asyncio.sleep(wait)

    async def _attempt(self, client: httpx.AsyncClient, path: str, content: bytes, body: dict[str, Any],
                       framing: str, decode: Decoder, parser: StreamParser | None, attempt: int) -> LLMResponse:
        """One attempt: the reply read, or :class:`_Failed` with the failure and the wait before another."""
        async with client.stream("POST", path, content=content,
                                 headers={"content-type": "application/json"}) as response:
            if response.status_code < 300:
                return await self._read(response, body, framing, decode, parser, attempt)
            try:
                received = load_body(await whole_body(response, self.limits.max_reply_bytes))
            except Missing as missing:  # too long or too deep to keep: the status still says what failed
                received = f"[not kept: {missing.problem}]"
            wire = self.record(response, body, self._scrub(received), attempt)
            raise _Failed(*self._failure(response, wire, attempt))

    async def _read(self, response: httpx.Response, body: dict[str, Any], framing: str, decode: Decoder,
                    parser: StreamParser | None, attempt: int) -> LLMResponse:
        status = response.status_code
        received: Any = None
        limit = self.limits.max_reply_bytes
        try:
            if parser is None:
                received = load_body(await whole_body(response, limit))
                reply = decode(received)
            else:
                received = []
                reply = await read_stream(body_lines(capped_bytes(response, limit)), framing, parser, received)
        except (AttributeError, TypeError, KeyError, IndexError) as exc:
            # A wire format's reader tripped on a value of another kind than its wire has there (a string
            # where an object belongs, say): the reply is faulty, and it is named so, never quoted.
            missing = wrong_shape(getattr(exc, "obj", None))
            wire = self.record(response, body, self._scrub(received), attempt)
            raise self._faulty(status, missing, wire, attempt) from None
        except Missing as missing:
            wire = self.record(response, body, self._scrub(received), attempt)
            error = self._faulty(status, missing, wire, attempt)
            if missing.cut:
                raise _CutShort(error) from None
            raise error from None
        except ServerError as failure:
            wire = self.record(response, body, self._scrub(received), attempt)
            error, _ = self._classify(None, failure.payload, wire, attempt, None)
            raise error from None
        except httpx.TimeoutException as exc:
            raise self._timeout_error(exc, attempt) from None
        except httpx.TransportError:
            wire = self.record(response, body, received, attempt)
            raise _CutShort(self._unreadable(status, "the end of the reply (the connection closed mid-reply)", True,
                                             wire, attempts=attempt)) from None
        except httpx.HTTPError:  # a body whose content encoding cannot be decoded, say
            wire = self.record(response, body, received, attempt)
            raise self._unreadable(status, "a decodable body", True, wire) from None
        reply.wire = self.record(response, body, received, attempt)
        return reply

    def _faulty(self, status: int, missing: Missing, wire: dict[str, Any], attempt: int) -> ProviderError:
        return self._unreadable(status, missing.what, missing.retryable, wire, missing.fix, attempts=attempt,
                                problem=missing.problem)

    # -- recording -------------------------------------------------------------------------
    def record(self, response: httpx.Response, body: dict[str, Any], received: Any,
               attempt: int) -> dict[str, Any]:
        """The exchange as sent and received, credentials excluded."""
        request = response.request
        return {
            "request": {"method": request.method, "url": self._shown(request.url),
                        "headers": safe_headers(request.headers), "body": body},
            "response": {"status": response.status_code, "headers": safe_headers(response.headers),
                         "body": received},
            "attempts": attempt,
        }

    def _shown(self, url: httpx.URL) -> str:
        """The request URL as recorded; every call of a provider goes to the same few, so they are kept."""
        key = url.raw_path
        shown = self._shown_urls.get(key)
        if shown is None:
            shown = self._shown_urls[key] = display_url(str(url))
        return shown

    def _scrub(self, value: Any) -> Any:
        """``value`` with every credential this wire sends replaced (error bodies may echo a key)."""
        if not self._secrets:
            return value
        text = json.dumps(value, ensure_ascii=False)
        if not any(secret in text for secret in self._secrets):
            return value
        for secret in self._secrets:
            text = text.replace(secret, "[credential removed]")
        return json.loads(text)
