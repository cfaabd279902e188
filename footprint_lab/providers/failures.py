"""How a failed call is named: which typed error, with which fix, and whether to try again.

Rule kept here: the status, the server's error type and code, and the kind of transport
failure decide the class; the server's own error text is only searched (for a model that
does not exist, or a context window overflow), never quoted. Each message ends with the
provider's own fix (:class:`Hints`). Whether to retry is decided here too: 429 and
408/409/5xx are retried after the wait the server asks for (``Retry-After``,
``retry-after-ms``) or an exponential backoff with jitter, never longer than
``max_retry_wait``; a reply cut short is retried after the same backoff (the wire decides
when: :mod:`~footprint_lab.providers._http`); everything the same request would hit again
is not.
"""

from __future__ import annotations

import contextlib
import json
import random
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from time import time
from typing import Any

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

_CONTEXT_MARKERS = (
    "context length", "context_length", "context window", "context size", "context_window",
    "prompt is too long", "maximum context", "exceeds the available context", "too many tokens in the prompt",
)


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
    """Timeouts (seconds), retry bounds, pool size and reply size bound of one provider."""

    timeout: float
    connect_timeout: float
    deadline: float
    max_reply_bytes: int
    max_retries: int
    retry_backoff: float
    max_retry_wait: float
    max_connections: int
    max_concurrency: int


def display_url(url: str) -> str:
    """A URL as safe to show: scheme, host, port and path; never user info or query."""
    parsed = httpx.URL(url)
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.scheme}://{parsed.host}{port}{parsed.path.rstrip('/')}"


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


def retry_after(headers: httpx.Headers) -> float | None:
    """The wait, in seconds, a response asks for (``retry-after-ms`` or ``Retry-After``)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        with contextlib.suppress(ValueError):  # not a number: fall back to Retry-After
            return max(float(millis) / 1000, 0.0)
    value = headers.get("retry-after")
    if value is None:
        return None
    with contextlib.suppress(ValueError):  # not seconds: an HTTP date, below
        return max(float(value), 0.0)
    try:
        return max(parsedate_to_datetime(value).timestamp() - time(), 0.0)
    except (TypeError, ValueError):
        return None


class Failures:
    """The error-naming half of a wire: needs ``provider``, ``shown_url``, ``hints`` and ``limits``."""

    provider: str
    shown_url: str
    hints: Hints
    limits: Limits

    def _backoff(self, attempt: int) -> float:
        base: float = self.limits.retry_backoff * 2 ** (attempt - 1)
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
        if status is not None and 300 <= status < 400:
            location = wire["response"]["headers"].get("location")
            target = f" to {display_url(location)}" if location and location.startswith(("http://", "https://")) else ""
            return ProviderRequestError(
                f"{p}: the server at {self.shown_url} redirected the call ({detail}){target}. A call is never "
                "sent on to another address: put the address the server names in base_url (an https:// URL "
                "where http:// was given, say).",
                provider=p, status=status, error_type=ident, wire=wire,
            ), None
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

    def _deadline_error(self, attempt: int) -> ProviderError:
        deadline = self.limits.deadline
        return ProviderTimeoutError(
            f"{self.provider}: the call to {self.shown_url} was still unfinished after {deadline:g} s (its deadline, "
            f"{attempt} attempt{'s' if attempt != 1 else ''}) and was abandoned: the server kept the connection "
            "alive (keep-alives, or a reply trickling in) without ending its reply. A model that needs longer for "
            "one reply needs a longer deadline: raise deadline=... on the provider.",
            provider=self.provider, phase="deadline", timeout=deadline, attempts=attempt,
        )

    def _unreadable(self, status: int, what: str, retryable: bool, wire: dict[str, Any],
                    fix: str | None = None, *, attempts: int = 1, problem: str | None = None) -> ProviderError:
        """A reply that could not be read: ``what`` was missing (or, said whole, ``problem`` was wrong with it)."""
        tail = fix or ("Running again usually works." if retryable else
                       "The server does not speak this provider's wire format: check base_url and the provider "
                       "chosen.")
        tries = f" (the last of {attempts} attempts)" if attempts > 1 else ""
        return ProviderResponseError(
            f"{self.provider}: the reply from {self.shown_url} (HTTP {status}) could not be read{tries}: "
            f"{problem or what + ' was missing'}. {tail}",
            provider=self.provider, status=status, missing=what, retryable=retryable, wire=wire,
        )

    def _unreachable(self) -> ProviderError:
        return ProviderConnectionError(
            f"{self.provider}: nothing answered at {self.shown_url} (the connection was refused or the "
            f"host could not be found). {self.hints.unreachable_fix}",
            provider=self.provider, base_url=self.shown_url,
        )
