"""``from_spans``: a foreign agent's OpenTelemetry spans made into footprint_lab runs.

Rule kept: an imported run is a real ``Recording``, written through the same
:class:`~footprint_lab.engine._recorder.Recorder` steps an ``Agent`` writes (``seed``, then per
``chat`` span ``assemble`` and ``call-llm``, one ``tool`` step per ``execute_tool`` span,
``final``), so every view and explanation works on it unchanged. It states only what the spans
show: the pieces each call read (from ``gen_ai.input.messages``, ``gen_ai.system_instructions``
and ``gen_ai.tool.definitions``), each call's response and usage, each tool's arguments and
result, the timings. Where a piece was declared and which rule let it in are not in the spans,
so the recording says so (``meta["imported"]``) and the custody walk marks those hops not
proven rather than inventing them. Spans recorded without message content import with a note
naming the setting to switch on.

Pattern: group spans by their nearest ``invoke_agent`` ancestor (one run each; by trace when
there is none), replay them in start order into a recorder, and hand the ``Run`` the recorder's
build, exactly as an ``Agent`` does (the recording is materialised on first access).

Role: the import half of :mod:`footprint_lab.otel`; no ``opentelemetry`` import.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

from footprint_lab.core._run import Run
from footprint_lab.core._tools import result_text
from footprint_lab.core._turn import turn_text
from footprint_lab.engine._build import build_recording
from footprint_lab.engine._captured import CapturedPiece, UsageCounts, captured_piece
from footprint_lab.engine._recorder import Recorder
from footprint_lab.engine._recording import Recording
from footprint_lab.engine.schema import (
    ANSWER,
    INPUT_MESSAGE,
    KIND_TOOL_RESULT,
    KIND_USER,
    LAST_RESPONSE,
    MESSAGES,
    SYSTEM,
    TOOLS,
    USER_MESSAGE,
)
from footprint_lab.otel._spans import SpanData, json_value, operation, read_spans

#: What an imported recording says about the hops spans cannot prove (read by the custody walk).
IMPORTED_NOTE = ("imported from OpenTelemetry spans: they do not say which declaration made a piece or which rule "
                 "let it in")
CONTENT_OFF_NOTE = ("the spans carry no message content, so the pieces are empty: switch content capture on "
                    "(pydantic-ai: InstrumentationSettings(include_content=True); others: "
                    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true) so gen_ai.input.messages and "
                    "gen_ai.output.messages hold the text")


class ContentCaptureWarning(UserWarning):
    """Spans were imported without message content (capture was off); the run's ``meta`` says how to switch it on."""


def from_spans(spans: Any) -> list[Run]:
    """One ``Run`` per agent run in ``spans`` (per root ``invoke_agent`` span, or per trace without one).

    ``spans``: the SDK's finished spans, or OTLP JSON (``{"resourceSpans": [...]}``). Runs come
    in the order they started. Spans are replayed into each run's recorder now; a run's
    ``Recording`` is built from it the first time it is asked for, as for a live run.
    """
    importers = [_Importer(root, members) for root, members in _group(read_spans(spans))]
    runs = [importer.replay() for importer in importers]
    silent = sum(1 for importer in importers if not importer.present)
    if silent:
        warnings.warn(f"{silent} imported run(s): {CONTENT_OFF_NOTE}", ContentCaptureWarning, stacklevel=2)
    return runs


#: A span's identity (trace id, span id); ``(trace id, None)`` stands for a trace's spans outside any agent run.
_Key = tuple[str, str | None]


def _group(spans: list[SpanData]) -> list[tuple[SpanData | None, list[SpanData]]]:
    """Each run's root span (``None`` for a trace without ``invoke_agent``) with its chat and tool spans.

    :func:`~footprint_lab.otel._spans.read_spans` guarantees a parent is a span of the same trace
    and that no parent chain loops, so each walk up ends; each span's owner is worked out once.
    """
    by_key: dict[_Key, SpanData] = {(span.trace_id, span.span_id): span for span in spans}
    kinds = {key: operation(span) for key, span in by_key.items()}
    owners: dict[_Key, _Key] = {}

    def owner(key: _Key) -> _Key:
        """The key of the nearest enclosing ``invoke_agent`` span, or ``(trace_id, None)``."""
        walked: list[_Key] = []
        found: _Key = (key[0], None)
        current: _Key | None = key
        while current is not None:
            if current in owners:
                found = owners[current]
                break
            walked.append(current)
            if kinds[current] == "invoke_agent":
                found = current
                break
            parent = by_key[current].parent_id
            current = (current[0], parent) if parent is not None else None
        for key in walked:
            owners[key] = found
        return found

    groups: dict[_Key, list[SpanData]] = {}
    for key, kind in kinds.items():
        if kind in ("chat", "execute_tool", "text_completion", "generate_content"):
            groups.setdefault(owner(key), []).append(by_key[key])
    for key, kind in kinds.items():  # an agent run without a call still becomes a run
        if kind == "invoke_agent":
            groups.setdefault(key, [])
    out = [(by_key[key] if key[1] is not None else None, sorted(members, key=lambda s: s.start_ns))
           for key, members in groups.items()]
    return sorted(out, key=lambda g: g[0].start_ns if g[0] is not None else min(s.start_ns for s in g[1]))


