"""What a provider's wire format plugs into the HTTP path, and what its reader raises on a faulty reply.

Rule kept here: a wire format reads replies and nothing else. It hands the wire a decoder of a
whole reply (:data:`Decoder`) or a factory of stream parsers (:data:`ParserFactory`, a fresh
:class:`StreamParser` per attempt), and says what is wrong with a reply by raising
:class:`Missing` (something absent, of the wrong kind, too long or too deep: named by its kind,
never quoted; ``cut`` when the server cut it short) or :class:`ServerError` (an error in place of
a reply); the wire turns either into a typed :mod:`footprint_lab.providers.errors` class. JSON is
read no deeper than :data:`~footprint_lab.base.saved_json.MAX_NESTING` levels, arguments of a
tool call included.

Role: providers layer; read by the wire formats (:mod:`footprint_lab.providers._openai`,
:mod:`footprint_lab.providers._anthropic`, :mod:`footprint_lab.providers._ollama`) and by
:mod:`footprint_lab.providers._http`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from footprint_lab.base.saved_json import MAX_NESTING, nesting
from footprint_lab.base.unicode import sound
from footprint_lab.providers.types import LLMResponse, TokenCallback


class Missing(Exception):
    """Raised by a wire format when a reply lacks something; the wire turns it into a typed error.

    ``fix`` replaces the error message's usual last sentence when the wire knows better;
    ``problem`` replaces its "<what> was missing" when the reply had something wrong rather
    than missing. ``cut`` says the reply ended before its end (the server cut it short): the
    wire sends the request again while no streamed text has reached the run, and it is
    retryable either way.
    """

    def __init__(self, what: str, *, retryable: bool = False, cut: bool = False, fix: str | None = None,
                 problem: str | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.retryable = retryable or cut
        self.cut = cut
        self.fix = fix
        self.problem = problem


#: What a reply of the wrong shape is named by (``ProviderResponseError.missing``).
WRONG_SHAPE = "a reply in the shape the wire defines"
_OTHER_PROTOCOL = "The server does not speak this provider's wire format: check base_url and the provider chosen."


def wrong_shape(found: object | None = None) -> Missing:
    """The failure of a reply holding a value of the wrong kind; ``found`` (when known) is the value, named by its
    kind only."""
    kinds = {str: "a string", int: "a number", float: "a number", bool: "true or false", list: "a list",
             dict: "an object", type(None): "null"}
    what = f"{kinds.get(type(found), 'a value')} where the wire has another kind of value" if found is not None \
        else "a value of another kind than the wire has there"
    return Missing(WRONG_SHAPE, problem=f"it held {what}", fix=_OTHER_PROTOCOL)


def too_large(limit: int) -> Missing:
    """The failure of a reply longer than ``max_reply_bytes``."""
    return Missing(f"a reply within max_reply_bytes ({limit:,} bytes)",
                   problem=f"it ran past max_reply_bytes ({limit:,} bytes) and was abandoned there",
                   fix="A reply this long is a server that does not stop: check base_url; if such replies are "
                       "expected, raise max_reply_bytes=... on the provider.")


def too_deep() -> Missing:
    """The failure of a reply whose JSON nests deeper than :data:`MAX_NESTING` levels."""
    return Missing(f"a reply nested at most {MAX_NESTING} levels deep",
                   problem=f"its JSON nests deeper than {MAX_NESTING} levels", fix=_OTHER_PROTOCOL)


class ServerError(Exception):
    """Raised by a wire format when a reply is an error event or error body in place of a reply."""

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

#: A fresh :class:`StreamParser` for one attempt, handing text deltas to the callback given.
ParserFactory = Callable[[TokenCallback | None], StreamParser]


def read_json(raw: str | bytes) -> Any:
    """``raw`` parsed, made sound; ``ValueError`` when it is no JSON, :class:`Missing` past :data:`MAX_NESTING`."""
    try:
        value = json.loads(raw)
    except RecursionError:  # deeper than the parser reaches: deeper than the bound anyway
        raise too_deep() from None
    brackets = raw.count("[") + raw.count("{") if isinstance(raw, str) else raw.count(b"[") + raw.count(b"{")
    if brackets > MAX_NESTING and nesting(value) > MAX_NESTING:  # fewer brackets cannot nest deeper
        raise too_deep()
    return sound(value)  # a JSON \\u escape can decode to a lone surrogate: see base.unicode


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
            value = read_json(raw)  # arguments nested past MAX_NESTING fail like a reply that does
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    raise Missing(f"valid JSON object arguments for the call to tool '{tool_name}'", retryable=True)
