"""The embedded mock provider: scripted or computed replies, no key, no network.

``mock(reply=...)`` answers every call the same; ``mock(replies=[...])`` follows a script,
one entry per LLM call of a run (the script starts over with every run, so one agent can be
run again, or re-run by an ablation, with the same provider); ``mock(respond=fn)`` computes
each reply from the :class:`~footprint_lab.providers.types.LLMRequest` it is given, so a
scenario's provider can react to exactly what the model would have seen.

A reply is a ``str`` (the final answer), ``{"tool": name, "args": {...}}`` (a tool call),
a list of those (a batch of tool calls), ``{"content": ..., "tool_calls": [...]}``, or an
``LLMResponse``. Usage is estimated at four characters a token and marked ``estimated``.
Each call yields to the event loop once, as a call over a real wire would.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from footprint_lab.base.refusal import Refusal, call_problem, describe_shape
from footprint_lab.providers.types import LLMRequest, LLMResponse, TokenCallback, ToolCall, estimated_usage

Reply = str | dict[str, Any] | list[dict[str, Any]] | LLMResponse


class MockScriptError(Refusal, ValueError):
    """Raised when a mock provider is built with no way to answer, or a reply it cannot read.

    Carries ``received`` (the shape of what arrived) and, for a run past the end of a
    script, ``scripted`` (how many replies were scripted) and ``call_index`` (which
    request overran, counted from 0 within the run).
    """

    code = "ERR_MOCK_SCRIPT"
    fields = ("received", "scripted", "call_index")

    def __init__(
        self, message: str, *, received: str = "", scripted: int | None = None, call_index: int | None = None
    ) -> None:
        super().__init__(message)
        self.received = received
        self.scripted = scripted
        self.call_index = call_index


class MockProvider:
    """A provider that answers from a script or a function. Build it with :func:`mock`."""

    name = "mock"

    def __init__(
        self,
        *,
        replies: Sequence[Reply] | None,
        respond: Callable[[LLMRequest], Any] | None,
        stream: bool,
    ) -> None:
        self._replies = list(replies) if replies is not None else None
        self._respond = respond
        self._stream = stream
        self.calls = 0

    async def complete(self, request: LLMRequest, on_token: TokenCallback | None = None) -> LLMResponse:
        self.calls += 1
        # A real provider always waits on its wire; yielding once here makes concurrent runs
        # interleave on the mock exactly as they would against a real model.
        await asyncio.sleep(0)
        if self._respond is not None:
            reply = self._respond(request)
            if inspect.isawaitable(reply):
                reply = await reply
        else:
            script = self._replies or []
            if request.call_index >= len(script):
                raise MockScriptError(
                    f"mock: the script has {len(script)} repl{'y' if len(script) == 1 else 'ies'} but this "
                    f"run made LLM call number {request.call_index + 1} (iteration {request.iteration}). "
                    "Script one reply per LLM call of a run (the script restarts every run), end it with a "
                    "final answer (a plain string), or use mock(respond=fn) to compute replies.",
                    received=f"call {request.call_index + 1} of a {len(script)}-reply script",
                    scripted=len(script),
                    call_index=request.call_index,
                )
            reply = script[request.call_index]
        response = to_response(reply, request.call_index)
        if response.usage.input_tokens == 0 and response.usage.output_tokens == 0:
            response.usage = estimated_usage(request, response)
        if response.model is None:
            response.model = request.model
        if self._stream and on_token is not None and response.content:
            for chunk in chunks(response.content):
                on_token(chunk)
        return response


def mock(
    reply: str | None = None,
    *,
    replies: Sequence[Reply] | None = None,
    respond: Callable[[LLMRequest], Any] | None = None,
    stream: bool = False,
) -> MockProvider:
    """Build the embedded mock provider; give exactly one of ``reply``, ``replies``, ``respond``."""
    options = (("reply", reply), ("replies", replies), ("respond", respond))
    given = [name for name, value in options if value is not None]
    if len(given) != 1:
        raise MockScriptError(
            "mock: give exactly one way to answer: mock(reply='text'), mock(replies=[...]) with one "
            f"reply per LLM call, or mock(respond=fn). Received {len(given)} of them.",
            received=", ".join(given) or "none",
        )
    if reply is not None and not isinstance(reply, str):
        raise MockScriptError(
            f"mock: reply must be a string (received {describe_shape(reply)}); for tool calls script "
            "them with mock(replies=[{'tool': 'name', 'args': {...}}, 'final answer']).",
            received=describe_shape(reply),
        )
    if replies is not None:
        if isinstance(replies, str | dict) or not isinstance(replies, Sequence):
            raise MockScriptError(
                f"mock: replies must be a list with one reply per LLM call (received {describe_shape(replies)}).",
                received=describe_shape(replies),
            )
        for position, item in enumerate(replies):
            to_response(item, position)  # refuse an unreadable script now, not mid-run
    unusable = call_problem(respond, 1) if respond is not None else None
    if unusable is not None:
        raise MockScriptError(
            f"mock: respond must be a function that takes the request and returns a reply (received {unusable}).",
            received=unusable,
        )
    if reply is not None:
        fixed = reply

        def respond(_request: LLMRequest) -> str:
            return fixed

    return MockProvider(replies=replies, respond=respond, stream=stream)


#: the keys a scripted reply may hold, which a refusal may name
REPLY_KEYS = ("tool", "args", "content", "tool_calls")


def to_response(reply: Any, call_index: int) -> LLMResponse:
    """Read one scripted or computed reply into an ``LLMResponse``."""
    if isinstance(reply, LLMResponse):
        return reply
    if isinstance(reply, str):
        return LLMResponse(content=reply, stop_reason="end_turn")
    if isinstance(reply, dict) and "tool" in reply:
        return LLMResponse(tool_calls=[_tool_call(reply, call_index, 0)], stop_reason="tool_use")
    if isinstance(reply, list) and reply and all(isinstance(r, dict) and "tool" in r for r in reply):
        calls = [_tool_call(r, call_index, k) for k, r in enumerate(reply)]
        return LLMResponse(tool_calls=calls, stop_reason="tool_use")
    if isinstance(reply, dict) and ("content" in reply or "tool_calls" in reply):
        raw_calls = reply.get("tool_calls") or []
        content = reply.get("content")
        if not isinstance(raw_calls, list) or not all(isinstance(r, dict) for r in raw_calls):
            raise MockScriptError(
                f"mock: 'tool_calls' in reply {call_index + 1} must be a list of "
                f"{{'tool': name, 'args': {{...}}}} dicts (received {describe_shape(raw_calls)}).",
                received=describe_shape(raw_calls),
                call_index=call_index,
            )
        if content is not None and not isinstance(content, str):
            raise MockScriptError(
                f"mock: 'content' in reply {call_index + 1} must be the answer's text, a string, or "
                f"None beside tool calls (received {describe_shape(content)}).",
                received=describe_shape(content),
                call_index=call_index,
            )
        calls = [_tool_call(r, call_index, k) for k, r in enumerate(raw_calls)]
        return LLMResponse(content=content, tool_calls=calls, stop_reason="tool_use" if calls else "end_turn")
    shape = describe_shape(reply, REPLY_KEYS)
    raise MockScriptError(
        f"mock: reply for LLM call {call_index + 1} is {shape}, which is not a reply. "
        "A reply is a string (final answer), {'tool': name, 'args': {...}}, a list of those, or "
        "{'content': text, 'tool_calls': [...]}.",
        received=shape,
        call_index=call_index,
    )


def _tool_call(raw: dict[str, Any], call_index: int, position: int) -> ToolCall:
    name = raw.get("tool", raw.get("name"))
    args = raw.get("args", {})
    if not isinstance(name, str) or not isinstance(args, dict):
        raise MockScriptError(
            f"mock: a tool call in reply {call_index + 1} needs a string 'tool' and a dict 'args'.",
            received=describe_shape(raw),
            call_index=call_index,
        )
    return ToolCall(id=str(raw.get("id") or f"call_{call_index + 1}_{position + 1}"), name=name, args=args)


def chunks(text: str) -> list[str]:
    words = text.split(" ")
    return [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]
