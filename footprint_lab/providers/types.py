"""What a provider is handed and what it returns, independent of any wire format.

A provider is any object with an async ``complete(request, on_token=None)`` returning an
:class:`LLMResponse`. Messages are plain dicts in one neutral shape:
``{"role": "user" | "assistant" | "tool", "content": str | None}``, plus ``tool_calls``
(a list of ``{"id", "name", "args"}``) on assistant turns and ``tool_call_id`` and ``name``
on tool turns. Each wire adapter translates that shape to its own format and back.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, cast, runtime_checkable

from footprint_lab.base.refusal import describe_shape
from footprint_lab.base.saved_json import MAX_NESTING, NestingTooDeep, parse_json
from footprint_lab.base.unicode import sound, sound_text
from footprint_lab.providers.errors import ProviderResponseError

TokenCallback = Callable[[str], None]


class ToolCall(NamedTuple):
    """A tool call the model asked for."""

    id: str
    name: str
    args: dict[str, Any]


#: What a tool call's id is as a run keeps it: a short token of letters, digits and ``_ . : -``.
#: Every id the hosted wires issue is one (``call_...``, ``toolu_...``, ``functions.name:0``).
PLAIN_CALL_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


def plain_call_id(raw: Any) -> str:
    """A provider's tool-call id as the run records and sends it back: unchanged when it is a plain
    token (:data:`PLAIN_CALL_ID`), otherwise ``call_`` and 16 hex digits of its SHA-256.

    The id becomes the source id of the tool's result, shown and linked in every view, and the
    provider is sent it again with the result. One that is not a plain token (quotes, markup,
    spaces, a direction control, a megabyte) is replaced where it enters, before the run writes
    it anywhere, so it can carry nothing into a view, an attribute, a click or a file. The
    replacement is a function of the id alone: the same id gives the same token on every
    provider and rerun, distinct ids distinct tokens (but for a 64-bit chance), a plain token
    itself (a replayed recording keeps its ids). The run sends the model the replacement in
    the assistant turn and the tool result alike, so the conversation the record holds is the
    one the model saw; the id as the wire sent it stays in the exchange's ``wire`` record
    (real providers).
    """
    text = raw if isinstance(raw, str) else str(raw)
    if PLAIN_CALL_ID.fullmatch(text):
        return text
    return "call_" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class TokenChoice(NamedTuple):
    """One generated token as a provider reported it when asked for log-probabilities.

    ``logprob`` is the natural log of the probability the model gave this token; ``top`` the
    other likely tokens at the same position with theirs, most likely first (the chosen one
    may be among them).
    """

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


def token_choices(raw: Any) -> list[TokenChoice]:
    """The OpenAI-shaped token list (``[{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}]``,
    also Ollama's), as :class:`TokenChoice` items.

    Log-probabilities are evidence a provider may add, not part of the answer: an entry in
    another shape is left out rather than failing the call, and text is made sound.
    """
    choices: list[TokenChoice] = []
    for entry in raw if isinstance(raw, list) else ():
        if not isinstance(entry, dict):
            continue
        token, logprob = entry.get("token"), entry.get("logprob")
        if not isinstance(token, str) or not isinstance(logprob, int | float) or isinstance(logprob, bool):
            continue
        top = tuple((sound_text(alt["token"]), float(alt["logprob"])) for alt in entry.get("top_logprobs") or ()
                    if isinstance(alt, dict) and isinstance(alt.get("token"), str)
                    and isinstance(alt.get("logprob"), int | float) and not isinstance(alt.get("logprob"), bool))
        choices.append(TokenChoice(sound_text(token), float(logprob), top))
    return choices


@dataclass(slots=True)
class Usage:
    """Token counts for one call; ``estimated`` when no wire reported them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    estimated: bool = False

    def counted(self) -> Usage:
        """These counts as a recording holds them: each a whole number (a count given as ``12.0`` or
        ``True`` read as ``12`` or ``1``), ``estimated`` a flag; a count that is no whole number is
        not known, so it reads ``0`` and the usage ``estimated``."""
        counts = (self.input_tokens, self.output_tokens, self.cache_read_tokens, self.cache_write_tokens)
        if all(type(count) is int for count in counts) and type(self.estimated) is bool:
            return self
        taken, given, read, written = (_whole_number(count) for count in counts)
        return Usage(taken or 0, given or 0, read or 0, written or 0,
                     estimated=None in (taken, given, read, written) or self.estimated not in (False, 0))

    def as_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "estimated": self.estimated,
        }


