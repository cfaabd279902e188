"""Tool schemas from type hints, and the mock provider's script rules."""

from __future__ import annotations

import enum
import json
from typing import Literal

import pytest

from footprint_lab import Agent, define_tool, tool
from footprint_lab.errors import MockScriptError, RunCheckpointError, ToolDefinitionError
from footprint_lab.providers import mock


class Size(enum.Enum):
    SMALL = "s"
    LARGE = "l"


def test_schema_comes_from_type_hints_and_docstring():
    @tool
    def order(item: str, quantity: int, size: Size, mode: Literal["fast", "slow"] = "fast",
              notes: list[str] | None = None) -> str:
        """Place an order.

        Args:
            item: what to order
            quantity: how many
        """
        return f"{quantity} {item} {size.value} {mode}"

    schema = order.input_schema
    assert order.description == "Place an order."
    assert schema["required"] == ["item", "quantity", "size"]
    assert schema["properties"]["item"] == {"type": "string", "description": "what to order"}
    assert schema["properties"]["quantity"]["type"] == "integer"
    assert schema["properties"]["size"] == {"type": "string", "enum": ["s", "l"]}
    assert schema["properties"]["mode"] == {"type": "string", "enum": ["fast", "slow"], "default": "fast"}
    assert schema["properties"]["notes"]["anyOf"][0] == {"type": "array", "items": {"type": "string"}}
    assert schema["additionalProperties"] is False
    run = Agent(provider=mock(replies=[{"tool": "order", "args": {"item": "tea", "quantity": 2, "size": "l"}},
                                       "ok"]), tools=[order]).run_sync("go")
    assert run.recording.messages[2]["content"] == "2 tea l fast"


def test_tool_decorator_with_options():
    @tool(name="lookup_order", description="Find an order by id.")
    def lookup(order_id: str) -> dict:
        return {"id": order_id}

    assert lookup.name == "lookup_order" and lookup.description == "Find an order by id."


@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        ({"name": "has space", "description": "x", "fn": print}, "name"),
        ({"name": "ok", "description": None, "fn": print}, "description"),
        ({"name": "ok", "description": "x", "fn": "not callable"}, "fn"),
        ({"name": "ok", "description": "x", "fn": print, "input_schema": {"type": "string"}}, "input_schema"),
        ({"name": "ok", "description": "x", "fn": print, "input_schema": {"type": "object", "properties": 5}},
         "input_schema"),
    ],
)
def test_define_tool_refuses_unusable_declarations(kwargs, problem):
    with pytest.raises(ToolDefinitionError) as caught:
        define_tool(**kwargs)
    assert caught.value.problem == problem and caught.value.code == "ERR_TOOL_DEFINITION"


def test_mock_needs_exactly_one_way_to_answer():
    for kwargs in ({}, {"reply": "a", "replies": ["b"]}):
        with pytest.raises(MockScriptError):
            mock(**kwargs)


def test_mock_refuses_an_unreadable_script_when_built():
    with pytest.raises(MockScriptError) as caught:
        mock(replies=["ok", 42])
    assert caught.value.call_index == 1


def test_running_past_the_script_says_how_many_and_which_call():
    agent = Agent(provider=mock(replies=[{"tool": "noop", "args": {}}]),
                  tools=[define_tool(name="noop", description="x", fn=lambda: "ok")])
    with pytest.raises(RunCheckpointError) as failed:  # after a completed tool round, the work is kept
        agent.run_sync("go")
    err = failed.value.cause
    assert isinstance(err, MockScriptError)
    assert err.scripted == 1 and err.call_index == 1
    assert "1 reply" in str(err) and "call number 2" in str(err)


def test_script_restarts_with_every_run():
    agent = Agent(provider=mock(replies=["first"]))
    assert agent.run_sync("a").answer == "first"
    assert agent.run_sync("b").answer == "first"


