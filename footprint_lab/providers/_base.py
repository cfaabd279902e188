"""What every real provider shares: its settings door, the call, and the neutral vocabulary.

Rule kept here: a provider's settings are judged when it is built, before anything is
sent. A keyword that is no setting is refused by name, never by value, with where it
belongs: a generation setting (``temperature``, ``top_p``, ``seed``...) goes in
``options={...}``, a misspelt setting gets the real name closest to it. A hosted service's
key is read once, from the argument or its environment variable, and a provider aimed at the
hosted service without one is refused right there with the variable's name (a server of
one's own, reached through another ``base_url``, may need no key). The key then lives only
in the client's headers (never in ``repr``, an error, or a recording).

The call itself is the same for every wire: encode the neutral request, send it over the
shared :class:`~footprint_lab.providers._http.Wire`, assemble the reply (streamed or whole),
and hand it back with the exchange recorded on ``LLMResponse.wire``.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, TypedDict, TypeVar

from footprint_lab.base.refusal import describe_shape, nearest
from footprint_lab.providers._http import Wire
from footprint_lab.providers._wire_format import StreamParser
from footprint_lab.providers.errors import MissingApiKeyError, ProviderConfigError
from footprint_lab.providers.failures import Hints, Limits
from footprint_lab.providers.types import LLMRequest, LLMResponse, TokenCallback

#: Stop reasons in the neutral vocabulary (the wires' own words are mapped onto these).
STOP_REASONS = {
    "stop": "end_turn", "end_turn": "end_turn", "eos": "end_turn",
    "tool_calls": "tool_use", "function_call": "tool_use", "tool_use": "tool_use",
    "length": "max_tokens", "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence", "content_filter": "content_filter", "refusal": "refusal",
}


def stop_reason(raw: Any, has_tool_calls: bool) -> str | None:
    """A wire's stop reason in the neutral vocabulary; unknown reasons pass through as they are."""
    if has_tool_calls and raw in (None, "stop", "end_turn", "tool_calls", "function_call", "tool_use"):
        return "tool_use"
    if raw is None:
        return None
    return STOP_REASONS.get(str(raw), str(raw))


def call_id(request: LLMRequest, position: int) -> str:
    """The id given to a tool call the wire sent without one (unique within a run)."""
    return f"call_{request.call_index + 1}_{position + 1}"