def _whole_number(value: Any) -> int | None:
    """``value`` as a plain int when it is a whole number (a bool, an int of any class, a float with nothing
    after the point), else ``None``."""
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _floats(choice: TokenChoice) -> bool:
    return _finite(choice.logprob) and all(_finite(logprob) for _, logprob in choice.top)


def _finite(logprob: Any) -> bool:
    return type(logprob) is float and math.isfinite(logprob)


#: what a log-probability of minus infinity (a token the provider gave no chance) is kept as: JSON cannot
#: write infinity, and OpenAI's API reports such a token with this very value
NO_CHANCE = -9999.0


def _logprob(value: Any) -> float:
    """A log-probability as a finite float: minus infinity kept as :data:`NO_CHANCE`; ``ValueError`` for NaN
    or a positive infinity, which are no log-probability at all."""
    made = float(value)
    if made == -math.inf:
        return NO_CHANCE
    if not math.isfinite(made):
        raise ValueError("not a log-probability")
    return made


class MessagesView(Sequence[dict[str, Any]]):
    """A read-only view of what one call sends: the first ``length`` messages of a run's
    conversation, then ``tail`` (the messages-slot injections of that call, if any).

    The conversation only ever grows, so a view of its prefix is exactly the list that was
    sent, without copying the whole conversation for every call (which would make a long
    run quadratic); ``tail`` is a list of its own, made for that call. The view compares
    equal to a list of the same messages; ``list(view)`` copies.
    """

    __slots__ = ("_length", "_messages", "_tail")

    def __init__(self, messages: list[dict[str, Any]], length: int | None = None,
                 tail: Sequence[dict[str, Any]] = ()) -> None:
        self._messages = messages
        self._length = len(messages) if length is None else length
        self._tail = tail

    def __len__(self) -> int:
        return self._length + len(self._tail)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return list(self)[index]
        size = self._length + len(self._tail)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("message index out of range")
        return self._messages[index] if index < self._length else self._tail[index - self._length]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        messages = self._messages
        for index in range(self._length):
            yield messages[index]
        yield from self._tail

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=False))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"MessagesView({list(self)!r})"


