"""``from_spans``: a foreign agent's OpenTelemetry spans made into footprint_lab runs.

Rule kept: an imported run is a real ``Recording``, written through the same
:class:`~footprint_lab.record.recorder.Recorder` steps an ``Agent`` writes (``seed``, then per
LLM call ``assemble`` and ``call-llm``, one ``tool`` step per tool span, a ``retrieve`` step per
retriever span, ``final``), so every view and explanation works on it unchanged. Whichever
convention wrote a span (:mod:`footprint_lab.otel._semconv`: OpenInference, GenAI current or
older), it states only what the spans show: the pieces each call read (system text, messages,
tool definitions, retrieved documents whose text the call was sent), each call's response,
usage and generation settings, each tool's arguments and result, the timings. Where a piece was
declared and which rule let it in are not in the spans, so the recording says so
(``meta["imported"]``) and the custody walk marks those hops not proven rather than inventing
them. Spans recorded without message content import with a note naming the setting to switch on.

Each call's request is recorded exactly, ready to be sent again: its system text, its messages
in order (``recording.request_messages(exchange)``: the transcript's first ``message_count``
turns, then the call's ``injected_messages`` when its input does not continue the transcript, as
when a framework makes a second, separate conversation), its tool definitions, its model and,
in ``exchange.wire["request"]["options"]``, the generation settings the span recorded
(temperature, top_p, max_tokens...). A tool result joins the transcript as the next call was
sent it, when a later call shows it.

Pattern: group spans by their nearest ``invoke_agent`` ancestor (one run each; by trace when
there is none: OpenInference's AGENT spans mark steps of one trace, not runs), keep the innermost
of LLM spans nested in one another (a framework's call wrapping its client's), replay them in
start order into a recorder, and hand the ``Run`` the recorder's build, exactly as an ``Agent``
does (the recording is materialised on first access). Which spans make a run is
:mod:`footprint_lab.otel._span_groups`'s; how a call's span lays out as a request (its system parts,
turns and placed documents), :mod:`footprint_lab.otel._call_layout`'s.

Role: the import half of :mod:`footprint_lab.otel`; no ``opentelemetry`` import.
"""

from __future__ import annotations

import warnings
from typing import Any

from footprint_lab.base.progress import PROGRESS_FIX, SHOW_AFTER, Progress, Wanted, progress_problem, stopping
from footprint_lab.base.refusal import describe_shape
from footprint_lab.core.run import Run
from footprint_lab.core.turn import turn_text
from footprint_lab.otel._call_layout import (
    BLANK_LINE,
    around_documents,
    named_pieces,
    request_wire,
    split_system,
    turn_key,
    turn_kind,
)
from footprint_lab.otel._semconv import (
    Call,
    Document,
    ToolRun,
    read_call,
    read_documents,
    read_tool,
    role,
    tool_result,
)
from footprint_lab.otel._span_groups import group_runs
from footprint_lab.otel._spans import CUT, SpanData, read_spans
from footprint_lab.otel.inputs import Spans
from footprint_lab.otel.refusals import OtelExportError, OtelSpansError
from footprint_lab.record.build import build_recording
from footprint_lab.record.captured import CapturedPiece, captured_piece
from footprint_lab.record.recorder import Recorder
from footprint_lab.record.recording import Recording
from footprint_lab.record.schema import (
    ANSWER,
    HISTORY,
    INJECTED_MESSAGES,
    INPUT_MESSAGE,
    KIND_TOOL_RESULT,
    KIND_USER,
    LAST_RESPONSE,
    MESSAGES,
    SYSTEM,
    TOOLS,
    USER_MESSAGE,
)
from footprint_lab.redact.policy import Redaction

#: What an imported recording says about the hops spans cannot prove (read by the custody walk).
IMPORTED_NOTE = ("imported from OpenTelemetry spans: they do not say which declaration made a piece or which rule "
                 "let it in")
CONTENT_OFF_NOTE = ("the spans carry no message content, so the pieces are empty: switch content capture on "
                    "(pydantic-ai: InstrumentationSettings(include_content=True); OpenInference: leave "
                    "OPENINFERENCE_HIDE_INPUTS / OPENINFERENCE_HIDE_OUTPUTS unset, or pass "
                    "TraceConfig(hide_inputs=False, hide_outputs=False); OpenLLMetry: TRACELOOP_TRACE_CONTENT=true; "
                    "others: "
                    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true) so the spans hold the messages")
