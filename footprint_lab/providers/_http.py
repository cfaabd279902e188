"""The one HTTP path every real provider takes: pooled, bounded, retried, recorded.

Rules kept here:

- One ``httpx.AsyncClient`` per provider instance *and per event loop*. A client's pooled
  connections belong to the loop that opened them, and ``run_sync`` inside Jupyter drives a
  run on a private loop in a worker thread, so a client is never handed to another loop: a
  new loop gets its own, which is closed when that loop shuts down.
- Every phase has a limit (connect, read, write, pool), so a call never hangs.
- Rate limits (429), overloaded or failing servers (408, 409, 5xx) and connections dropped
  before a response are retried a bounded number of times, with exponential backoff and
  jitter, honouring ``Retry-After`` / ``retry-after-ms`` up to ``max_retry_wait``. Nothing
  is retried once response bytes have been read (tokens may already have reached the run),
  and requests the server rejects for what they are (auth, 400/404/413/422, context
  overflow) are never retried.
- Every failure becomes a typed :mod:`footprint_lab.providers.errors` class whose message
  names the fix; no raw ``httpx`` exception escapes.
- The request and response are recorded as sent and received: the JSON body exactly as
  serialised, the headers the client actually sent minus any that carry a credential,
  the response body (or every stream event, decoded, in order).

Providers plug in the wire format: the body, a decoder for a whole reply, the stream
framing (``sse`` or ``ndjson``) and a :class:`StreamParser`. This module knows no wire
format of its own.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from time import time
from typing import Any, Protocol

import httpx

from footprint_lab.providers.errors import (
    ContextWindowError,
    ModelNotFoundError,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderRateLimitError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderTimeoutError,
    ProviderUnavailableError,
)
from footprint_lab.providers.types import LLMResponse

#: Header names containing any of these are never recorded.
_SECRET_MARKERS = ("auth", "key", "token", "secret", "cookie", "signature", "password", "credential")
_CONTEXT_MARKERS = (
    "context length", "context_length", "context window", "context size", "context_window",
    "prompt is too long", "maximum context", "exceeds the available context", "too many tokens in the prompt",
)


class Missing(Exception):
    """Raised by a codec when a response lacks something; the wire turns it into a typed error."""

    def __init__(self, what: str, *, retryable: bool = False) -> None:
        super().__init__(what)
        self.what = what
        self.retryable = retryable


class ServerError(Exception):
    """Raised by a codec when a stream carries an error event in place of a reply."""

    def __init__(self, payload: Any) -> None:
        super().__init__("error event")
        self.payload = payload


class StreamParser(Protocol):
    """Assembles one streamed reply, event by event."""

    def feed(self, event: str | None, data: Any) -> None:
        """Take one decoded stream event (SSE event name, or ``None`` for NDJSON)."""
        ...

    def finish(self) -> LLMResponse:
        """The assembled reply; raise :class:`Missing` when the stream ended early."""
        ...


#: Reads a whole (non-streamed) reply; raises :class:`Missing` when something is absent.
Decoder = Callable[[Any], LLMResponse]


@dataclass(frozen=True, slots=True)
class Hints:
    """The provider-specific sentences the wire's error messages end with."""

    env_var: str | None
    model_fix: str
    endpoint_fix: str
    unreachable_fix: str
    context_fix: str = ""


@dataclass(frozen=True, slots=True)
class Limits:
    """Timeouts (seconds), retry bounds and pool size of one provider."""

    timeout: float
    connect_timeout: float
    max_retries: int
    retry_backoff: float
    max_retry_wait: float
    max_connections: int


def display_url(url: str) -> str:
    """A URL as safe to show: scheme, host, port and path; never user info or query."""
    parsed = httpx.URL(url)
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.scheme}://{parsed.host}{port}{parsed.path.rstrip('/')}"


def safe_headers(headers: httpx.Headers) -> dict[str, str]:
    """The headers minus every one whose name suggests a credential."""
    return {
        name: value for name, value in headers.items()
        if not any(marker in name.lower() for marker in _SECRET_MARKERS)
    }