def _text_of(parts: Any) -> tuple[str, bool]:
    """The text parts of a message joined, and whether content was there."""
    texts, present = _texts_of(parts)
    return "\n".join(texts), present


def _texts_of(parts: Any) -> tuple[list[str], bool]:
    """The text parts of a message (or of ``gen_ai.system_instructions``), and whether content was there."""
    texts: list[str] = []
    silent = False
    for part in parts if isinstance(parts, list) else []:
        if isinstance(part, dict) and part.get("type", "text") == "text":
            if "content" in part:
                texts.append(str(part["content"]))
            else:
                silent = True
    return texts, not silent


def _call_of(part: dict[str, Any]) -> dict[str, Any]:
    args = part.get("arguments")
    if isinstance(args, str):
        try:
            args = json_value(args)
        except ValueError:  # not JSON, or nested too deep to be arguments: kept as the text it is
            args = {"input": args}
    return {"id": str(part.get("id") or ""), "name": str(part.get("name") or ""),
            "args": args if isinstance(args, dict) else ({} if args is None else {"input": args})}


def conversation(messages: Any) -> tuple[list[str], list[dict[str, Any]], bool]:
    """GenAI messages as (system texts, footprint_lab turns, content present).

    A tool's result becomes its own ``tool`` turn (one per ``tool_call_response`` part), as
    footprint_lab's transcript holds it; an assistant turn keeps its text and tool calls.
    """
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    present = True
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        parts = message.get("parts")
        parts = parts if isinstance(parts, list) else []
        if role == "system":
            for part in parts:
                text, has = _text_of([part])
                present &= has
                if has:
                    system.append(text)
            continue
        for part in parts:
            if isinstance(part, dict) and part.get("type") == "tool_call_response":
                present &= "result" in part or "response" in part
                result = part.get("result", part.get("response"))
                turns.append({"role": "tool", "tool_call_id": str(part.get("id") or ""),
                              "name": str(part.get("name") or ""), "content": result_text(result or "")})
        text, has = _text_of(parts)
        present &= has
        calls = [_call_of(p) for p in parts if isinstance(p, dict) and p.get("type") == "tool_call"]
        if role == "assistant":
            turn: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                turn["tool_calls"] = calls
            turns.append(turn)
        elif text or not any(isinstance(p, dict) and p.get("type") == "tool_call_response" for p in parts):
            turns.append({"role": "user", "content": text})
    return system, turns, present


