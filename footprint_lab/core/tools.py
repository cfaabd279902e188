"""Tools: what the model may call, with schemas, argument checks and a per-run ``ctx``.

Two ways to declare one:

- ``define_tool(name=..., description=..., input_schema={...}, fn=...)`` with an explicit
  JSON schema;
- ``@tool`` on a function: pydantic reads its signature (a model of the parameters the
  model fills) for the schema, the docstring (Google, NumPy or reST style) gives the
  descriptions. An annotation no JSON schema can describe is refused when the tool is
  declared, not when the model first calls it.

The model's arguments are checked *before* the function runs (against the JSON schema for
``define_tool``; validated and converted by pydantic for ``@tool``, so an ``Enum``, a
``tuple``, a dataclass or a model arrives as that type); a mismatch becomes a tool result
that teaches the model the right shape, never a crash.
A first parameter named ``ctx`` receives the run's :class:`ToolContext` (identity, run id,
tool call id, tool name): everything per-run reaches a tool that way, never through the
tool's or the agent's instance. ``ctx`` anywhere but first is refused when the tool is
declared, as is a name a provider would reject.

A tool that raises does not stop the run: the model reads the error as the call's result, and
the tool step keeps what :func:`tool_failure` says of the exception (its type, its message as
the run's redaction policy masks it, bounded, and the tool's own frame), which the integrity
check ``tool_failed`` and the answer view report.
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, cast

from footprint_lab.base.refusal import Refusal, describe_shape, raised
from footprint_lab.base.runners import register as register_runner
from footprint_lab.base.unicode import is_sound
from footprint_lab.core.identity import Identity

if TYPE_CHECKING:
    from pydantic import BaseModel

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ToolDefinitionError(Refusal, ValueError):
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
    identity: Identity | None = None
    memory_identity: Identity | None = None


class Tool:
    """A declared tool. Build with :func:`define_tool` or :func:`tool`."""

    __slots__ = ("_arguments", "description", "fn", "input_schema", "is_async", "name", "takes_ctx")

    def __init__(
        self,
        *,
        name: str,
        description: str,
        input_schema: dict[str, Any],
        fn: Callable[..., Any],
        takes_ctx: bool,
        arguments: _Arguments | None = None,
    ) -> None:
        for part, text in (("description", description), ("input_schema", json.dumps(input_schema, default=str,
                                                                                     ensure_ascii=False))):
            if not is_sound(text):  # the model is shown it and the recording keeps it: it must be savable
                raise ToolDefinitionError(
                    name, part, f"tool '{name}': its {part} holds a lone surrogate (a code point that is no "
                    "character), which cannot be saved as UTF-8; decode the text with its real encoding.")
        self.name = name
        self.description = description
        self.input_schema = input_schema
        self.fn = fn
        self.takes_ctx = takes_ctx
        self.is_async = inspect.iscoroutinefunction(fn)
        self._arguments = arguments if arguments is not None else _SchemaArguments(name, input_schema)

    def schema(self) -> dict[str, Any]:
        """The tool as the tools slot carries it."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    def check_args(self, args: dict[str, Any]) -> str | None:
        """``None`` when the model's arguments fit the schema, else a teaching message for the model."""
        problem = self._arguments.problem(args)
        if problem is None:
            return None
        return (
            f"Invalid arguments for tool '{self.name}': {problem}. The tool was not run. "
            f"Call it again with arguments matching this schema: {json.dumps(self.input_schema)}"
        )

    async def invoke(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        """Run the function with checked arguments (and ``ctx`` when it asks for one)."""
        args = self._arguments.convert(args)
        result = self.fn(ctx, **args) if self.takes_ctx else self.fn(**args)
        if self.is_async or inspect.isawaitable(result):
            result = await result
        return result

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r})"


class ToolFailure(TypedDict, total=False):
    """What a tool step keeps of the exception its tool raised (the keys of the tool result's evidence)."""

    error_type: str
    error_message: str
    error_frame: str


