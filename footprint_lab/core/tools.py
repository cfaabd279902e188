"""Tools: what the model may call, with schemas, argument checks and a per-run ``ctx``.

Two ways to declare one:

- ``define_tool(name=..., description=..., input_schema={...}, fn=...)`` with an explicit
  JSON schema;
- ``@tool`` on a function: the schema comes from its type hints, the descriptions from its
  docstring (Google, NumPy or reST style).

The model's arguments are checked against the schema *before* the function runs; a
mismatch becomes a tool result that teaches the model the right shape, never a crash.
A first parameter named ``ctx`` receives the run's :class:`ToolContext` (identity, run id,
tool call id, tool name): everything per-run reaches a tool that way, never through the
tool's or the agent's instance. ``ctx`` anywhere but first is refused when the tool is
declared, as is a name a provider would reject.
"""

from __future__ import annotations

import enum
import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from footprint_lab.engine.refusal import Refusal, describe_shape
from footprint_lab.engine.unicode import sound_text

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ToolDefinitionError(Refusal):
    """Raised when a tool is declared in a way no run could use.

    Carries ``tool_name`` (the developer's own declared name, when it is a string) and
    ``problem`` (which part of the declaration is wrong).
    """

    code = "ERR_TOOL_DEFINITION"
    fields = ("tool_name", "problem")

    def __init__(self, tool_name: str | None, problem: str, message: str) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.problem = problem


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a tool knows of the run calling it. ``identity`` is set only when the caller named one.

    ``memory_identity`` is whom the run's memory belongs to, for a tool that keeps its own:
    the named identity, else the conversation ``{conversation_id: ...}`` of the run that
    opened it (a follow-up or resume keeps it; a composition member gets the run it serves).
    Key a store with ``ctx.memory_identity.namespace()``.
    """

    run_id: str
    tool_call_id: str
    tool_name: str
    identity: Any = None
    memory_identity: Any = None


class Tool:
    """A declared tool. Build with :func:`define_tool` or :func:`tool`."""

    __slots__ = ("_converters", "_validate", "description", "fn", "input_schema", "is_async", "name",
                 "takes_ctx")

    def __init__(
        self,
        *,
        name: str,
        description: str,
        input_schema: dict[str, Any],
        fn: Callable[..., Any],
        takes_ctx: bool,
        converters: dict[str, Callable[[Any], Any]] | None = None,
    ) -> None:
        import fastjsonschema

        self.name = name
        self.description = description
        self.input_schema = input_schema
        self.fn = fn
        self.takes_ctx = takes_ctx
        self.is_async = inspect.iscoroutinefunction(fn)
        self._converters = converters or {}
        try:
            self._validate = fastjsonschema.compile(input_schema, use_default=False)
        except Exception as exc:  # the compiler reports a broken schema in many shapes
            raise ToolDefinitionError(
                name, "input_schema",
                f"define_tool: the input_schema of tool '{name}' is not a valid JSON schema "
                f"({type(exc).__name__}). Give an object schema such as "
                "{'type': 'object', 'properties': {'city': {'type': 'string'}}, 'required': ['city']}.",
            ) from None

    def schema(self) -> dict[str, Any]:
        """The tool as the tools slot carries it."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    def check_args(self, args: Any) -> str | None:
        """``None`` when the model's arguments fit the schema, else a teaching message for the model."""
        import fastjsonschema

        try:
            self._validate(args)
        except fastjsonschema.JsonSchemaValueException as exc:
            return (
                f"Invalid arguments for tool '{self.name}': {exc.message}. The tool was not run. "
                f"Call it again with arguments matching this schema: {json.dumps(self.input_schema)}"
            )
        return None

    async def invoke(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        """Run the function with checked arguments (and ``ctx`` when it asks for one)."""
        if self._converters:
            args = {k: (self._converters[k](v) if k in self._converters else v) for k, v in args.items()}
        result = self.fn(ctx, **args) if self.takes_ctx else self.fn(**args)
        if self.is_async or inspect.isawaitable(result):
            result = await result
        return result

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r})"


def result_text(result: Any) -> str:
    """A tool's return value as the text the model reads (and the record keeps): always text
    that can be saved, a lone surrogate made U+FFFD (:mod:`footprint_lab.engine.unicode`)."""
    if isinstance(result, str):
        return sound_text(result)
    try:
        return sound_text(json.dumps(result, default=str, ensure_ascii=False))
    except (TypeError, ValueError):
        return sound_text(str(result))


def _check_ctx(fn: Callable[..., Any], name: str | None) -> bool:
    """``True`` when the function takes ``ctx`` first; refuse ``ctx`` anywhere else."""
    params = list(inspect.signature(fn).parameters.values())
    for position, param in enumerate(params):
        if param.name == "ctx" and position != 0:
            raise ToolDefinitionError(
                name, "ctx",
                f"tool '{name}': the parameter 'ctx' must come first, so the run's ToolContext "
                "cannot be mistaken for one of the model's arguments. Move it to the front: "
                "def my_tool(ctx, city: str) -> str.",
            )
    return bool(params) and params[0].name == "ctx"