def error_fields(payload: Any) -> tuple[str | None, str | None, str]:
    """The ``(type, code, text)`` of an error body in any of the shapes servers send."""
    if isinstance(payload, dict):
        error = payload.get("error", payload)
        if isinstance(error, str):
            return None, None, error
        if isinstance(error, dict):
            kind, code = error.get("type"), error.get("code")
            text = error.get("message") or error.get("detail") or ""
            return (str(kind) if kind is not None else None, str(code) if code is not None else None,
                    text if isinstance(text, str) else json.dumps(text))
    if isinstance(payload, str):
        return None, None, payload
    return None, None, ""


def _load(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")[:2000]


def retry_after(headers: httpx.Headers) -> float | None:
    """The wait, in seconds, a response asks for (``retry-after-ms`` or ``Retry-After``)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        return max(parsedate_to_datetime(value).timestamp() - time(), 0.0)
    except (TypeError, ValueError):
        return None


async def _sse(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str | None, str]]:
    """Server-sent events as ``(event name, data)``; comments and ids are skipped."""
    event: str | None = None
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = None, []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
    if data:
        yield event, "\n".join(data)


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


async def _ndjson(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str | None, str]]:
    async for line in lines:
        if line.strip():
            yield None, line


class Wire:
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
                   parser: StreamParser | None) -> LLMResponse:
        """Send ``body`` and read the reply (its exchange on ``.wire``), retrying what may pass."""
        client = await self.client()
        content = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
        attempt = 0
        while True:
            attempt += 1
            try:
                async with client.stream("POST", path, content=content,
                                         headers={"content-type": "application/json"}) as response:
                    if response.status_code < 400:
                        return await self._read(response, body, framing, decode, parser, attempt)
                    raw = await response.aread()
                    wire = self._record(response, body, self._scrub(_load(raw)), attempt)
                    error, wait = self._failure(response, wire, attempt)
            except ProviderError:
                raise
            except httpx.TimeoutException as exc:
                error = self._timeout_error(exc, attempt)
                wait = self._backoff(attempt) if isinstance(exc, httpx.ConnectTimeout) else None
            except httpx.ConnectError as exc:
                raise ProviderConnectionError(
                    f"{self.provider}: nothing answered at {self.shown_url} (the connection was refused or the "
                    f"host could not be found). {self.hints.unreachable_fix}",
                    provider=self.provider, base_url=self.shown_url,
                ) from exc
            except httpx.TransportError:
                # The connection dropped before any response: safe to send again.
                error = self._unavailable(None, attempt, None)
                wait = self._backoff(attempt)
            if wait is None or attempt > self.limits.max_retries:
                raise error
            await asyncio.sleep(wait)

    async def _read(self, response: httpx.Response, body: dict[str, Any], framing: str, decode: Decoder,
                    parser: StreamParser | None, attempt: int) -> LLMResponse:
        status = response.status_code
        received: Any = None
        try:
            if parser is None:
                received = _load(await response.aread())
                reply = decode(received)
            else:
                received = []
                frames = _sse if framing == "sse" else _ndjson
                async for event, text in frames(response.aiter_lines()):
                    data = _decode_event(text)
                    received.append({"event": event, "data": data} if event is not None else data)
                    parser.feed(event, data)
                reply = parser.finish()
        except Missing as missing:
            wire = self._record(response, body, self._scrub(received), attempt)
            raise self._unreadable(status, missing.what, missing.retryable, wire) from None
        except ServerError as failure:
            wire = self._record(response, body, self._scrub(received), attempt)
            error, _ = self._classify(None, failure.payload, wire, attempt, None)
            raise error from None
        except httpx.TimeoutException as exc:
            raise self._timeout_error(exc, attempt) from None
        except httpx.TransportError:
            wire = self._record(response, body, received, attempt)
            raise self._unreadable(status, "the end of the reply (the connection closed mid-reply)", True,
                                   wire) from None
        reply.wire = self._record(response, body, received, attempt)
        return reply

    # -- recording -------------------------------------------------------------------------
    def _record(self, response: httpx.Response, body: dict[str, Any], received: Any,
                attempt: int) -> dict[str, Any]:
        request = response.request
        return {
            "request": {"method": request.method, "url": display_url(str(request.url)),
                        "headers": safe_headers(request.headers), "body": body},
            "response": {"status": response.status_code, "headers": safe_headers(response.headers),
                         "body": received},
            "attempts": attempt,
        }

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

    # -- failures --------------------------------------------------------------------------
    def _backoff(self, attempt: int) -> float:
        base = self.limits.retry_backoff * 2 ** (attempt - 1)
        return min(base * (0.75 + random.random() / 2), self.limits.max_retry_wait)

    def _failure(self, response: httpx.Response, wire: dict[str, Any],
                 attempt: int) -> tuple[ProviderError, float | None]:
        return self._classify(response.status_code, wire["response"]["body"], wire, attempt,
                              retry_after(response.headers))

    def _classify(self, status: int | None, payload: Any, wire: dict[str, Any], attempt: int,
                  asked: float | None) -> tuple[ProviderError, float | None]:
        """The typed error for a failed reply, and how long to wait before retrying (``None``: don't)."""
        kind, code, text = error_fields(payload)
        ident = code or kind
        label = f"HTTP {status}" if status is not None else "an error event in the stream"
        detail = f"{label}, {ident}" if ident else label
        lowered = text.lower()
        p, hints, model = self.provider, self.hints, str(wire["request"]["body"].get("model"))
        if status in (401, 403):
            if status == 401:
                fix = (f"Check that {hints.env_var} (or api_key=...) holds a current key for this service, and that "
                       "base_url points at the service the key was issued for."
                       if hints.env_var else "If the server sits behind a gateway that needs a key, pass it in "
                       "headers=....")
                message = f"{p}: the server at {self.shown_url} rejected the credentials ({detail}). {fix}"
            else:
                message = (f"{p}: the server at {self.shown_url} refused this request ({detail}): the key is not "
                           f"allowed to use model '{model}' or this endpoint. Check the key's project or "
                           "workspace permissions, or choose a model the key may use.")
            return ProviderAuthError(message, provider=p, status=status, env_var=hints.env_var, wire=wire), None
        if status == 404:
            if ident in ("model_not_found", "not_found_error") or "model" in lowered:
                return ModelNotFoundError(
                    f"{p}: model '{model}' was not found at {self.shown_url} ({detail}). "
                    + hints.model_fix.format(model=model),
                    provider=p, model=model, base_url=self.shown_url, status=status, wire=wire,
                ), None
            return ProviderRequestError(
                f"{p}: {self.shown_url} has no such endpoint ({detail}). {hints.endpoint_fix}",
                provider=p, status=status, error_type=ident, wire=wire,
            ), None
        if ident == "insufficient_quota":
            return ProviderRateLimitError(
                f"{p}: the account's quota is used up ({detail}). Waiting will not help: check the plan and "
                f"billing of the key{' in ' + hints.env_var if hints.env_var else ''}.",
                provider=p, status=status, attempts=attempt, retry_after=asked, retryable=False, wire=wire,
            ), None
        if status == 429 or ident == "rate_limit_error":
            return self._rate_limited(status, detail, attempt, asked, wire)
        if ident == "context_length_exceeded" or any(marker in lowered for marker in _CONTEXT_MARKERS):
            return ContextWindowError(
                f"{p}: the conversation no longer fits the context window of model '{model}' ({detail}). "
                "Sending it again would fail the same way: shorten the system prompt or the tool results, keep "
                f"fewer turns, or choose a model with a longer context.{hints.context_fix}",
                provider=p, model=model, status=status, wire=wire,
            ), None
        if status is None or status in (408, 409) or status >= 500:
            error = self._unavailable(status, attempt, wire)
            return error, (None if status is None else self._wait(attempt, asked))
        return ProviderRequestError(
            f"{p}: the server rejected the request ({detail}). Sending it again would be rejected the same way; "
            "the full response (keys excluded) is on this error's .wire attribute.",
            provider=p, status=status, error_type=ident, wire=wire,
        ), None

    def _wait(self, attempt: int, asked: float | None) -> float | None:
        if asked is None:
            return self._backoff(attempt)
        return asked if asked <= self.limits.max_retry_wait else None

    def _rate_limited(self, status: int | None, detail: str, attempt: int, asked: float | None,
                      wire: dict[str, Any]) -> tuple[ProviderError, float | None]:
        p = self.provider
        wait = self._wait(attempt, asked)
        if wait is None and asked is not None:
            message = (f"{p}: rate limited ({detail}) and the server asked to wait {asked:.0f} s, longer than "
                       f"max_retry_wait ({self.limits.max_retry_wait:g} s), so the call was not retried. Run again "
                       "later, or raise max_retry_wait=... on the provider.")
        else:
            asked_text = f"; the server last asked to wait {asked:g} s" if asked is not None else ""
            message = (f"{p}: still rate limited ({detail}) after {attempt} attempts{asked_text}. Wait and "
                       "run again, run fewer calls at once, or raise max_retries=... on the provider.")
        return ProviderRateLimitError(message, provider=p, status=status, attempts=attempt, retry_after=asked,
                                      wire=wire), wait

    def _unavailable(self, status: int | None, attempt: int, wire: dict[str, Any] | None) -> ProviderError:
        what = f"HTTP {status}" if status is not None else "the connection was dropped before a response"
        if status is None and wire is not None:
            what = "the server sent an error event mid-reply"
        tries = f"{attempt} time{'s' if attempt != 1 else ''}"
        return ProviderUnavailableError(
            f"{self.provider}: the server at {self.shown_url} failed {tries} (last: {what}). The fault is on "
            "the server's side: run again in a moment, or raise max_retries=... on the provider.",
            provider=self.provider, status=status, attempts=attempt, wire=wire,
        )

    def _timeout_error(self, exc: httpx.TimeoutException, attempt: int) -> ProviderError:
        p, url, limits = self.provider, self.shown_url, self.limits
        if isinstance(exc, httpx.ConnectTimeout):
            return ProviderTimeoutError(
                f"{p}: no connection to {url} within {limits.connect_timeout:g} s (connect timeout, {attempt} "
                "attempts). The host may be down or a firewall may drop the connection: check base_url, or "
                "raise connect_timeout=....",
                provider=p, phase="connect", timeout=limits.connect_timeout, attempts=attempt,
            )
        if isinstance(exc, httpx.PoolTimeout):
            return ProviderTimeoutError(
                f"{p}: every pooled connection stayed busy for {limits.timeout:g} s (pool timeout). Run fewer "
                "calls at once, or raise max_connections=....",
                provider=p, phase="pool", timeout=limits.timeout, attempts=attempt,
            )
        if isinstance(exc, httpx.WriteTimeout):
            return ProviderTimeoutError(
                f"{p}: the request could not be sent to {url} within {limits.timeout:g} s (write timeout). "
                "Check the connection, or raise timeout=....",
                provider=p, phase="write", timeout=limits.timeout, attempts=attempt,
            )
        return ProviderTimeoutError(
            f"{p}: the server at {url} sent nothing for {limits.timeout:g} s (read timeout) and the call was "
            "abandoned. A large model or a long answer may need longer: raise timeout=...; a local model that "
            "is still loading usually answers on the next try.",
            provider=p, phase="read", timeout=limits.timeout, attempts=attempt,
        )

    def _unreadable(self, status: int, what: str, retryable: bool, wire: dict[str, Any]) -> ProviderError:
        tail = ("Running again usually works." if retryable else
                "The server does not speak this provider's wire format: check base_url and the provider chosen.")
        return ProviderResponseError(
            f"{self.provider}: the reply from {self.shown_url} (HTTP {status}) could not be read: {what} was "
            f"missing. {tail}",
            provider=self.provider, status=status, missing=what, retryable=retryable, wire=wire,
        )


def _decode_event(text: str) -> Any:
    """A stream event's data: a JSON object, or the text itself (a sentinel such as ``[DONE]``)."""
    if text.startswith("{"):
        try:
            return json.loads(text)
        except ValueError:
            raise Missing("valid JSON in a stream event", retryable=True) from None
    return text


def require(payload: Any, *keys: str | int) -> Any:
    """``payload[k1][k2]...``, or :class:`Missing` naming the first absent key."""
    value = payload
    walked: list[str] = []
    for key in keys:
        walked.append(str(key))
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            raise Missing(".".join(walked)) from None
    return value


def parse_args(raw: Any, tool_name: str) -> dict[str, Any]:
    """Tool-call arguments as a dict, from a JSON string or an object."""
    if isinstance(raw, dict):
        return raw
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    raise Missing(f"valid JSON object arguments for the call to tool '{tool_name}'", retryable=True)