def tool_failure(exc: BaseException, clean: Callable[[Any], Any]) -> ToolFailure:
    """The exception a tool raised, as its step records it: type, message (masked by ``clean``, then bounded)
    and the innermost frame of the tool's own code (``file:line in function``), left out when it has none."""
    kind, message, frame = raised(exc, clean, entry=Tool.invoke.__code__)
    failure = ToolFailure(error_type=kind, error_message=message)
    if frame is not None:
        failure["error_frame"] = frame
    return failure


class _Arguments(Protocol):
    """How a tool checks the model's arguments and turns them into the function's keywords."""

    def problem(self, args: Any) -> str | None: ...

    def convert(self, args: dict[str, Any]) -> dict[str, Any]: ...


class _SchemaArguments:
    """Arguments of a ``define_tool`` tool: checked against its JSON schema, passed on as they came."""

    __slots__ = ("_validate",)

    def __init__(self, name: str, input_schema: dict[str, Any]) -> None:
        import fastjsonschema

        try:
            self._validate = fastjsonschema.compile(input_schema, use_default=False)
        except Exception as exc:  # the compiler reports a broken schema in many shapes
            raise ToolDefinitionError(
                name, "input_schema",
                f"define_tool: the input_schema of tool '{name}' is not a valid JSON schema "
                f"({type(exc).__name__}). Give an object schema such as "
                "{'type': 'object', 'properties': {'city': {'type': 'string'}}, 'required': ['city']}.",
            ) from None

    def problem(self, args: Any) -> str | None:
        import fastjsonschema

        try:
            self._validate(args)
        except fastjsonschema.JsonSchemaValueException as exc:
            return str(exc.message)
        return None

    def convert(self, args: dict[str, Any]) -> dict[str, Any]:
        return args


class _SignatureArguments:
    """Arguments of an ``@tool`` tool: validated and converted by pydantic from the signature.

    The fields are named by position (``p0``, ``p1``...) with the parameter's name as alias,
    so a parameter called ``json`` or ``copy`` cannot collide with pydantic's own attributes.
    Only the arguments the model gave are passed on, so the function's own defaults apply.
    """

    __slots__ = ("_model", "_names")

    def __init__(self, model: type[BaseModel], names: dict[str, str]) -> None:
        self._model = model
        self._names = names

    def problem(self, args: Any) -> str | None:
        from pydantic import ValidationError

        try:
            self._model.model_validate(args)
        except ValidationError as exc:
            # Locations and pydantic's reasons only: the values stay out of the message.
            return "; ".join(
                f"{'.'.join(str(part) for part in error['loc']) or 'the arguments'}: {error['msg']}"
                for error in exc.errors(include_url=False, include_input=False, include_context=False)
            )
        return None

    def convert(self, args: dict[str, Any]) -> dict[str, Any]:
        checked = self._model.model_validate(args)
        return {self._names[field]: getattr(checked, field) for field in checked.model_fields_set}


def tool_list(tools: Any, runner: str) -> list[Tool]:
    """The ``tools=`` of a runner as a list of tools, or a refusal naming what to pass instead."""
    if isinstance(tools, Tool):
        raise ToolDefinitionError(
            tools.name, "tools",
            f"{runner}: tools takes a list, even for one tool: tools=[{tools.name}] (received a single Tool).",
        )
    if isinstance(tools, str | bytes | Mapping) or not isinstance(tools, Iterable):
        raise ToolDefinitionError(
            None, "tools",
            f"{runner}: tools must be a list of tools built with @tool or define_tool(...), or left out for an "
            f"agent without tools (received {describe_shape(tools)}).",
        )
    listed = list(tools)
    for item in listed:
        if not isinstance(item, Tool):
            raise ToolDefinitionError(
                None, "tools",
                f"{runner}: every entry of tools must be a tool built with define_tool(...) or @tool "
                f"(received {describe_shape(item)}).",
            )
    return listed


