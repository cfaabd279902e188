"""What a span says, whichever convention wrote it: each convention read into one neutral shape.

Rule kept: the convention is told per span, from the span alone, and every convention is read
into the same few shapes (:class:`Call`, :class:`ToolRun`, :class:`Document`), so the importer
replays them with one piece of code. The conventions read:

- **OpenInference** (Arize's instrumentations: LangChain, LlamaIndex, the OpenAI Agents SDK,
  OpenAI...): ``openinference.span.kind`` names the span (LLM, TOOL, RETRIEVER, RERANKER, AGENT,
  CHAIN...); messages are flattened into indexed attributes (``llm.input_messages.N.message.role``,
  ``...message.contents.M.message_content.text``, ``...message.tool_calls.M.tool_call.function.name``),
  tools into ``llm.tools.N.tool.json_schema``, documents into ``retrieval.documents.N.document.*``;
- **GenAI, current** (``gen_ai.operation.name``; pydantic-ai and the newer instrumentations):
  JSON-valued ``gen_ai.input.messages`` / ``gen_ai.output.messages`` / ``gen_ai.tool.definitions``;
- **GenAI, older** (OpenLLMetry / Traceloop): ``gen_ai.prompt.N.role/content``,
  ``gen_ai.completion.N.*``, ``llm.request.functions.N.*``, ``traceloop.span.kind``.

A span carrying ``openinference.span.kind`` is read as OpenInference (an instrumentation that also
writes GenAI attributes writes the same call twice); then one with ``gen_ai.prompt.*`` or
``gen_ai.completion.*`` as the older GenAI; every other span as the current GenAI conventions.

Indexed attributes are nested once, when the spans are read (:func:`footprint_lab.otel._spans.nest`):
indices may come in any order and with gaps (positions keep their order), and an index that is not a
whole number of at most 9 digits is refused by the attribute's convention name, never its value.

Role: the conventions of :mod:`footprint_lab.otel`; free of ``opentelemetry``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from footprint_lab.base.refusal import describe_shape
from footprint_lab.core.turn import result_text
from footprint_lab.otel._spans import MAX_INDEX_DIGITS, json_value
from footprint_lab.otel.refusals import OtelSpanFieldError
from footprint_lab.record.captured import UsageCounts

OPENINFERENCE, GENAI, OPENLLMETRY = "openinference", "gen_ai", "openllmetry"
KIND = "openinference.span.kind"

#: generation settings kept with each call for a replay (``LLMExchange.wire["request"]["options"]``)
SETTINGS = ("temperature", "top_p", "top_k", "max_tokens", "max_completion_tokens", "seed", "stop",
            "frequency_penalty", "presence_penalty", "n")
_ROLES = {"human": "user", "ai": "assistant", "model": "assistant", "developer": "system", "function": "tool"}


class Call(NamedTuple):
    """One LLM call as any convention records it."""

    turns: list[dict[str, Any]]  # its input, in order: footprint_lab turns, system turns included
    instructions: list[str]  # system text recorded apart from the messages (gen_ai.system_instructions)
    reply: dict[str, Any] | None  # the assistant turn it answered with (None: not recorded)
    tools: list[dict[str, Any]]  # the tool definitions it was sent, as footprint_lab tool schemas
    model: str
    response_model: str | None
    usage: UsageCounts
    stop: str | None
    settings: dict[str, Any]
    present: bool  # whether its messages were recorded with their content
    unread: int = 0  # message parts it was sent that are not text (an image, a file, audio): not imported


class ToolRun(NamedTuple):
    """One tool execution: its call id when the span names it, its tool, arguments and result."""

    call_id: str | None
    name: str
    args: dict[str, Any] | None
    result: Any
    present: bool


class Document(NamedTuple):
    """One retrieved document."""

    id: str | None
    content: str
    score: float | None


# -- telling a span's convention and role -------------------------------------------------------------------


def convention(attributes: Mapping[str, Any]) -> str:
    if KIND in attributes:
        return OPENINFERENCE
    if "gen_ai.prompt" in attributes or "gen_ai.completion" in attributes:
        return OPENLLMETRY
    return GENAI


def role(attributes: Mapping[str, Any], name: str) -> str:
    """``agent`` (a run of its own), ``call``, ``tool``, ``retrieval`` or ``""`` for a span read past."""
    found = convention(attributes)
    if found == OPENINFERENCE:
        kind = str(attributes[KIND]).upper()
        return {"LLM": "call", "TOOL": "tool", "RETRIEVER": "retrieval", "RERANKER": "retrieval"}.get(kind, "")
    if found == OPENLLMETRY:
        return "call"
    if attributes.get("traceloop.span.kind") == "tool":
        return "tool"
    operation = _operation(attributes, name)
    if operation == "invoke_agent":
        return "agent"
    if operation in ("chat", "text_completion", "generate_content"):
        return "call"
    return "tool" if operation == "execute_tool" else ""


def _operation(attributes: Mapping[str, Any], name: str) -> str:
    """The GenAI operation: ``gen_ai.operation.name``, else the first word of the span's name (pydantic-ai's older
    names mapped)."""
    operation = attributes.get("gen_ai.operation.name")
    if isinstance(operation, str) and operation:
        return operation
    if name.startswith("agent run"):
        return "invoke_agent"
    if name.startswith("running tool"):
        return "execute_tool"
    return name.split(" ", 1)[0]


def recorded(attributes: Mapping[str, Any]) -> bool:
    """Whether an LLM span records a call (its messages or its usage): LlamaIndex wraps each call in LLM spans that
    record neither, and those are read past."""
    if convention(attributes) != OPENINFERENCE:
        return True
    return any(key in attributes for key in ("llm.input_messages", "llm.output_messages", "llm.prompts",
                                            "llm.token_count.prompt", "llm.token_count.completion"))


def agent_name(attributes: Mapping[str, Any]) -> str | None:
    for key in ("gen_ai.agent.name", "agent.name", "traceloop.entity.name"):
        value = attributes.get(key)
        if isinstance(value, str) and value and (key != "traceloop.entity.name"
                                                 or attributes.get("traceloop.span.kind") == "agent"):
            return value
    return None


# -- nested items ---------------------------------------------------------------------------------------


def _indexed(fields: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The second-level indexed fields of one nested item (``tool_calls.0.tool_call.id``...), in index order."""
    items: dict[int, dict[str, Any]] = {}
    size = len(prefix)
    for key, value in fields.items():
        if key.startswith(prefix):
            index, _, rest = key[size:].partition(".")
            if index.isascii() and index.isdigit() and len(index) <= MAX_INDEX_DIGITS and rest:
                items.setdefault(int(index), {})[rest] = value
    return [items[n] for n in sorted(items)]


