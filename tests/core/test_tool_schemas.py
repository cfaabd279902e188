"""Tool arguments go through pydantic: the schema the model sees and the values the tool receives."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

import fastjsonschema
import pytest
from pydantic import BaseModel

from footprint_lab import Agent, define_tool, tool
from footprint_lab.errors import MockScriptError, ToolDefinitionError
from footprint_lab.providers import mock


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    city: str
    floor: int = 0


@dataclasses.dataclass
class Window:
    start: int
    end: int


def _received(fn: Any, args: dict[str, Any]) -> tuple[list[Any], Any]:
    """Run ``fn`` as a tool the model calls with ``args``; what it received, and the run."""
    seen: list[Any] = []
    declared = tool(fn(seen))
    run = Agent(provider=mock(replies=[{"tool": declared.name, "args": args}, "done"]),
                tools=[declared]).run_sync("go")
    return seen, run


def test_rich_annotations_reach_the_tool_converted():
    def build(seen: list[Any]) -> Any:
        def paint(pair: tuple[int, str], colors: list[Color], accent: Color | None, where: Address,
                  window: Window, tags: set[str] | None = None) -> str:
            """Paint something."""
            seen.extend([pair, colors, accent, where, window, tags])
            return "painted"
        return paint

    args = {"pair": [3, "x"], "colors": ["red", "blue"], "accent": "blue", "where": {"city": "Oslo"},
            "window": {"start": 1, "end": 2}}
    seen, run = _received(build, args)
    assert seen == [(3, "x"), [Color.RED, Color.BLUE], Color.BLUE, Address(city="Oslo"), Window(1, 2), None]
    assert run.recording.messages[2]["content"] == "painted"


def test_a_tuple_is_described_position_by_position():
    @tool
    def pair(value: tuple[int, str]) -> str:
        """A pair."""
        return "ok"

    schema = pair.input_schema["properties"]["value"]
    assert schema["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert schema["minItems"] == schema["maxItems"] == 2
    check = fastjsonschema.compile(pair.input_schema)
    check({"value": [1, "a"]})
    with pytest.raises(fastjsonschema.JsonSchemaValueException):
        check({"value": [1, 2, 3]})


def test_enums_and_models_are_inlined_where_the_model_reads_them():
    @tool
    def ship(to: Address, colors: list[Color]) -> str:
        """Ship."""
        return "ok"

    properties = ship.input_schema["properties"]
    assert "$defs" not in ship.input_schema
    assert properties["colors"]["items"] == {"type": "string", "enum": ["red", "blue"]}
    assert properties["to"]["required"] == ["city"]


def test_a_recursive_model_keeps_its_references():
    class Node(BaseModel):
        name: str
        children: list[Node] = []

    Node.model_rebuild(_types_namespace={"Node": Node})

    def tree(root: Node) -> str:
        """A tree."""
        return root.children[0].name

    tree.__annotations__ = {"root": Node, "return": str}
    declared = tool(tree)
    assert "Node" in declared.input_schema["$defs"]
    run = Agent(provider=mock(replies=[{"tool": "tree", "args": {"root": {"name": "a", "children": [{"name": "b"}]}}},
                                       "done"]), tools=[declared]).run_sync("go")
    assert run.recording.messages[2]["content"] == "b"


def test_a_mismatch_teaches_the_model_and_the_tool_does_not_run():
    def build(seen: list[Any]) -> Any:
        def paint(colors: list[Color]) -> str:
            """Paint."""
            seen.append(colors)
            return "painted"
        return paint

    seen, run = _received(build, {"colors": ["green"], "brush": "wide"})
    result = run.recording.messages[2]
    assert seen == [] and result["is_error"] is True
    assert "colors.0" in result["content"] and "brush" in result["content"]
    assert "The tool was not run" in result["content"] and '"enum": ["red", "blue"]' in result["content"]
    assert "green" not in result["content"].split("schema:")[0]  # the rejected value is not echoed


def test_the_functions_own_defaults_apply_to_arguments_the_model_left_out():
    marker = object()  # not JSON: left out of the schema, still the default the function gets

    def build(seen: list[Any]) -> Any:
        def pick(count: int = 2, hint: object = marker) -> str:
            """Pick."""
            seen.extend([count, hint])
            return "ok"
        return pick

    seen, _ = _received(build, {})
    assert seen == [2, marker]


def test_parameters_named_like_pydantic_attributes_work():
    def build(seen: list[Any]) -> Any:
        def store(json: str, copy: int, model_config: bool) -> str:
            """Store."""
            seen.extend([json, copy, model_config])
            return "ok"
        return store

    seen, _ = _received(build, {"json": "j", "copy": 2, "model_config": True})
    assert seen == ["j", 2, True]


def test_ctx_must_come_first_and_is_not_in_the_schema():
    @tool
    def who(ctx, city: str) -> str:  # type: ignore[no-untyped-def]
        """Who."""
        return ctx.tool_name

    assert list(who.input_schema["properties"]) == ["city"]
    with pytest.raises(ToolDefinitionError) as caught:
        @tool
        def late(city: str, ctx: Any) -> str:
            """Late."""
            return city
    assert caught.value.problem == "ctx"


class Opaque:
    """An arbitrary class pydantic has no schema for."""


def unresolvable(order: MissingType) -> str:  # type: ignore[name-defined]  # noqa: F821
    """Its hint names a type that does not exist."""
    return "never"


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda: tool(5), "fn"),
        (lambda: tool(dict), "fn"),
        (lambda: tool(Opaque), "fn"),
        (lambda: tool(unresolvable), "annotations"),
        (lambda: tool(_takes_opaque), "annotations"),
        (lambda: tool(name="has space")(lambda: "x"), "name"),
        (lambda: tool(description=5), "description"),
        (lambda: define_tool(name="x", description="d", fn=print, input_schema="x"), "input_schema"),
        (lambda: define_tool(name="x", description="d", fn=5), "fn"),
    ],
)
def test_tool_doors_refuse_by_name_before_anything_runs(make, problem):
    with pytest.raises(ToolDefinitionError) as caught:
        make()
    assert caught.value.problem == problem and caught.value.code == "ERR_TOOL_DEFINITION"


def _takes_opaque(thing: Opaque) -> str:
    """Takes an object no schema can describe."""
    return "never"


def test_an_unschemable_parameter_is_named():
    with pytest.raises(ToolDefinitionError) as caught:
        tool(_takes_opaque)
    assert "'thing'" in str(caught.value)


@pytest.mark.parametrize("reply", [{"tool_calls": 5}, {"content": 5}, {"tool_calls": [5]},
                                   {"content": None, "tool_calls": "x"}])
def test_mock_refuses_an_unreadable_reply_dict_when_built(reply):
    with pytest.raises(MockScriptError) as caught:
        mock(replies=[reply])
    assert caught.value.call_index == 0 and caught.value.code == "ERR_MOCK_SCRIPT"