def _check_ctx(fn: Callable[..., Any], name: str | None) -> bool:
    """``True`` when the function takes ``ctx`` first; refuse ``ctx`` anywhere else."""
    params = list(_signature(fn, name, f"tool '{name}'").parameters.values())
    for position, param in enumerate(params):
        if param.name == "ctx" and position != 0:
            raise ToolDefinitionError(
                name, "ctx",
                f"tool '{name}': the parameter 'ctx' must come first, so the run's ToolContext "
                "cannot be mistaken for one of the model's arguments. Move it to the front: "
                "def my_tool(ctx, city: str) -> str.",
            )
    return bool(params) and params[0].name == "ctx"


def _signature(fn: Callable[..., Any], name: str | None, door: str) -> inspect.Signature:
    """The function's signature, or a refusal for what has none a model could fill (a class, a builtin)."""
    if isinstance(fn, type) or not callable(fn):
        raise ToolDefinitionError(
            name, "fn",
            f"{door}: a tool runs a function, and this is {'a class' if isinstance(fn, type) else describe_shape(fn)}. "
            "Give a function (def or async def, or a lambda); to expose a class, write a function that "
            "builds or calls it.",
        )
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        raise ToolDefinitionError(
            name, "fn",
            f"{door}: the parameters of this {type(fn).__name__} cannot be read, so no schema can say what "
            "the model should pass. Wrap it in a function with named, annotated parameters.",
        ) from None