def function_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool definitions in the ``{"type": "function", ...}`` shape (OpenAI and Ollama)."""
    return [
        {"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                          "parameters": t.get("input_schema") or {"type": "object", "properties": {}}}}
        for t in tools
    ]


#: ``deadline``: the longest one call may take from the moment it is sent, in seconds, retries included.
DEFAULT_DEADLINE = 600.0
#: ``max_reply_bytes``: the most of one reply that is read (16 MiB).
DEFAULT_MAX_REPLY_BYTES = 16 * 1024 * 1024

#: ``max_concurrency`` for a provider aimed at its own hosted service (any other server: 1).
HOSTED_CONCURRENCY = 16

#: Generation settings a wire reads from the request body: they travel in ``options={...}``.
GENERATION_SETTINGS = frozenset({
    "temperature", "top_p", "top_k", "min_p", "typical_p", "seed", "stop", "stop_sequences", "n",
    "presence_penalty", "frequency_penalty", "repeat_penalty", "repetition_penalty", "logit_bias",
    "response_format", "tool_choice", "parallel_tool_calls", "max_completion_tokens", "reasoning_effort",
    "thinking", "metadata", "user", "num_ctx", "num_predict", "mirostat", "keep_alive",
})


class Settings(TypedDict, total=False):
    """The settings every real provider takes (see :class:`HttpProvider`); a factory takes the model first."""

    model: str
    api_key: str | None
    base_url: str | None
    stream: bool
    max_tokens: int | None
    options: Mapping[str, Any] | None
    headers: Mapping[str, str] | None
    timeout: float
    connect_timeout: float
    deadline: float
    max_reply_bytes: int
    max_retries: int
    retry_backoff: float
    max_retry_wait: float
    max_connections: int
    max_concurrency: int | None
    logprobs: int | None


P = TypeVar("P", bound="HttpProvider")


class HttpProvider(ABC):
    """Base of the real providers; subclasses give the wire format.

    ``model`` is the model every call asks for (an ``Agent`` built on the provider takes it
    as its own unless it names another, and the model the run names is what is sent).
    ``api_key`` defaults to the provider's environment variable; ``base_url`` points the
    provider at another server (a gateway, a proxy, a local model). ``stream`` (on by
    default) delivers text to the run as it arrives. ``max_tokens`` caps each reply.
    ``options`` are extra generation settings sent with every call (``{"temperature": 0}``);
    ``headers`` extra HTTP headers (never recorded when their name suggests a credential).
    ``timeout`` is the longest silence while reading and ``connect_timeout`` the longest
    wait for a connection, in seconds; ``deadline`` the longest a whole call may take once it
    is sent, retries included, however the server keeps the connection alive (keep-alive
    comments, a reply trickling in: :data:`DEFAULT_DEADLINE`); ``max_reply_bytes`` the most
    of one reply that is read before the call fails (:data:`DEFAULT_MAX_REPLY_BYTES`);
    ``max_retries``, ``retry_backoff`` and
    ``max_retry_wait`` bound the retries of rate-limited or failing calls;
    ``max_connections`` sizes the connection pool every run of this provider shares.
    ``max_concurrency`` caps how many requests are in flight at once to this provider's
    endpoint (scheme, host and port), across every run, loop and thread, and across every
    provider object aimed at the same endpoint: they share one gate in the process, so a
    fresh provider built for each rerun still waits its turn. When providers aimed at one
    endpoint ask for different limits, the smallest among those still alive holds (the
    strictest wins; a provider that is dropped no longer counts); the others wait their
    turn. Left ``None`` it is :data:`HOSTED_CONCURRENCY` for the provider's own hosted
    service and 1 for any other server (a local model, a gateway, a self-hosted one), since
    many local servers serve one request at a time and some cut a reply short when a second
    one arrives; raise it, on every provider aimed at it, for a server known to batch (vLLM,
    a hosted gateway). A reply the server cut short is sent again (within ``max_retries``)
    while none of its text has reached the run.
    ``logprobs=n`` asks for each generated token's log-probability with the ``n`` likeliest
    alternatives (0-20), so the recording can say how close each tool choice was
    (``footprint_lab.explain.checks.tool_choice``); a wire that reports none refuses it.
    """

    name: ClassVar[str] = "http"
    #: Where the key is read from when none is passed (``None``: the wire takes no key).
    key_env: ClassVar[str | None] = None
    #: Whether the default service refuses calls without a key.
    key_required: ClassVar[bool] = True
    base_url_env: ClassVar[str | None] = None
    default_base_url: ClassVar[str] = ""
    path: ClassVar[str] = ""
    #: How a streamed reply is framed: ``sse`` (server-sent events) or ``ndjson``.
    framing: ClassVar[str] = "sse"
    #: Whether the wire can report log-probabilities of generated tokens.
    has_logprobs: ClassVar[bool] = True
    #: Request-body keys the provider owns; ``options`` may not set them.
    reserved: ClassVar[frozenset[str]] = frozenset({"model", "messages", "stream", "tools", "system"})

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        stream: bool = True,
        max_tokens: int | None = None,
        options: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        connect_timeout: float = 10.0,
        deadline: float = DEFAULT_DEADLINE,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        max_retries: int = 2,
        retry_backoff: float = 0.5,
        max_retry_wait: float = 20.0,
        max_connections: int = 100,
        max_concurrency: int | None = None,
        logprobs: int | None = None,
        **unknown: object,
    ) -> None:
        p = self.name
        if unknown:
            raise unknown_setting(p, unknown)
        if not isinstance(model, str) or not model.strip():
            raise ProviderConfigError(p, "model", describe_shape(model),
                                      f"must name the model to call, e.g. {p}(model='...')")
        url = self._base_url(base_url)
        if not isinstance(stream, bool):
            raise ProviderConfigError(p, "stream", describe_shape(stream), "must be True or False")
        if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int)
                                       or max_tokens < 1):
            raise ProviderConfigError(p, "max_tokens", describe_shape(max_tokens),
                                      "must be a whole number of at least 1, or None")
        if logprobs is not None and (isinstance(logprobs, bool) or not isinstance(logprobs, int)
                                     or not 0 <= logprobs <= 20):
            raise ProviderConfigError(p, "logprobs", describe_shape(logprobs),
                                      "must be how many alternatives to report per token, 0 to 20, or None")
        if logprobs is not None and not self.has_logprobs:
            raise ProviderConfigError(p, "logprobs", "a number", f"is not reported by the {p} API; leave it unset "
                                      "(the answer view then names the tools that read alike instead)")
        if max_concurrency is None:
            hosted = url == self.default_base_url and self.key_required
            max_concurrency = HOSTED_CONCURRENCY if hosted else 1
        limits = _limits(p, timeout=timeout, connect_timeout=connect_timeout, deadline=deadline,
                         max_reply_bytes=max_reply_bytes, max_retries=max_retries,
                         retry_backoff=retry_backoff, max_retry_wait=max_retry_wait,
                         max_connections=max_connections, max_concurrency=max_concurrency)
        self.model = model
        self.base_url = url
        self.stream = stream
        self.max_tokens = max_tokens
        self.logprobs = logprobs
        self.max_concurrency = max_concurrency
        self.options = self._check_options(options)
        wire_headers = _check_headers(p, headers)
        wire_headers.update(self._auth_headers(self._api_key(api_key, own_server=url != self.default_base_url)))
        self._wire = Wire(provider=p, base_url=url, headers=wire_headers, limits=limits,
                          hints=self.hints())

    # -- the settings door -------------------------------------------------------------------
    def _base_url(self, base_url: str | None) -> str:
        url = base_url
        if url is None and self.base_url_env:
            url = os.environ.get(self.base_url_env) or None
        url = url if url is not None else self.default_base_url
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            shown = "a string that is not an http(s) URL" if isinstance(url, str) else describe_shape(url)
            raise ProviderConfigError(self.name, "base_url", shown,
                                      f"must be an http:// or https:// URL, e.g. {self.default_base_url}")
        return url.rstrip("/")

    def _api_key(self, api_key: str | None, *, own_server: bool) -> str | None:
        if self.key_env is None:
            return None
        if api_key is not None and not isinstance(api_key, str):
            raise ProviderConfigError(self.name, "api_key", describe_shape(api_key), "must be a string or None")
        key = api_key if api_key is not None else os.environ.get(self.key_env)
        if key:
            return key
        if not self.key_required or own_server:
            return None  # a server other than the hosted service may need no key
        raise MissingApiKeyError(self.name, self.key_env)

    def _auth_headers(self, key: str | None) -> dict[str, str]:
        return {"authorization": f"Bearer {key}"} if key else {}

    @abstractmethod
    def hints(self) -> Hints:
        """The sentences that end this provider's error messages."""

    def _check_options(self, options: Mapping[str, Any] | None) -> dict[str, Any]:
        if options is None:
            return {}
        if not isinstance(options, Mapping) or not all(isinstance(k, str) for k in options):
            raise ProviderConfigError(self.name, "options", describe_shape(options),
                                      "must be a dict of generation settings, e.g. {'temperature': 0}")
        clash = sorted(set(options) & self.reserved)
        if clash:
            raise ProviderConfigError(self.name, "options", f"keys the provider sets itself: {', '.join(clash)}",
                                      "may not set fields the provider builds itself "
                                      f"({', '.join(sorted(self.reserved))})")
        try:
            json.dumps(options)
        except (TypeError, ValueError):
            raise ProviderConfigError(self.name, "options", describe_shape(options),
                                      "must hold only JSON values (numbers, strings, lists, dicts)") from None
        return dict(options)

    # -- the call -----------------------------------------------------------------------------
    @abstractmethod
    def encode(self, request: LLMRequest) -> dict[str, Any]:
        """The request body for this wire."""

    @abstractmethod
    def decode(self, payload: Any, request: LLMRequest) -> LLMResponse:
        """A whole (non-streamed) reply, read."""

    @abstractmethod
    def parser(self, request: LLMRequest, on_token: TokenCallback | None) -> StreamParser:
        """A fresh assembler for one streamed reply."""

    async def complete(self, request: LLMRequest, on_token: TokenCallback | None = None) -> LLMResponse:
        """Answer one request over the wire; streamed text deltas go to ``on_token`` as they arrive."""
        body = self.encode(request)
        parser = (lambda relay: self.parser(request, relay)) if self.stream else None
        return await self._wire.call(self.path, body, framing=self.framing, parser=parser, on_token=on_token,
                                     decode=lambda payload: self.decode(payload, request))

    async def aclose(self) -> None:
        """Close the pooled connections of the running event loop's client."""
        await self._wire.aclose()

    def __repr__(self) -> str:
        # A provider whose construction was refused is half-built; its repr must still work
        # (debuggers and tracebacks show it).
        wire = getattr(self, "_wire", None)
        shown = wire.shown_url if wire is not None else None
        return (f"{type(self).__name__}(model={getattr(self, 'model', None)!r}, base_url={shown!r}, "
                f"stream={getattr(self, 'stream', None)})")