#: What makes spans importable, when none of those given is.
UNREAD_FIX = ("Record the agent with an OpenInference instrumentor (openinference-instrumentation-langchain, "
              "-openai-agents, -llama-index: instrument(tracer_provider=...)) or one that writes the OpenTelemetry "
              "GenAI conventions (gen_ai.operation.name; pydantic-ai's InstrumentationSettings), then import its spans")
UNREAD_NOTE = ("message parts that are not text (an image, a file, audio) are not imported: the pieces hold the "
               "text alone, and a replay sends those requests without them")
CUT_NOTE = ("some spans hold text cut short by the SDK's attribute length limit (a text exactly as long as the "
            "limit, or messages as JSON text that no longer reads, read as missing), so a prompt may have lost its "
            "end. Raise it (TracerProvider(span_limits=SpanLimits(max_attribute_length=...)) "
            "or OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT) so the spans hold whole messages")
#: The source id of a user turn that is not the run's input, before its number (``user-turn#1``).
USER_TURN = "user-turn#"
#: Why a retrieved document no call was sent is kept as a skipped piece.
NOT_SENT = "retrieved, but no LLM call that followed was sent its text"
#: What a stopped import kept, and where.
KEPT = "the {done} imported: footprint_lab.otel.last_stopped()"
#: Where an imported call's request records what a span says of it beyond the messages (``LLMExchange.wire``).
WIRE_SOURCE = "opentelemetry"


class ContentCaptureWarning(UserWarning):
    """Spans were imported without message content (capture was off); the run's ``meta`` says how to switch it on."""


def from_spans(spans: Spans, *, progress: Wanted = None, redact: Redaction | None = None) -> list[Run]:
    """One ``Run`` per agent run in ``spans`` (per root ``invoke_agent`` span, or per trace without one).

    ``spans``: the SDK's finished spans, OTLP JSON (a dict, its text, JSON lines, a path to a file), or
    OTLP protobuf (an ``ExportTraceServiceRequest``'s bytes, or a path to them). Runs come in the order
    they started. Spans are replayed into each run's recorder now; a run's ``Recording`` is built from it
    the first time it is asked for, as for a live run.

    ``progress``: by default a bar (in a notebook, or a line on a terminal) once an import of many runs
    lasts a moment; ``True`` shows it at once, ``False`` never, a function ``(done, total)`` hears each run.
    Stopped (an interrupt), it raises ``Stopped`` in one line; the runs imported so far are kept for
    ``footprint_lab.otel.last_stopped()``.

    ``redact``: a :class:`~footprint_lab.Redaction` policy each run is recorded under, as an ``Agent(redact=...)``
    records its own: what it covers is masked in every record, view and export of the imported runs (the spans
    themselves are left as they are).
    """
    problem = progress_problem(progress)
    if problem is not None:
        raise OtelExportError("progress", problem, PROGRESS_FIX, door="from_spans")
    check_redact("from_spans", redact)
    read = read_spans(spans)
    groups = group_runs(read)
    if read and not groups:  # spans of a framework or convention this does not read: never an empty list in silence
        raise OtelSpansError(f"{len(read)} span(s), none of them an LLM call, agent, tool or retriever span in a "
                             "convention this reads", UNREAD_FIX)
    runs: list[Run] = []
    silent = cut = unread = 0
    bar = Progress(len(groups), "from_spans", progress, unit="runs imported", after=SHOW_AFTER)
    with stopping(bar, lambda: runs, KEPT):
        for group in groups:  # one at a time: what a run's spans say is dropped once replayed
            importer = _Importer(*group, policy=redact)
            runs.append(importer.replay())
            silent += not importer.present
            cut += importer.cut
            unread += importer.unread > 0
            bar.advance()
    if silent:
        warnings.warn(f"{silent} imported run(s): {CONTENT_OFF_NOTE}", ContentCaptureWarning, stacklevel=2)
    if cut:
        warnings.warn(f"{cut} imported run(s): {CUT_NOTE}", ContentCaptureWarning, stacklevel=2)
    if unread:
        warnings.warn(f"{unread} imported run(s): {UNREAD_NOTE}", ContentCaptureWarning, stacklevel=2)
    return runs