@dataclass(slots=True)
class LLMRequest:
    """One call's request, exactly as the runner assembled it.

    ``system`` is the system slot's pieces joined with a blank line; ``messages`` the
    messages slot; ``tools`` the tools slot (JSON-schema tool definitions, each
    ``{"name", "description", "input_schema"}``). ``call_index`` counts this run's LLM
    calls from 0; ``iteration`` is the agent loop's iteration (1-based). ``messages`` is a
    read-only sequence (a :class:`MessagesView` from the agent; copy it with ``list()``). ``input_chars``
    is the size of system plus messages, kept incrementally by the runner.
    """

    model: str
    system: str
    messages: Sequence[dict[str, Any]]
    tools: list[dict[str, Any]]
    iteration: int = 1
    call_index: int = 0
    input_chars: int = 0
    seed: int | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class LLMResponse:
    """One call's response, assembled (a streamed reply arrives here whole)."""

    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    model: str | None = None
    #: The request and response as sent and received on the wire, for replay (real providers).
    wire: dict[str, Any] | None = None
    #: The generated tokens with their log-probabilities, when the provider was asked for them
    #: (``options={"logprobs": True, "top_logprobs": 5}`` on an OpenAI-compatible or Ollama provider).
    logprobs: list[TokenChoice] | None = None

    def made_sound(self, provider: str = "provider") -> LLMResponse:
        """This response with every lone surrogate in its text and tool calls made U+FFFD
        (:mod:`footprint_lab.base.unicode`), every tool call's id a plain token
        (:func:`plain_call_id`), and each value of the kind the recording holds it as (text as
        text, counts as whole numbers, log-probabilities as finite floats: minus infinity as
        :data:`NO_CHANCE`, and none kept when one is NaN): what the run goes on with is what can be
        saved, shown and read back the same, so a seal made at the run's end holds after a save.
        (The HTTP wires make what they decode sound as they decode it, ``wire`` included.) A tool call's arguments
        are JSON data, a mapping of names: none are ``{}`` and JSON text holding an object is read; anything else is
        a ``ProviderResponseError`` naming ``provider``."""
        self.content, self.stop_reason, self.model = (
            value if value is None or type(value) is str else str(value)
            for value in (self.content, self.stop_reason, self.model))
        if self.content is not None:
            self.content = sound_text(self.content)
        if self.tool_calls:
            self.tool_calls = [ToolCall(plain_call_id(call.id), *sound((call.name, _arguments(call.args, provider))))
                               for call in self.tool_calls]
        self.usage = self.usage.counted()
        if self.logprobs and not all(_floats(choice) for choice in self.logprobs):
            try:
                self.logprobs = [TokenChoice(choice.token, _logprob(choice.logprob),
                                             tuple((token, _logprob(logprob)) for token, logprob in choice.top))
                                 for choice in self.logprobs]
            except ValueError:  # a NaN among them: no margin can be told from these
                self.logprobs = None
        return self


def provider_name(provider: Any) -> str:
    """A provider's name, or its class's for one of a user's own that gives none."""
    name = getattr(provider, "name", None)
    return name if isinstance(name, str) and name else type(provider).__name__


def _arguments(args: Any, provider: str) -> dict[str, Any]:
    """A tool call's arguments as JSON data, a mapping of names (see :meth:`LLMResponse.made_sound`)."""
    if args is None:
        return {}
    if isinstance(args, str):
        with contextlib.suppress(ValueError, NestingTooDeep):  # not JSON, or too deep: refused below, by its kind
            args = parse_json(args) if args.strip() else {}
    problem = "" if isinstance(args, dict) else describe_shape(args)
    stack: list[tuple[Any, int]] = [(args, 1)] if not problem else []
    while stack and not problem:
        value, depth = stack.pop()
        if depth > MAX_NESTING:
            problem = f"data nested deeper than {MAX_NESTING} levels"
        elif isinstance(value, dict):
            if not all(isinstance(key, str) for key in value):
                problem = "a mapping with a key that is no text"
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list | tuple):
            stack.extend((item, depth + 1) for item in value)
        elif not (value is None or isinstance(value, str | int | float)):
            problem = f"a mapping holding {describe_shape(value)}"
    if problem:
        raise ProviderResponseError(
            f"{provider}: a tool call's arguments must be JSON data, a mapping of names to values, and this one is "
            f"{problem}. A provider of your own hands each ToolCall its arguments as a dict of JSON values (JSON "
            "text holding an object is read for you).", provider=provider, status=None,
            missing="a tool call's arguments as JSON data", retryable=False)
    return cast("dict[str, Any]", args)


def estimated_usage(request: LLMRequest, response: LLMResponse) -> Usage:
    """Token counts guessed at four characters a token, marked ``estimated``: for a call whose
    provider reported none (the mock, or a server that leaves usage out)."""
    out_chars = len(response.content or "")
    for call in response.tool_calls:
        out_chars += len(call.name) + len(json.dumps(call.args))
    return Usage(input_tokens=-(-request.input_chars // 4), output_tokens=-(-out_chars // 4), estimated=True)


@runtime_checkable
class Provider(Protocol):
    """What a runner needs of a provider."""

    name: str

    async def complete(self, request: LLMRequest, on_token: TokenCallback | None = None) -> LLMResponse:
        """Answer one request."""
        ...