# -- reading values -----------------------------------------------------------------------------------------


def _text(value: Any, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return str(value)
    raise OtelSpanFieldError(where, f"is {describe_shape(value)}, not text")


def _args(raw: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict: JSON text decoded; anything else kept under ``input``."""
    if isinstance(raw, str):
        try:
            raw = json_value(raw) if raw.strip() else {}
        except ValueError:  # not JSON, or nested too deep to be arguments: kept as the text it is
            return {"input": raw}
    if isinstance(raw, Mapping):
        return dict(raw)
    return {} if raw is None else {"input": raw}


def _json(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json_value(raw)
        except ValueError:
            return None
    return raw


def _count(attributes: Mapping[str, Any], *keys: str) -> int:
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return 0


def schema(definition: Any) -> dict[str, Any] | None:
    """A tool definition (OpenAI's ``{"type": "function", "function": {...}}``, or flat) as a footprint_lab schema."""
    if not isinstance(definition, Mapping):
        return None
    nested = definition.get("function")
    function: Mapping[str, Any] = nested if isinstance(nested, Mapping) else definition
    parameters = function.get("parameters")
    if parameters is None:
        parameters = function.get("input_schema")
    parameters = _json(parameters)
    return {"name": str(function.get("name") or ""), "description": str(function.get("description") or ""),
            "input_schema": dict(parameters) if isinstance(parameters, Mapping) else {}}


def settings_of(attributes: Mapping[str, Any], convention_: str) -> dict[str, Any]:
    """The generation settings recorded for a call (temperature, top_p, max_tokens...), by their wire names."""
    if convention_ == OPENINFERENCE:
        found = _json(attributes.get("llm.invocation_parameters"))
        found = found if isinstance(found, Mapping) else {}
        return {key: found[key] for key in SETTINGS if key in found and found[key] is not None}
    return {key: attributes[f"gen_ai.request.{key}"] for key in SETTINGS
            if attributes.get(f"gen_ai.request.{key}") is not None}


def _stop(value: Any) -> str | None:
    if isinstance(value, Iterable) and not isinstance(value, str):
        values = list(value)
        return str(values[-1]) if values else None
    return None if value is None else str(value)


# -- the conventions' messages as footprint_lab turns --------------------------------------------------------


def _turn(role_: str, text: str | None, calls: list[dict[str, Any]], call_id: str | None,
          name: str | None) -> dict[str, Any]:
    role_ = _ROLES.get(role_, role_) or "user"
    if role_ == "tool":
        return {"role": "tool", "tool_call_id": call_id or "", "name": name or "", "content": text or ""}
    if role_ == "assistant":
        turn: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            turn["tool_calls"] = calls
        return turn
    return {"role": role_, "content": text or ""}


def flat_messages(items: Any, where: str) -> tuple[list[dict[str, Any]], bool]:
    """OpenInference's nested ``llm.*_messages`` items as turns, and whether content was recorded."""
    turns: list[dict[str, Any]] = []
    present = True
    for n, fields in enumerate(items if isinstance(items, list) else []):
        at = f"{where}[{n}]"
        text = _text(fields.get("message.content"), f"{at}.message.content")
        contents = _indexed(fields, "message.contents.")
        if text is None:
            parts = [_text(part.get("message_content.text"), f"{at}.message.contents")
                     for part in contents if part.get("message_content.type", "text") == "text"]
            text = "\n".join(p for p in parts if p is not None) if parts else None
        calls = [{"id": _text(call.get("tool_call.id"), f"{at}.tool_call.id") or "",
                  "name": _text(call.get("tool_call.function.name"), f"{at}.tool_call.function.name") or "",
                  "args": _args(call.get("tool_call.function.arguments"))}
                 for call in _indexed(fields, "message.tool_calls.")]
        if not calls and fields.get("message.function_call_name") is not None:
            calls = [{"id": "", "name": _text(fields["message.function_call_name"], f"{at}.function_call_name") or "",
                      "args": _args(fields.get("message.function_call_arguments_json"))}]
        role_ = _text(fields.get("message.role"), f"{at}.message.role") or ""
        present &= text is not None or bool(calls) or bool(contents)  # an image alone is content (left out)
        turns.append(_turn(role_, text, calls, _text(fields.get("message.tool_call_id"), f"{at}.tool_call_id"),
                           _text(fields.get("message.name"), f"{at}.message.name")))
    return turns, present


def responses_reply(value: Any) -> tuple[list[dict[str, Any]], UsageCounts | None]:
    """The reply an OpenAI Responses object (or a list of them) in ``output.value`` holds, as turns, with its usage:
    the OpenAI Agents SDK's instrumentor writes only that for a streamed run (no ``llm.output_messages``)."""
    data = _json(value)
    turns: list[dict[str, Any]] = []
    usage: UsageCounts | None = None
    for response in data if isinstance(data, list) else [data]:
        if not isinstance(response, Mapping) or response.get("object") != "response":
            continue
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        for item in response.get("output") or []:
            if not isinstance(item, Mapping):
                continue
            if item.get("type") == "message":
                texts += [part["text"] for part in item.get("content") or [] if isinstance(part, Mapping)
                          and part.get("type") == "output_text" and isinstance(part.get("text"), str)]
            elif item.get("type") == "function_call":
                calls.append({"id": str(item.get("call_id") or item.get("id") or ""),
                              "name": str(item.get("name") or ""), "args": _args(item.get("arguments"))})
        if texts or calls:
            turns.append(_turn("assistant", "".join(texts), calls, None, None))
        counts = response.get("usage")
        if isinstance(counts, Mapping):
            usage = UsageCounts(_count(counts, "input_tokens"), _count(counts, "output_tokens"), 0, 0, False)
    return turns, usage


def unread_parts(attributes: Mapping[str, Any], found: str) -> int:
    """How many parts of a call's input messages are neither text nor a tool call or result (an image, a file,
    audio): the import keeps text only, so it says how many it left out."""
    if found == OPENINFERENCE:
        items = attributes.get("llm.input_messages")
        return sum(1 for fields in items if isinstance(fields, Mapping)
                   for part in _indexed(fields, "message.contents.")
                   if part.get("message_content.type", "text") != "text") if isinstance(items, list) else 0
    messages = attributes.get("gen_ai.input.messages") if found != OPENLLMETRY else None
    return sum(1 for message in messages if isinstance(message, Mapping) and isinstance(message.get("parts"), list)
               for part in message["parts"] if isinstance(part, Mapping)
               and part.get("type", "text") not in ("text", "tool_call", "tool_call_response")
               ) if isinstance(messages, list) else 0


def legacy_messages(items: Any, where: str) -> tuple[list[dict[str, Any]], bool]:
    """OpenLLMetry's nested ``gen_ai.prompt`` / ``gen_ai.completion`` items as turns, and whether content was there."""
    turns: list[dict[str, Any]] = []
    present = True
    for n, fields in enumerate(items if isinstance(items, list) else []):
        at = f"{where}[{n}]"
        text = fields.get("content")
        if text is not None and not isinstance(text, str):
            text = _text(text, f"{at}.content")
        parts = _json(text) if isinstance(text, str) and text.startswith("[") else None
        if isinstance(parts, list):  # content parts written as JSON text: their text joined
            text = "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, Mapping) and "text" in p)
        calls = [{"id": _text(call.get("id"), f"{at}.tool_calls.id") or "",
                  "name": _text(call.get("name"), f"{at}.tool_calls.name") or "",
                  "args": _args(call.get("arguments"))} for call in _indexed(fields, "tool_calls.")]
        present &= text is not None or bool(calls)
        turns.append(_turn(_text(fields.get("role"), f"{at}.role") or "", text, calls,
                           _text(fields.get("tool_call_id"), f"{at}.tool_call_id"), None))
    return turns, present


def genai_messages(messages: Any) -> tuple[list[dict[str, Any]], bool]:
    """The current GenAI messages (``parts``: ``text``, ``tool_call``, ``tool_call_response``) as turns.

    A tool's result becomes its own ``tool`` turn (one per ``tool_call_response`` part), as footprint_lab's
    transcript holds it; an assistant turn keeps its text and tool calls; each text part of a system
    message is a system turn of its own.
    """
    turns: list[dict[str, Any]] = []
    present = True
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, Mapping):
            continue
        role_ = message.get("role")
        parts = message.get("parts")
        parts = [p for p in parts if isinstance(p, Mapping)] if isinstance(parts, list) else []
        texts: list[str] = []
        for part in parts:
            if part.get("type", "text") == "text":
                if "content" in part:
                    texts.append(str(part["content"]))
                else:
                    present = False
        if role_ == "system":
            turns += [{"role": "system", "content": text} for text in texts]
            continue
        for part in parts:
            if part.get("type") == "tool_call_response":
                present &= "result" in part or "response" in part
                result = part.get("result", part.get("response"))
                turns.append({"role": "tool", "tool_call_id": str(part.get("id") or ""),
                              "name": str(part.get("name") or ""), "content": result_text(result or "")})
        calls = [{"id": str(p.get("id") or ""), "name": str(p.get("name") or ""), "args": _args(p.get("arguments"))}
                 for p in parts if p.get("type") == "tool_call"]
        text = "\n".join(texts)
        if role_ == "assistant":
            turns.append(_turn("assistant", text, calls, None, None))
        elif text or not any(p.get("type") == "tool_call_response" for p in parts):
            turns.append({"role": str(_ROLES.get(str(role_), role_) or "user"), "content": text})
    return turns, present


def _last_assistant(turns: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((t for t in reversed(turns) if t["role"] == "assistant"), None)


# -- reading a span -------------------------------------------------------------------------------------------


def read_call(attributes: Mapping[str, Any]) -> Call:
    """An LLM-call span, whichever convention wrote it."""
    found = convention(attributes)
    instructions: list[str] = []
    if found == OPENINFERENCE:
        turns, present = flat_messages(attributes.get("llm.input_messages"), "llm.input_messages")
        out, out_present = flat_messages(attributes.get("llm.output_messages"), "llm.output_messages")
        streamed: UsageCounts | None = None
        if "llm.output_messages" not in attributes:  # a streamed run: the reply only in output.value
            out, streamed = responses_reply(attributes.get("output.value"))
        present &= "llm.input_messages" in attributes
        tools = [schema(_json(t.get("tool.json_schema"))) for t in attributes.get("llm.tools") or []]
        model = attributes.get("llm.request.model_name") or attributes.get("llm.model_name")
        response_model = attributes.get("llm.response.model_name") or attributes.get("llm.model_name")
        usage = UsageCounts(_count(attributes, "llm.token_count.prompt"),
                            _count(attributes, "llm.token_count.completion"),
                            _count(attributes, "llm.token_count.prompt_details.cache_read"),
                            _count(attributes, "llm.token_count.prompt_details.cache_write"), False)
        if streamed is not None and not (usage.input_tokens or usage.output_tokens):
            usage = streamed
        stop = _stop(attributes.get("llm.finish_reason"))
    else:
        if found == OPENLLMETRY:
            turns, present = legacy_messages(attributes.get("gen_ai.prompt"), "gen_ai.prompt")
            out, out_present = legacy_messages(attributes.get("gen_ai.completion"), "gen_ai.completion")
            tools = [schema(f) for f in attributes.get("llm.request.functions") or []]
            completions = attributes.get("gen_ai.completion") or []
            stop = _stop(completions[-1].get("finish_reason") if completions else None)
        else:
            turns, present = genai_messages(attributes.get("gen_ai.input.messages"))
            out, out_present = genai_messages(attributes.get("gen_ai.output.messages"))
            system = attributes.get("gen_ai.system_instructions")
            parts = system if isinstance(system, list) else []
            for part in parts:
                if isinstance(part, Mapping) and part.get("type", "text") == "text":
                    if "content" in part:
                        instructions.append(str(part["content"]))
                    else:
                        present = False
            present &= "gen_ai.input.messages" in attributes
            definitions = attributes.get("gen_ai.tool.definitions")
            tools = [schema(d) for d in definitions] if isinstance(definitions, list) else []
            stop = _stop(attributes.get("gen_ai.response.finish_reasons"))
        model = attributes.get("gen_ai.request.model")
        response_model = attributes.get("gen_ai.response.model")
        usage = UsageCounts(_count(attributes, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"),
                            _count(attributes, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"),
                            _count(attributes, "gen_ai.usage.cache_read.input_tokens",
                                   "gen_ai.usage.cache_read_input_tokens"),
                            _count(attributes, "gen_ai.usage.cache_creation.input_tokens",
                                   "gen_ai.usage.cache_creation_input_tokens"), False)
    return Call(turns, instructions, _last_assistant(out), [t for t in tools if t is not None],
                model if isinstance(model, str) else "",
                response_model if isinstance(response_model, str) else None, usage, stop,
                settings_of(attributes, found), present and out_present, unread_parts(attributes, found))


def read_tool(attributes: Mapping[str, Any], name: str) -> ToolRun:
    """A tool-execution span, whichever convention wrote it."""
    found = convention(attributes)
    if found == OPENINFERENCE:
        call_id = attributes.get("tool_call.id")
        tool = attributes.get("tool.name") or attributes.get("tool_call.function.name") or name
        raw = attributes.get("tool_call.function.arguments", attributes.get("input.value"))
        present = "output.value" in attributes
        return ToolRun(call_id if isinstance(call_id, str) and call_id else None, str(tool),
                       _args(raw) if raw is not None else None, attributes.get("output.value"), present)
    if attributes.get("traceloop.span.kind") == "tool":
        raw = _json(attributes.get("traceloop.entity.input"))
        kwargs = raw.get("kwargs") if isinstance(raw, Mapping) else None
        return ToolRun(None, str(attributes.get("traceloop.entity.name") or name),
                       dict(kwargs) if isinstance(kwargs, Mapping) else None,
                       attributes.get("traceloop.entity.output"), "traceloop.entity.output" in attributes)
    call_id = attributes.get("gen_ai.tool.call.id")
    args = attributes.get("gen_ai.tool.call.arguments")
    present = "gen_ai.tool.call.result" in attributes or "gen_ai.tool.call.arguments" in attributes
    return ToolRun(call_id if isinstance(call_id, str) and call_id else None,
                   str(attributes.get("gen_ai.tool.name") or name.split(" ", 1)[-1]),
                   args if isinstance(args, dict) else (None if args is None else _args(args)),
                   attributes.get("gen_ai.tool.call.result"), present)


def read_documents(attributes: Mapping[str, Any]) -> list[Document]:
    """The documents a retriever (or reranker) span returned, in rank order."""
    items = attributes.get("retrieval.documents") or attributes.get("reranker.output_documents") or []
    found: list[Document] = []
    for n, fields in enumerate(items):
        at = f"retrieval.documents[{n}]"
        content = _text(fields.get("document.content"), f"{at}.document.content")
        if content is None:
            continue
        doc_id = fields.get("document.id")
        if doc_id is None:  # LangChain's instrumentation records a document's metadata, not its id
            metadata = _json(fields.get("document.metadata"))
            doc_id = next((metadata[k] for k in ("id", "doc_id", "document_id") if isinstance(metadata, Mapping)
                           and isinstance(metadata.get(k), str | int)), None)
        score = fields.get("document.score")
        found.append(Document(None if doc_id is None else _text(doc_id, f"{at}.document.id"), content,
                              float(score) if isinstance(score, int | float) and not isinstance(score, bool)
                              else None))
    return found


def tool_result(run: ToolRun) -> str:
    """A tool's result as the text a model reads: text as it is, other values as JSON."""
    raw = run.result
    return raw if isinstance(raw, str) else result_text(raw if raw is not None else "")