def check_redact(door: str, redact: Any) -> None:
    """Refuse a ``redact=`` that is no policy, before anything is imported."""
    if redact is not None and not isinstance(redact, Redaction):
        raise OtelExportError("redact", describe_shape(redact), "Pass a Redaction, e.g. Redaction.standard() or "
                              "Redaction(keys=['password']), or None", door=door)


class _Importer:
    """Replays one agent run's spans into a recorder, the way an ``Agent`` writes its own."""

    def __init__(self, root: SpanData | None, frame: SpanData | None, spans: list[SpanData],
                 name: str | None, *, policy: Redaction | None = None) -> None:
        self.root, self.frame, self.spans, self.name = root, frame, spans, name
        self.policy = policy
        known = root.attributes.get("footprint_lab.run_id") if root else None
        trace = (frame or spans[0]).trace_id
        self.rec = Recorder(known if isinstance(known, str) else f"otel-{root.span_id if root else trace}",
                            policy=policy.for_run() if policy is not None else None)
        self.history: list[dict[str, Any]] = []
        self.keys: list[tuple[Any, ...]] = []  # each transcript turn's turn_key, in step with history
        self.asked: dict[str, tuple[str, str, dict[str, Any]]] = {}  # tool call id -> (call step, tool, arguments)
        self.answered: set[str] = set()
        self.iteration = 0
        self.present = True
        self.cut = any(span.attributes.get(CUT) for span in spans)  # content cut short, read as missing
        self.unread = 0  # message parts sent that are not text, left out
        self.answer: str | None = None
        self.message = ""  # the run's input: the first call's last user turn
        self.user_turns = 0  # the other user turns given ids of their own so far
        self.read: list[tuple[SpanData, str, Any]] = []  # each span with its role and what it says
        self.shown: dict[str, str] = {}  # tool call id -> the result text the first call shown it was sent
        self.documents: list[tuple[Document, str, int]] = []  # retrieved so far: (document, retrieve step, rank)
        self.sent: set[int] = set()  # the documents a call was sent, by their place in self.documents
        for span in spans:
            kind = role(span.attributes, span.name)
            what: Any = (read_tool(span.attributes, span.name) if kind == "tool" else read_documents(span.attributes)
                         if kind == "retrieval" else read_call(span.attributes))
            self.read.append((span, kind, what))
            if kind == "call":
                for turn in what.turns:
                    if turn["role"] == "tool":
                        self.shown.setdefault(turn["tool_call_id"], turn["content"])

    def replay(self) -> Run:
        """Replay the spans into the recorder; the run builds its recording when first asked."""
        rec = self.rec
        first = self.spans[0].start_ns if self.spans else (self.frame.start_ns if self.frame else 0)
        start = self.frame.start_ns if self.frame else first
        end = max([s.end_ns for s in self.spans] + ([self.frame.end_ns] if self.frame else [start]))
        rec.started_ns, rec.started_at = start, start / 1e9
        calls = [what for _, kind, what in self.read if kind == "call"]
        message, carried = "", []
        if calls:  # the run answers the first call's last user turn; the turns before it continue a conversation
            turns = split_system(calls[0].turns)[1]
            last = max((n for n, turn in enumerate(turns) if turn["role"] == "user"), default=None)
            if last is not None:
                message, carried = turns[last]["content"] or "", turns[:last]
        self.message = message
        self._seed(message, carried, first)
        for span, kind, what in self.read:
            if kind == "tool":
                self._tool(span, what)
            elif kind == "retrieval":
                self._retrieve(span, what)
            else:
                self._chat(span, what)
        self._final(end)
        # as for an Agent, a tool that raised is the tool step's error, not the run's (the framework handled it): the
        # run failed when its framing span did, or when its last call or retrieval did (a retried one that then held
        # does not fail it)
        steps = [span for span, kind, _ in self.read if kind != "tool"]
        failed = (self.frame is not None and self.frame.failed) or (bool(steps) and steps[-1].failed)
        self.read, self.shown, self.keys = [], {}, []  # the recorder keeps what the run needs
        root_attrs = self.root.attributes if self.root else {}
        rec.meta["imported"] = IMPORTED_NOTE
        rec.meta["otel"] = {"trace_id": (self.frame or self.spans[0]).trace_id,
                            "span_id": self.root.span_id if self.root else None}
        notes = [note for note, said in ((CONTENT_OFF_NOTE, not self.present), (CUT_NOTE, self.cut),
                                         (UNREAD_NOTE, self.unread)) if said]
        if notes:
            rec.meta["note"] = "; ".join(notes)
        status = "failed" if failed else "finished"
        runner = {"kind": "agent", "id": root_attrs.get("gen_ai.agent.id"),
                  "name": self.name or (self.frame.name if self.frame is not None and self.root is None else None)}
        answer = self.answer
        error = {"message": "a span of this run ended with an error status"} if failed else None

        scrubber: Any = rec.policy

        def build() -> Recording:
            return build_recording(rec, runner=runner, status=status, input={"message": message}, answer=answer,
                                   error=error, ended_ns=end,
                                   redaction=scrubber.report() if scrubber is not None else None)

        return Run(run_id=rec.run_id, status=status, answer=answer, build=build, shown_answer=rec.clean(answer),
                   clean=rec.clean if scrubber is not None else None, policy=self.policy)

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
        self.keys.append(turn_key(message))

    def _seed(self, message: str, carried: list[dict[str, Any]], at: int) -> None:
        """The run's input, after the earlier turns of the conversation its first call continued (``history#i``
        pieces, as a leg of an ``Agent``'s conversation carries them)."""
        self.rec.begin("seed")
        self.rec.write(INPUT_MESSAGE, "set", message)
        for index, turn in enumerate(carried):
            self._append(turn, turn_kind(turn), f"{HISTORY}{index}")
        self._append({"role": "user", "content": message}, KIND_USER, USER_MESSAGE)
        self.rec.end()
        self._times(at, at)

    def _evidence(self, turn: dict[str, Any], failed: bool = False) -> dict[str, Any]:
        call_id = turn["tool_call_id"]
        evidence: dict[str, Any] = {"tool": turn["name"], "is_error": failed}
        if call_id in self.asked:
            evidence["requested_by"] = self.asked[call_id][0]
        return evidence

    def _tool_turn(self, turn: dict[str, Any], failed: bool = False) -> None:
        if not turn["name"] and turn["tool_call_id"] in self.asked:
            turn["name"] = self.asked[turn["tool_call_id"]][1]
        self.answered.add(turn["tool_call_id"])
        self._append(turn, KIND_TOOL_RESULT, turn["tool_call_id"], **self._evidence(turn, failed))

    def _call_id(self, span: SpanData, run: ToolRun) -> str:
        """The tool call a tool span ran: the id it names, else the first call asked for by its tool not yet
        answered (LangChain's and LlamaIndex's tool spans name none), else the span's own id."""
        if run.call_id is not None:
            return run.call_id
        return next((call_id for call_id, (_, name, _) in self.asked.items()
                     if name == run.name and call_id not in self.answered), span.span_id)

    def _tool(self, span: SpanData, run: ToolRun) -> None:
        rec = self.rec
        call_id = self._call_id(span, run)
        args = run.args if run.args is not None else (self.asked[call_id][2] if call_id in self.asked else {})
        step_id = rec.begin("tool", self.iteration or None)
        rec.emit("tool_start", step_id, {"tool": run.name, "tool_call_id": call_id, "args": args})
        content = self.shown.get(call_id)
        # a tool that raised records no output; a result a later call was sent is content all the same
        self.present &= run.present or span.failed or content is not None
        self._tool_turn({"role": "tool", "tool_call_id": call_id, "name": run.name,
                         "content": tool_result(run) if content is None else content}, span.failed)
        rec.emit("tool_end", step_id, {"tool": run.name, "tool_call_id": call_id, "is_error": span.failed})
        status = "tool_error" if span.failed else "ok"
        rec.end(status)
        self._times(span.start_ns, span.end_ns, status)

    def _retrieve(self, span: SpanData, documents: list[Document]) -> None:
        step_id = self.rec.begin("retrieve", self.iteration or None)
        self.documents += [(document, step_id, rank) for rank, document in enumerate(documents, 1)]
        status = "error" if span.failed else "ok"
        self.rec.end(status)
        self._times(span.start_ns, span.end_ns, status)

    def _document(self, place: int, slot: Any, step: str, position: int) -> CapturedPiece:
        document, _, rank = self.documents[place]
        self.sent.add(place)
        evidence: dict[str, Any] = {"rank": rank, "document": document.id or f"document-{place + 1}"}
        if document.score is not None:
            evidence["score"] = document.score
        return captured_piece(slot, "rag", document.id or f"document-{place + 1}", document.content, step=step,
                              iteration=self.iteration, position=position, reason="retrieved", **evidence)

    def _chat(self, span: SpanData, call: Call) -> None:
        rec = self.rec
        self.iteration += 1
        iteration = self.iteration
        system, turns = split_system(call.turns)
        self.present &= call.present
        self.unread += call.unread
        step_id = rec.begin("assemble", iteration)
        pieces = rec.pieces
        # the leading system turns, then the instructions recorded apart, as pydantic-ai sends them (after its
        # system prompts, to OpenAI and Anthropic alike)
        texts = system + call.instructions
        named = named_pieces(span.attributes.get("footprint_lab.source_ids"), "system", len(texts))
        ids = named or [("base", f"system-part-{n + 1}") for n in range(len(system))] + [
            ("base", f"instructions-{n + 1}") for n in range(len(call.instructions))]
        system_ids: list[int] = []
        retrieved = [(place, document.content) for place, (document, _, _) in enumerate(self.documents)]
        placed: set[str] = set()  # the texts of documents that stand as pieces of their own in a system part
        for text, (kind, source_id) in zip(texts, ids, strict=True):
            layout = None if named else around_documents(text, retrieved)
            between = 0  # the text parts between documents so far: the first keeps the part's id
            for part, place in layout or [(text, None)]:
                system_ids.append(len(pieces))
                if place is None:
                    between += 1
                    pieces.append(self._piece("system", kind, source_id if between == 1 else f"{source_id}.{between}",
                                              part, step_id, len(system_ids) - 1))
                else:
                    pieces.append(self._document(place, "system", step_id, len(system_ids) - 1))
                    placed.add(part)
        schemas = call.tools
        tool_ids: list[int] = []
        named = named_pieces(span.attributes.get("footprint_lab.source_ids"), "tools", len(schemas))
        for position, schema in enumerate(schemas):
            kind, source_id = named[position] if named else ("registry", schema["name"])
            tool_ids.append(len(pieces))
            pieces.append(self._piece("tools", kind, source_id, schema["description"], step_id, position))
        same = 0  # how many turns this call's input shares with the transcript, from the start
        for had, turn in zip(self.keys, turns, strict=False):
            if had != turn_key(turn):
                break
            same += 1
        injected: list[dict[str, Any]] = []
        message_ids: list[int] = []
        continued = same == len(self.history)
        if continued:  # the input continues the transcript: its new turns join it
            for turn in turns[same:]:
                if turn["role"] == "tool":
                    self._tool_turn(turn)
                else:
                    self._append(turn, turn_kind(turn), step_id if turn["role"] == "assistant" else self._user(turn))
        else:  # another conversation (or a shortened one): this call's own turns, sent once
            injected = turns[same:]
            for position, turn in enumerate(injected, same):
                evidence = self._evidence(turn) if turn["role"] == "tool" else {}
                source = turn["tool_call_id"] if turn["role"] == "tool" else self._user(turn) if turn[
                    "role"] == "user" else step_id
                message_ids.append(len(pieces))
                pieces.append(self._piece("messages", turn_kind(turn), source, turn_text(turn), step_id, position,
                                          **evidence))
            rec.write(INJECTED_MESSAGES, "set", tuple(injected))
        count = len(self.history) if continued else same
        system_text = BLANK_LINE.join(texts)
        sent = [*self.history[:count], *injected]
        for place, (document, _, _) in enumerate(self.documents):  # retrieved documents this call was sent
            if document.content in placed:  # placed above (or the same text retrieved again: one piece stands)
                self.sent.add(place)
            elif document.content in system_text:
                system_ids.append(len(pieces))
                pieces.append(self._document(place, "system", step_id, len(texts)))
            else:
                where = next((n for n, turn in enumerate(sent) if document.content in (turn.get("content") or "")),
                             None)
                if where is not None:
                    message_ids.append(len(pieces))  # after the injected turns' pieces: the request's order kept
                    pieces.append(self._document(place, "messages", step_id, where))
        rec.write(SYSTEM, "set", system_text)
        rec.write(TOOLS, "set", tuple(s["name"] for s in schemas))
        rec.end()
        self._times(span.start_ns, span.start_ns)
        self._call(span, call, iteration, count, injected, schemas,
                   (system_text, system_ids, message_ids, tool_ids), continued)

    def _call(self, span: SpanData, call: Call, iteration: int, count: int, injected: list[dict[str, Any]],
              schemas: list[dict[str, Any]], assembled: tuple[str, list[int], list[int], list[int]],
              continued: bool) -> None:
        rec = self.rec
        system_text, system_ids, message_ids, tool_ids = assembled
        step_id = rec.begin("call-llm", iteration)
        rec.read(SYSTEM)
        rec.read(MESSAGES)
        rec.read(TOOLS)
        if injected:
            rec.read(INJECTED_MESSAGES)
        reply = call.reply or {"role": "assistant", "content": None}
        calls: list[dict[str, Any]] = reply.get("tool_calls", [])
        usage = call.usage
        rec.emit("llm_start", step_id, {"model": call.model, "iteration": iteration,
                                        "messages": count + len(injected), "tools": len(schemas)})
        rec.emit("llm_end", step_id, {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                                      "cache_read_tokens": usage.cache_read_tokens,
                                      "cache_write_tokens": usage.cache_write_tokens, "estimated": False,
                                      "tool_calls": len(calls), "stop_reason": call.stop})
        rec.exchanges.append({
            "step_id": step_id, "iteration": iteration, "model": call.model, "system": system_text,
            "message_count": count, "injected_messages": injected, "message_pieces": message_ids,
            "tools": schemas, "system_pieces": system_ids, "tool_pieces": tool_ids,
            "duration_ms": (span.end_ns - span.start_ns) / 1e6, "content": reply.get("content"),
            "tool_calls": calls, "stop_reason": call.stop, "response_model": call.response_model,
            "usage": tuple(usage), "wire": {"source": WIRE_SOURCE, "request": request_wire(call)},
        })
        for made in calls:
            self.asked[made["id"]] = (step_id, made["name"], made["args"])
        if continued:  # a reply to another conversation (an agent run as a tool, a chain's second prompt) is not
            self._append(reply, "assistant", step_id)  # this transcript's: the exchange records it
        rec.write(LAST_RESPONSE, "set", reply.get("content"))
        if reply.get("content") is not None:
            self.answer = reply["content"]
        status = "error" if span.failed else "ok"
        rec.end(status)
        self._times(span.start_ns, span.end_ns, status)

    def _user(self, turn: dict[str, Any]) -> str:
        """The source id of a user turn a call was sent: ``user-message`` for the run's input, else one of its own
        (a framework's prompt made from an earlier call's output, another conversation's question)."""
        if turn.get("content") == self.message:
            return USER_MESSAGE
        self.user_turns += 1
        return f"{USER_TURN}{self.user_turns}"

    def _piece(self, slot: Any, kind: str, source_id: str, text: str, step: str, position: int,
               **evidence: Any) -> CapturedPiece:
        return captured_piece(slot, kind, source_id, text, step=step, iteration=self.iteration, position=position,
                              **evidence)

    def _final(self, at: int) -> None:
        rec = self.rec
        rec.begin("final")
        for place, (document, step, rank) in enumerate(self.documents):
            if place not in self.sent:  # retrieved, never sent: kept, and said so
                rec.pieces.append(captured_piece("system", "rag", document.id or f"document-{place + 1}",
                                                 document.content, step=step, iteration=self.iteration or None,
                                                 position=-1, verdict="skipped", reason=NOT_SENT, rank=rank,
                                                 document=document.id or f"document-{place + 1}"))
        rec.read(LAST_RESPONSE)
        rec.write(ANSWER, "set", self.answer)
        rec.end()
        self._times(at, at)