def define_tool(
    *,
    name: str,
    description: str,
    input_schema: Mapping[str, Any] | None = None,
    fn: Callable[..., Any],
) -> Tool:
    """Declare a tool with an explicit JSON schema; the model's arguments arrive as keywords."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ToolDefinitionError(
            name if isinstance(name, str) and len(name) <= 64 else None, "name",
            f"define_tool: a tool name must be 1 to 64 letters, digits, '_' or '-' (received "
            f"{describe_shape(name) if not isinstance(name, str) else 'a string that is not'}). "
            "Providers reject other names.",
        )
    if not isinstance(description, str):
        raise ToolDefinitionError(
            name, "description", f"define_tool: tool '{name}' needs a string description of what it does."
        )
    if not callable(fn):
        raise ToolDefinitionError(
            name, "fn", f"define_tool: tool '{name}' needs fn, the function the model's call runs."
        )
    schema = dict(input_schema) if input_schema is not None else {"type": "object", "properties": {}}
    if schema.get("type") != "object":
        raise ToolDefinitionError(
            name, "input_schema",
            f"define_tool: the input_schema of tool '{name}' must describe an object "
            "({'type': 'object', 'properties': {...}}): a model's arguments always arrive as named fields.",
        )
    return Tool(name=name, description=description, input_schema=schema, fn=fn, takes_ctx=_check_ctx(fn, name))


def tool(
    fn: Callable[..., Any] | None = None, *, name: str | None = None, description: str | None = None
) -> Any:
    """Declare a tool from a function's type hints and docstring (``@tool`` or ``@tool(name=...)``)."""

    def build(func: Callable[..., Any]) -> Tool:
        import docstring_parser

        tool_name = name or func.__name__
        takes_ctx = _check_ctx(func, tool_name)
        doc = docstring_parser.parse(inspect.getdoc(func) or "")
        param_docs = {p.arg_name: p.description for p in doc.params}
        hints = typing.get_type_hints(func, include_extras=False)
        properties: dict[str, Any] = {}
        required: list[str] = []
        converters: dict[str, Callable[[Any], Any]] = {}
        for position, param in enumerate(inspect.signature(func).parameters.values()):
            if takes_ctx and position == 0:
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
                raise ToolDefinitionError(
                    tool_name, "parameters",
                    f"tool '{tool_name}': parameter '{param.name}' cannot be filled by name; a model's "
                    "arguments arrive as named fields, so give every parameter a plain name.",
                )
            schema, converter = json_schema_for(hints.get(param.name, Any))
            if param_docs.get(param.name):
                schema = {**schema, "description": param_docs[param.name]}
            if param.default is inspect.Parameter.empty:
                required.append(param.name)
            else:
                schema.setdefault("default", param.default) if _is_json(param.default) else None
            properties[param.name] = schema
            if converter is not None:
                converters[param.name] = converter
        input_schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
        if required:
            input_schema["required"] = required
        text = description or " ".join(
            part for part in (doc.short_description, doc.long_description) if part
        ) or tool_name
        return Tool(
            name=tool_name, description=text, input_schema=input_schema, fn=func, takes_ctx=takes_ctx,
            converters=converters,
        )

    if fn is not None:
        return build(fn)
    return build


def _is_json(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def json_schema_for(annotation: Any) -> tuple[dict[str, Any], Callable[[Any], Any] | None]:
    """A JSON schema for a type hint, and a converter for values that arrive as JSON."""
    simple = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
    if annotation is Any or annotation is inspect.Parameter.empty:
        return {}, None
    if annotation in simple:
        return {"type": simple[annotation]}, None
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return {"enum": list(args)}, None
    if origin in (typing.Union, types.UnionType):
        options = [json_schema_for(a)[0] for a in args]
        return {"anyOf": options}, None
    if annotation in (list, tuple, set) or origin in (list, tuple, set, typing.Sequence):
        item = json_schema_for(args[0])[0] if args else {}
        return {"type": "array", "items": item}, None
    if annotation is dict or origin is dict:
        schema: dict[str, Any] = {"type": "object"}
        if len(args) == 2:
            schema["additionalProperties"] = json_schema_for(args[1])[0]
        return schema, None
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return {"enum": [member.value for member in annotation]}, annotation
    # Anything richer (pydantic models, dataclasses, TypedDicts): pydantic knows the schema.
    from pydantic import TypeAdapter

    adapter = TypeAdapter(annotation)
    return adapter.json_schema(), adapter.validate_python