def _check_name(name: Any, door: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ToolDefinitionError(
            name if isinstance(name, str) and len(name) <= 64 else None, "name",
            f"{door}: a tool name must be 1 to 64 letters, digits, '_' or '-' (received "
            f"{describe_shape(name) if not isinstance(name, str) else 'a string that is not'}). "
            "Providers reject other names.",
        )
    return name


def define_tool(
    *,
    name: str,
    description: str,
    input_schema: Mapping[str, Any] | None = None,
    fn: Callable[..., Any],
) -> Tool:
    """Declare a tool with an explicit JSON schema; the model's arguments arrive as keywords."""
    _check_name(name, "define_tool")
    if not isinstance(description, str):
        raise ToolDefinitionError(
            name, "description", f"define_tool: tool '{name}' needs a string description of what it does "
            f"(received {describe_shape(description)}).",
        )
    if not callable(fn):
        raise ToolDefinitionError(
            name, "fn", f"define_tool: tool '{name}' needs fn, the function the model's call runs "
            f"(received {describe_shape(fn)}).",
        )
    if input_schema is not None and not isinstance(input_schema, Mapping):
        raise ToolDefinitionError(
            name, "input_schema",
            f"define_tool: the input_schema of tool '{name}' must be a JSON schema as a dict (received "
            f"{describe_shape(input_schema)}), such as {{'type': 'object', 'properties': {{...}}}}.",
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
    """Declare a tool from a function's type hints and docstring (``@tool`` or ``@tool(name=...)``).

    pydantic reads the signature: it writes the JSON schema the model sees and, before the
    function runs, validates and converts the model's arguments (an ``Enum`` from its value,
    a ``tuple`` from a list, a model from a dict), so every annotation it supports round-trips.
    """
    if name is not None:
        _check_name(name, "tool")
    if description is not None and not isinstance(description, str):
        raise ToolDefinitionError(
            name, "description", f"tool: description must be a string (received {describe_shape(description)})."
        )

    def build(func: Callable[..., Any]) -> Tool:
        import docstring_parser

        _signature(func, name, "tool")  # a class or a non-callable is refused before its name is read
        tool_name = _check_name(name or getattr(func, "__name__", None), "tool")
        takes_ctx = _check_ctx(func, tool_name)
        params = list(inspect.signature(func).parameters.values())[1 if takes_ctx else 0:]
        for param in params:
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
                raise ToolDefinitionError(
                    tool_name, "parameters",
                    f"tool '{tool_name}': parameter '{param.name}' cannot be filled by name; a model's "
                    "arguments arrive as named fields, so give every parameter a plain name.",
                )
        doc = docstring_parser.parse(inspect.getdoc(func) or "")
        param_docs = {p.arg_name: p.description for p in doc.params}
        model, aliases = _arguments_model(func, tool_name, params, param_docs)
        text = description or " ".join(
            part for part in (doc.short_description, doc.long_description) if part
        ) or tool_name
        return Tool(
            name=tool_name, description=text, input_schema=_json_schema(model), fn=func, takes_ctx=takes_ctx,
            arguments=_SignatureArguments(model, aliases),
        )

    if fn is not None:
        return build(fn)
    return build


def _arguments_model(
    func: Callable[..., Any], tool_name: str, params: list[inspect.Parameter], param_docs: dict[str, str | None]
) -> tuple[type[BaseModel], dict[str, str]]:
    """A pydantic model of the parameters the model fills, and its field names mapped back to them."""
    from pydantic import ConfigDict, Field, PydanticSchemaGenerationError, PydanticUserError, create_model

    try:
        hints = typing.get_type_hints(func)
    except Exception as exc:  # NameError for a name that is not defined; TypeError for a malformed hint
        raise ToolDefinitionError(
            tool_name, "annotations",
            f"tool '{tool_name}': its type hints cannot be resolved ({type(exc).__name__}); a schema needs "
            "every annotation to name a type importable where the function is defined. Import the type at "
            "module level, or write the hint without quotes.",
        ) from None
    fields: dict[str, Any] = {}
    aliases: dict[str, str] = {}
    for position, param in enumerate(params):
        field = f"p{position}"
        aliases[field] = param.name
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[field] = (hints.get(param.name, Any),
                         Field(default, alias=param.name, description=param_docs.get(param.name) or None))
    try:
        model = create_model(f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError):
        culprit = next((aliases[f] for f, (hint, _) in fields.items() if not _is_schema_type(hint)), None)
        where = f"parameter '{culprit}'" if culprit else "a parameter"
        raise ToolDefinitionError(
            tool_name, "annotations",
            f"tool '{tool_name}': {where} is annotated with a type no JSON schema can describe. Annotate it "
            "with str, int, float, bool, a list, dict, tuple, Literal, an Enum, a dataclass, a TypedDict or a "
            "pydantic model, or take plain data and build the object inside the tool.",
        ) from None
    return model, aliases


def _is_schema_type(hint: Any) -> bool:
    from pydantic import TypeAdapter

    try:
        TypeAdapter(hint).json_schema()
    except Exception:  # pydantic reports an unsupported type in several ways
        return False
    return True


def _json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The arguments' JSON schema as a model reads it: no generated titles, defaults only when JSON."""
    import warnings

    with warnings.catch_warnings():  # a default that is not JSON is left out of the schema, by design
        warnings.simplefilter("ignore")
        schema = _untitled(model.model_json_schema())
    definitions = schema.pop("$defs", {})
    inlined = _inline(schema, definitions, ())
    if any(isinstance(value, dict) and "$ref" in value for value in _walk(inlined)):
        inlined["$defs"] = definitions  # a recursive type keeps its references
    return cast("dict[str, Any]", inlined)


def _inline(schema: Any, definitions: dict[str, Any], seen: tuple[str, ...]) -> Any:
    """Replace each ``$ref`` by the definition it names, so a model reads each field where it is.

    A definition that refers to itself (a tree of nodes) stays a reference.
    """
    if isinstance(schema, list):
        return [_inline(item, definitions, seen) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        key = ref.removeprefix("#/$defs/")
        if key in definitions and key not in seen:
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            return {**_inline(definitions[key], definitions, (*seen, key)), **_inline(siblings, definitions, seen)}
    return {key: _inline(value, definitions, seen) for key, value in schema.items()}


def _walk(schema: Any) -> typing.Iterator[Any]:
    yield schema
    children = schema.values() if isinstance(schema, dict) else schema if isinstance(schema, list) else ()
    for child in children:
        yield from _walk(child)


def _untitled(schema: Any) -> Any:
    """Drop the ``title`` pydantic writes into every schema (never a property that is *named* title)."""
    if isinstance(schema, list):
        return [_untitled(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs", "patternProperties") and isinstance(value, dict):
            out[key] = {name: _untitled(sub) for name, sub in value.items()}
        else:
            out[key] = _untitled(value)
    return out


# how a runner an explanation builds for itself (the explainer of ``explain.asking.explainer``) declares its tools
register_runner("tool", define_tool)