def built(cls: type[P], model: str | None, settings: Settings) -> P:
    """A provider from its factory's arguments: the model named once, as the first argument or as ``model=``."""
    if model is not None and "model" in settings:
        raise ProviderConfigError(cls.name, "model", "a model as the first argument and another as model=",
                                  f"is given twice: name the model once, e.g. {cls.name}('...')")
    chosen: Any = settings["model"] if model is None and "model" in settings else model  # the door judges it
    rest: dict[str, Any] = {k: v for k, v in settings.items() if k != "model"}
    return cls(model=chosen, **rest)


def unknown_setting(provider: str, unknown: Mapping[str, object]) -> ProviderConfigError:
    """The refusal of keywords that are no provider setting: by name, with where each belongs.

    A name is shown only when it is a short identifier (``**{...}`` can pass any string as a
    keyword, and such a string may be the caller's data); a value never is.
    """
    settings = sorted({"model", *Settings.__optional_keys__})
    name = sorted(unknown)[0]
    shown = name.isidentifier() and len(name) <= 32
    lowered = name.lower()
    close = nearest([lowered], [*settings, *sorted(GENERATION_SETTINGS)], cutoff=0.75)
    target = lowered if lowered in GENERATION_SETTINGS else close
    what = "is not a setting" if shown else "holds a keyword that is not a setting"
    if target in GENERATION_SETTINGS:
        meant = ("is a generation setting, not a provider setting" if target == lowered
                 else f"{what}; the closest name is the generation setting '{target}'")
        fix = f"{meant}: pass it in options, sent with every call, e.g. {provider}(model, options={{'{target}': ...}})"
    elif target is not None:
        fix = f"{what} of {provider}(...): did you mean '{target}'?"
    else:
        fix = (f"{what} of {provider}(...), whose settings are {', '.join(settings)}; generation settings "
               "(temperature, top_p, seed...) go in options={...}")
    others = len(unknown) - 1
    received = "a keyword the provider does not take" + (
        f", and {others} other unknown keyword{'s' if others != 1 else ''}" if others else "")
    return ProviderConfigError(provider, name if shown else "**settings", received, fix)


def _limits(provider: str, **values: Any) -> Limits:
    for name, value in values.items():
        whole = name in ("max_retries", "max_connections", "max_concurrency", "max_reply_bytes")
        lowest = 0 if name in ("max_retries", "retry_backoff") else 1 if whole else 0.001
        if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)) or value < lowest:
            kind = "a whole number" if whole else "a number of seconds"
            raise ProviderConfigError(provider, name, describe_shape(value), f"must be {kind} of at least {lowest}")
    return Limits(**values)


def _check_headers(provider: str, headers: Mapping[str, str] | None) -> dict[str, str]:
    if headers is None:
        return {}
    if not isinstance(headers, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                    for k, v in headers.items()):
        raise ProviderConfigError(provider, "headers", describe_shape(headers),
                                  "must be a dict of header names to string values")
    return dict(headers)
