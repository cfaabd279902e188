"""What can go wrong between a provider and the model server, each named with its fix.

Rule kept here: a provider failure never reaches the caller as a raw ``httpx`` exception, a
status number or a traceback into JSON parsing. It arrives as one of the classes below,
with a stable ``code``, typed fields, a message that says what to change, and
``retryable``: whether calling again (a retry, or resuming a run from its checkpoint) can
help. Authentication, a missing model, a request the server rejects and a context window
overflow answer ``False``: the same request would fail the same way.

No message ever contains an API key or the caller's conversation. A server's own error
text can echo the request, so it is not quoted either; the status, the server's error type
and code (identifiers) are, and the full exchange that failed (keys excluded) rides on the
error's ``wire`` attribute for whoever needs to look.

The missing-key and configuration errors fire when a provider is built, before anything
is sent: they are :class:`Refusal` s. The others fire during a call, after the bounded
retries the wire makes for rate limits, overloaded servers and dropped connections: a
request was sent (and may have been charged), so they are :class:`RunFailure` s. All of
them are a :class:`ProviderError`, so one ``except ProviderError`` still catches the family.
"""

from __future__ import annotations

from typing import Any, ClassVar

from footprint_lab.base.refusal import CodedError, Refusal, RunFailure


class ProviderError(CodedError):
    """Base of every provider error; carries ``provider``, ``status`` and ``retryable``.

    Each concrete class is also a :class:`Refusal` (built wrong, nothing sent) or a
    :class:`RunFailure` (a call was made and failed)."""

    code = "ERR_PROVIDER"
    fields: ClassVar[tuple[str, ...]] = ("provider", "status", "retryable")
    #: Whether a retry or a resume from the run's checkpoint can help (the class default).
    retryable: bool = False

    def __init__(
        self, message: str, *, provider: str, status: int | None = None, retryable: bool | None = None,
        wire: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.status = status
        if retryable is not None:
            self.retryable = retryable
        #: The failed exchange as sent and received (keys excluded), when a response arrived.
        self.wire = wire


class MissingApiKeyError(ProviderError, Refusal, ValueError):
    """Raised when a provider for a hosted service is built without an API key.

    ``env_var`` names the environment variable that was read. Nothing was sent.
    """

    code = "ERR_PROVIDER_MISSING_KEY"
    fields = ("provider", "env_var")

    def __init__(self, provider: str, env_var: str) -> None:
        super().__init__(
            f"{provider}: no API key. Set the environment variable {env_var} (for example in your shell "
            f"or a .env file loaded before the provider is built), or pass api_key=... to {provider}(...). "
            "A server of your own that needs no key is reached by passing its base_url instead. "
            "Nothing was sent.",
            provider=provider,
        )
        self.env_var = env_var


class ProviderConfigError(ProviderError, Refusal, ValueError):
    """Raised when a provider is built with a setting no call could use.

    ``setting`` is the keyword at fault, ``received`` its shape (never its value).
    """

    code = "ERR_PROVIDER_CONFIG"
    fields = ("provider", "setting", "received")

    def __init__(self, provider: str, setting: str, received: str, fix: str) -> None:
        super().__init__(f"{provider}: '{setting}' {fix} (received {received}).", provider=provider)
        self.setting = setting
        self.received = received


class ProviderAuthError(ProviderError, RunFailure):
    """Raised on HTTP 401 (key rejected) or 403 (key not allowed this model or endpoint).

    ``env_var`` names where the key is read from. The key itself is never shown.
    """

    code = "ERR_PROVIDER_AUTH"
    fields = ("provider", "status", "env_var", "retryable")

    def __init__(self, message: str, *, provider: str, status: int, env_var: str | None,
                 wire: dict[str, Any] | None = None) -> None:
        super().__init__(message, provider=provider, status=status, wire=wire)
        self.env_var = env_var


class ModelNotFoundError(ProviderError, RunFailure):
    """Raised when the server says the configured model does not exist there (HTTP 404)."""

    code = "ERR_PROVIDER_MODEL_NOT_FOUND"
    fields = ("provider", "model", "base_url", "status", "retryable")

    def __init__(self, message: str, *, provider: str, model: str, base_url: str, status: int | None,
                 wire: dict[str, Any] | None = None) -> None:
        super().__init__(message, provider=provider, status=status, wire=wire)
        self.model = model
        self.base_url = base_url


class ContextWindowError(ProviderError, RunFailure):
    """Raised when the conversation no longer fits the model's context window. Never retried."""

    code = "ERR_PROVIDER_CONTEXT_WINDOW"
    fields = ("provider", "model", "status", "retryable")

    def __init__(self, message: str, *, provider: str, model: str, status: int | None,
                 wire: dict[str, Any] | None = None) -> None:
        super().__init__(message, provider=provider, status=status, wire=wire)
        self.model = model


class ProviderRequestError(ProviderError, RunFailure):
    """Raised when the server rejects the request itself (400, 413, 422, a redirect, an unknown endpoint).

    ``error_type`` is the server's own error type or code, when it sent one.
    """

    code = "ERR_PROVIDER_REQUEST"
    fields = ("provider", "status", "error_type", "retryable")

    def __init__(self, message: str, *, provider: str, status: int | None, error_type: str | None,
                 wire: dict[str, Any] | None = None) -> None:
        super().__init__(message, provider=provider, status=status, wire=wire)
        self.error_type = error_type


class ProviderRateLimitError(ProviderError, RunFailure):
    """Raised on HTTP 429 once the bounded retries are spent, or at once for a spent quota.

    ``attempts`` counts the requests made; ``retry_after`` is the wait the server last asked
    for, in seconds, when it said.
    """

    code = "ERR_PROVIDER_RATE_LIMITED"
    fields = ("provider", "status", "attempts", "retry_after", "retryable")
    retryable = True

    def __init__(self, message: str, *, provider: str, status: int | None, attempts: int,
                 retry_after: float | None, retryable: bool = True, wire: dict[str, Any] | None = None) -> None:
        super().__init__(message, provider=provider, status=status, retryable=retryable, wire=wire)
        self.attempts = attempts
        self.retry_after = retry_after


class ProviderUnavailableError(ProviderError, RunFailure):
    """Raised when the server keeps failing (5xx, overloaded, connection reset) past the retries.

    ``status`` is ``None`` when the connection dropped before any status arrived.
    """

    code = "ERR_PROVIDER_UNAVAILABLE"
    fields = ("provider", "status", "attempts", "retryable")
    retryable = True

    def __init__(self, message: str, *, provider: str, status: int | None, attempts: int,
                 wire: dict[str, Any] | None = None) -> None:
        super().__init__(message, provider=provider, status=status, wire=wire)
        self.attempts = attempts


class ProviderTimeoutError(ProviderError, RunFailure):
    """Raised when a phase of the call ran out of time.

    ``phase`` is ``connect`` (no connection in time), ``read`` (the server went quiet),
    ``write`` (the request could not be sent), ``pool`` (every pooled connection was busy) or
    ``deadline`` (the call outlived the provider's ``deadline``, the server keeping it alive
    without ending its reply); ``timeout`` is the limit in seconds that ran out.
    """

    code = "ERR_PROVIDER_TIMEOUT"
    fields = ("provider", "phase", "timeout", "attempts", "retryable")
    retryable = True

    def __init__(self, message: str, *, provider: str, phase: str, timeout: float | None, attempts: int) -> None:
        super().__init__(message, provider=provider)
        self.phase = phase
        self.timeout = timeout
        self.attempts = attempts


class ProviderConnectionError(ProviderError, RunFailure):
    """Raised when nothing answers at the provider's URL (connection refused, unknown host).

    ``base_url`` is where the provider looked (scheme, host, port and path; never credentials).
    """

    code = "ERR_PROVIDER_UNREACHABLE"
    fields = ("provider", "base_url", "retryable")
    retryable = True

    def __init__(self, message: str, *, provider: str, base_url: str) -> None:
        super().__init__(message, provider=provider)
        self.base_url = base_url


class ProviderResponseError(ProviderError, RunFailure):
    """Raised when a response body is malformed, was cut short, or passed a bound.

    ``missing`` names what was missing or unreadable (``choices``, ``the end of the stream``,
    ``valid JSON arguments for a tool call``, a reply in the wire's shape, a reply within
    ``max_reply_bytes`` or nested at most 100 levels deep); a value of the wrong kind is named by
    its kind, never quoted. ``retryable`` is true when the body was cut
    off or the model produced unreadable output, false when a complete body lacked a field.
    """

    code = "ERR_PROVIDER_RESPONSE"
    fields = ("provider", "status", "missing", "retryable")

    def __init__(self, message: str, *, provider: str, status: int | None, missing: str, retryable: bool,
                 wire: dict[str, Any] | None = None) -> None:
        super().__init__(message, provider=provider, status=status, retryable=retryable, wire=wire)
        self.missing = missing


__all__ = [
    "ContextWindowError",
    "MissingApiKeyError",
    "ModelNotFoundError",
    "ProviderAuthError",
    "ProviderConfigError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderRateLimitError",
    "ProviderRequestError",
    "ProviderResponseError",
    "ProviderTimeoutError",
    "ProviderUnavailableError",
]