def test_respond_sees_what_the_model_would_see():
    def respond(request):
        return f"{request.model}|{request.system}|{request.messages[-1]['content']}|{request.iteration}"

    run = Agent(provider=mock(respond=respond), model="m1", system="sys").run_sync("hello")
    assert run.answer == "m1|sys|hello|1"


def test_streaming_mock_emits_token_events():
    run = Agent(provider=mock(reply="one two three", stream=True)).run_sync("go")
    tokens = [e.payload["text"] for e in run.recording.events if e.type == "token"]
    assert "".join(tokens) == "one two three" and len(tokens) == 3


class _HandWritten:
    """A provider of a user's own that hands its first tool call whatever ``args`` it was given."""

    name = "hand-written"

    def __init__(self, args: object) -> None:
        self.args, self.calls = args, 0

    async def complete(self, request: object, on_token: object = None) -> object:
        from footprint_lab.providers.types import LLMResponse, ToolCall

        self.calls += 1
        if self.calls == 1:
            return LLMResponse(content=None, stop_reason="tool_use", tool_calls=[ToolCall("c1", "login", self.args)])
        return LLMResponse(content="done", stop_reason="end_turn")


@pytest.mark.parametrize(("args", "seen"), [('{"user": "ada"}', {"user": "ada"}), (None, {}), ("", {}),
                                            ({"user": ("ada", 1.5)}, {"user": ["ada", 1.5]})])
def test_a_providers_tool_arguments_are_read_as_a_mapping_and_the_run_saves(args: object, seen: dict) -> None:
    from footprint_lab import load_recording

    received = []
    login = define_tool(name="login", description="Log in.", input_schema={"type": "object", "properties": {}},
                        fn=lambda **given: received.append(given) or "ok")
    run = Agent(provider=_HandWritten(args), tools=[login]).run_sync("go")  # type: ignore[arg-type]
    assert [json.loads(json.dumps(given)) for given in received] == [seen] and run.answer == "done"
    assert load_recording(run.recording.model_dump_json()).exchanges[0].response.tool_calls[0].args == seen


@pytest.mark.parametrize("args", [["user", "ada"], "not json", 42, {1: "x", "1": "y"}, {"n": {(1, 2): "x"}},
                                  {"raw": b"bytes"}, {"tags": {"a", "b"}}, "[" * 5000 + "]" * 5000,
                                  '{"a":' * 200 + "1" + "}" * 200])
def test_tool_arguments_that_are_no_mapping_fail_the_run_naming_the_provider_and_the_fix(args: object) -> None:
    from footprint_lab.errors import ProviderResponseError

    login = define_tool(name="login", description="Log in.", input_schema={"type": "object", "properties": {}},
                        fn=lambda **given: "ok")
    with pytest.raises(ProviderResponseError) as failed:
        Agent(provider=_HandWritten(args), tools=[login]).run_sync("go")  # type: ignore[arg-type]
    assert failed.value.code == "ERR_PROVIDER_RESPONSE" and "hand-written" in str(failed.value)
    assert "as a dict" in str(failed.value) and "not json" not in str(failed.value)


def test_a_provider_of_your_own_without_a_name_runs_and_is_named_by_its_class_when_it_fails() -> None:
    class Nameless:
        def __init__(self, args: object) -> None:
            self.inner = _HandWritten(args)

        async def complete(self, request: object, on_token: object = None) -> object:
            return await self.inner.complete(request, on_token)

    login = define_tool(name="login", description="Log in.", input_schema={"type": "object", "properties": {}},
                        fn=lambda **given: "ok")
    assert Agent(provider=Nameless({}), tools=[login]).run_sync("go").answer == "done"  # type: ignore[arg-type]
    from footprint_lab.errors import ProviderResponseError

    with pytest.raises(ProviderResponseError, match="Nameless"):
        Agent(provider=Nameless([1]), tools=[login]).run_sync("go")  # type: ignore[arg-type]