class _Importer:
    """Replays one agent run's spans into a recorder, the way an ``Agent`` writes its own."""

    def __init__(self, root: SpanData | None, spans: list[SpanData]) -> None:
        self.root = root
        self.spans = spans
        known = root.attributes.get("footprint_lab.run_id") if root else None
        self.rec = Recorder(known if isinstance(known, str) else f"otel-{root.span_id if root else spans[0].trace_id}")
        self.history: list[dict[str, Any]] = []
        self.asked: dict[str, str] = {}  # tool call id -> the call-llm step that asked for it
        self.answered: set[str] = set()
        self.iteration = 0
        self.present = True
        self.answer: str | None = None

    def replay(self) -> Run:
        """Replay the spans into the recorder; the run builds its recording when first asked."""
        rec = self.rec
        first = self.spans[0].start_ns if self.spans else (self.root.start_ns if self.root else 0)
        start = self.root.start_ns if self.root else first
        end = max([s.end_ns for s in self.spans] + ([self.root.end_ns] if self.root else [start]))
        rec.started_ns, rec.started_at = start, start / 1e9
        chats = [s for s in self.spans if operation(s) != "execute_tool"]
        message = ""
        if chats:
            _, turns, _ = conversation(chats[0].attributes.get("gen_ai.input.messages"))
            message = next((t["content"] for t in turns if t["role"] == "user"), "")
        self._seed(message, first)
        for span in self.spans:
            if operation(span) == "execute_tool":
                self._tool(span)
            else:
                self._chat(span)
        self._final(end)
        failed = (self.root is not None and self.root.failed) or any(s.failed for s in self.spans)
        root_attrs = self.root.attributes if self.root else {}
        name = root_attrs.get("gen_ai.agent.name") or next(
            (s.attributes["gen_ai.agent.name"] for s in self.spans if "gen_ai.agent.name" in s.attributes), None)
        rec.meta["imported"] = IMPORTED_NOTE
        rec.meta["otel"] = {"trace_id": (self.root or self.spans[0]).trace_id,
                            "span_id": self.root.span_id if self.root else None}
        if not self.present:
            rec.meta["note"] = CONTENT_OFF_NOTE
        status = "failed" if failed else "finished"
        runner = {"kind": "agent", "id": root_attrs.get("gen_ai.agent.id"), "name": name}
        answer = self.answer
        error = {"message": "a span of this run ended with an error status"} if failed else None

        def build() -> Recording:
            return build_recording(rec, runner=runner, status=status, input={"message": message}, answer=answer,
                                   error=error, ended_ns=end)

        return Run(run_id=rec.run_id, status=status, answer=answer, build=build)

    def _times(self, start_ns: int, end_ns: int, status: str = "ok") -> None:
        """Give the step just closed the span's own timings."""
        step = self.rec.steps[-1]
        self.rec.steps[-1] = (step[0], step[1], step[2], start_ns, end_ns, status)

    def _append(self, message: dict[str, Any], kind: str, source_id: str, **evidence: Any) -> None:
        rec = self.rec
        rec.write(MESSAGES, "append", message)
        rec.messages.append(message)
        rec.message_pieces.append(len(rec.pieces))
        rec.pieces.append(captured_piece("messages", kind, source_id, turn_text(message), step=rec.current,
                                         iteration=self.iteration or None, position=len(self.history),
                                         reason="conversation", **evidence))
        self.history.append(message)

    def _seed(self, message: str, at: int) -> None:
        self.rec.begin("seed")
        self.rec.write(INPUT_MESSAGE, "set", message)
        self._append({"role": "user", "content": message}, KIND_USER, USER_MESSAGE)
        self.rec.end()
        self._times(at, at)

    def _tool_turn(self, turn: dict[str, Any], failed: bool = False) -> None:
        call_id = turn["tool_call_id"]
        self.answered.add(call_id)
        evidence: dict[str, Any] = {"tool": turn["name"], "is_error": failed}
        if call_id in self.asked:
            evidence["requested_by"] = self.asked[call_id]
        self._append(turn, KIND_TOOL_RESULT, call_id, **evidence)

    def _tool(self, span: SpanData) -> None:
        rec = self.rec
        attrs = span.attributes
        call_id = str(attrs.get("gen_ai.tool.call.id") or span.span_id)
        name = str(attrs.get("gen_ai.tool.name") or span.name.split(" ", 1)[-1])
        args = span.attributes.get("gen_ai.tool.call.arguments")
        step_id = rec.begin("tool", self.iteration or None)
        rec.emit("tool_start", step_id, {"tool": name, "tool_call_id": call_id,
                                         "args": args if isinstance(args, dict) else {}})
        if "gen_ai.tool.call.result" not in attrs and "gen_ai.tool.call.arguments" not in attrs:
            self.present = False
        raw = attrs.get("gen_ai.tool.call.result")  # text is kept as the tool gave it; other values as JSON
        content = raw if isinstance(raw, str) else result_text(raw if raw is not None else "")
        self._tool_turn({"role": "tool", "tool_call_id": call_id, "name": name, "content": content}, span.failed)
        rec.emit("tool_end", step_id, {"tool": name, "tool_call_id": call_id, "is_error": span.failed})
        status = "tool_error" if span.failed else "ok"
        rec.end(status)
        self._times(span.start_ns, span.end_ns, status)

    def _chat(self, span: SpanData) -> None:
        rec = self.rec
        self.iteration += 1
        iteration = self.iteration
        system, turns, present = conversation(span.attributes.get("gen_ai.input.messages"))
        instructions_parts, has = _texts_of(span.attributes.get("gen_ai.system_instructions"))
        self.present &= present and has and "gen_ai.input.messages" in span.attributes
        step_id = rec.begin("assemble", iteration)
        pieces = rec.pieces
        system_ids: list[int] = []
        texts = (instructions_parts if instructions_parts else []) + system
        named = _named(span.attributes.get("footprint_lab.source_ids"), "system", len(texts))
        ids = named or [("base", f"instructions-{n + 1}") for n in range(len(instructions_parts))] + [
            ("base", f"system-part-{n + 1}") for n in range(len(system))]
        for position, (text, (kind, source_id)) in enumerate(zip(texts, ids, strict=True)):
            system_ids.append(len(pieces))
            pieces.append(self._piece("system", kind, source_id, text, step_id, position))
        definitions = span.attributes.get("gen_ai.tool.definitions")
        schemas = [_schema(d) for d in definitions if isinstance(d, dict)] if isinstance(definitions, list) else []
        tool_ids: list[int] = []
        named = _named(span.attributes.get("footprint_lab.source_ids"), "tools", len(schemas))
        for position, schema in enumerate(schemas):
            kind, source_id = named[position] if named else ("registry", schema["name"])
            tool_ids.append(len(pieces))
            pieces.append(self._piece("tools", kind, source_id, schema["description"], step_id, position))
        for turn in turns[len(self.history):]:  # turns the spans show only as this call's input
            if turn["role"] == "tool":
                self._tool_turn(turn)
            else:
                self._append(turn, turn["role"], step_id if turn["role"] == "assistant" else USER_MESSAGE)
        system_text = "\n\n".join(texts)
        rec.write(SYSTEM, "set", system_text)
        rec.write(TOOLS, "set", tuple(s["name"] for s in schemas))
        rec.end()
        self._times(span.start_ns, span.start_ns)
        step_id = rec.begin("call-llm", iteration)
        rec.read(SYSTEM)
        rec.read(MESSAGES)
        rec.read(TOOLS)
        attrs = span.attributes
        model = str(attrs.get("gen_ai.request.model") or "")
        _, out, out_present = conversation(span.attributes.get("gen_ai.output.messages"))
        self.present &= out_present
        reply: dict[str, Any] = next((t for t in reversed(out) if t["role"] == "assistant"),
                                     {"role": "assistant", "content": None})
        calls: list[dict[str, Any]] = reply.get("tool_calls", [])
        usage = UsageCounts(_int(attrs.get("gen_ai.usage.input_tokens")), _int(attrs.get("gen_ai.usage.output_tokens")),
                            _int(attrs.get("gen_ai.usage.cache_read.input_tokens")),
                            _int(attrs.get("gen_ai.usage.cache_creation.input_tokens")), False)
        rec.emit("llm_start", step_id, {"model": model, "iteration": iteration, "messages": len(self.history),
                                        "tools": len(schemas)})
        rec.emit("llm_end", step_id, {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                                      "cache_read_tokens": usage.cache_read_tokens,
                                      "cache_write_tokens": usage.cache_write_tokens, "estimated": False,
                                      "tool_calls": len(calls), "stop_reason": _stop(attrs)})
        rec.exchanges.append({
            "step_id": step_id, "iteration": iteration, "model": model, "system": system_text,
            "message_count": len(self.history), "tools": schemas, "system_pieces": system_ids,
            "tool_pieces": tool_ids, "duration_ms": (span.end_ns - span.start_ns) / 1e6,
            "content": reply.get("content"), "tool_calls": calls, "stop_reason": _stop(attrs),
            "response_model": attrs.get("gen_ai.response.model"), "usage": tuple(usage),
        })
        for call in calls:
            self.asked[call["id"]] = step_id
        self._append(reply, "assistant", step_id)
        rec.write(LAST_RESPONSE, "set", reply.get("content"))
        if reply.get("content") is not None:
            self.answer = reply["content"]
        status = "error" if span.failed else "ok"
        rec.end(status)
        self._times(span.start_ns, span.end_ns, status)

    def _piece(self, slot: Any, kind: str, source_id: str, text: str, step: str, position: int) -> CapturedPiece:
        return captured_piece(slot, kind, source_id, text, step=step, iteration=self.iteration, position=position)

    def _final(self, at: int) -> None:
        rec = self.rec
        rec.begin("final")
        rec.read(LAST_RESPONSE)
        rec.write(ANSWER, "set", self.answer)
        rec.end()
        self._times(at, at)


def _named(source_ids: Any, slot: str, count: int) -> list[tuple[str, str]] | None:
    """The (kind, source id) of each piece of a slot, when a footprint_lab export named them (and they fit)."""
    named = source_ids.get(slot) if isinstance(source_ids, dict) else None
    if not isinstance(named, list) or len(named) != count:
        return None
    if not all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in named):
        return None
    return [(kind, source_id) for kind, source_id in named]


def _schema(definition: dict[str, Any]) -> dict[str, Any]:
    """A GenAI tool definition as the tool schema footprint_lab records."""
    nested = definition.get("function")
    function: dict[str, Any] = nested if isinstance(nested, dict) else definition
    return {"name": str(function.get("name") or ""), "description": str(function.get("description") or ""),
            "input_schema": function.get("parameters") or function.get("input_schema") or {}}


def _stop(attrs: Any) -> str | None:
    reasons = attrs.get("gen_ai.response.finish_reasons")
    if isinstance(reasons, Iterable) and not isinstance(reasons, str):
        reasons = list(reasons)
        return str(reasons[-1]) if reasons else None
    return None if reasons is None else str(reasons)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
