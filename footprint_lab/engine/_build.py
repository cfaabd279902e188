"""A recording built from a recorder's capture, without validating again what is JSON-native already.

Rule kept here: the capture (``engine._recorder``) holds a run's evidence as tuples and columns of
plain values; :func:`build_recording` turns it into a ``Recording`` whose per-step lists are
``Rows`` made on first use, each record made by a constructor that skips pydantic's validation
(the values are JSON-native already). A secret the redaction policy learned only after some
records were captured is swept from each record as its row is made.

Role: engine layer, called by every runner when its run ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from footprint_lab.engine._captured import OVER_BUDGET, UsageCounts, as_dict, budget_reason
from footprint_lab.engine._exchange import LLMExchange, ResponseRecord, ToolCallRecord, ToolMargin, UsageRecord
from footprint_lab.engine._recall import swept_tokens
from footprint_lab.engine._recording import Recording, RunnerInfo
from footprint_lab.engine._records import (
    Annotation,
    Commit,
    CommitEntry,
    ContextPiece,
    Data,
    Decision,
    Event,
    Read,
    RuleEvidence,
    Step,
    content_hash,
    jsonable,
)
from footprint_lab.engine._rows import Rows
from footprint_lab.engine.schema import SCHEMA_VERSION

if TYPE_CHECKING:
    from footprint_lab.engine._recorder import Recorder


#: The fields of a context piece, besides its content and detail, that can carry text from a
#: model, a tool, a user or a document (a redaction policy covers them too).
_PIECE_TEXT = frozenset({"source_id", "reason"})


def _maker(cls: type[Data]) -> Any:
    """A constructor for ``cls`` from values already JSON-native and complete (every field given).

    What ``model_construct`` does, minus its per-field loop, and with one fields-set shared by
    every instance (every field is always set, and ``__setattr__`` only adds names to it). A
    validated model carries its own set and a copy of every value: about 1.2 kB per object,
    which for a long run's tens of thousands of events, reads and steps was most of the memory
    it kept (bench/bench_memory.py). Values come from the capture, which the runners build
    from JSON-native data, and ``Recording.model_validate_json`` of the dump gives back an
    equal recording (tests/test_engine.py).
    """
    fields_set = set(cls.model_fields)
    new = cls.__new__
    setattr_ = object.__setattr__

    def make(values: dict[str, Any]) -> Any:
        model = new(cls)
        setattr_(model, "__dict__", values)
        setattr_(model, "__pydantic_fields_set__", fields_set)
        setattr_(model, "__pydantic_extra__", None)
        setattr_(model, "__pydantic_private__", None)
        return model

    return make


(_step, _read, _commit, _entry, _decision, _rule, _event, _context_piece, _llm_exchange, _response, _usage,
 _tool_call, _tool_margin, _recording) = (_maker(model) for model in (
    Step, Read, Commit, CommitEntry, Decision, RuleEvidence, Event, ContextPiece, LLMExchange, ResponseRecord,
    UsageRecord, ToolCallRecord, ToolMargin, Recording))


def _unchanged(value: Any) -> Any:
    return value


def _sweeper(recorder: Recorder) -> Callable[[Any], Any]:
    """What masks again the secrets the policy learned only after some records were captured.

    A record is scrubbed as it happens, so one captured before a secret was learned (a
    password typed in the message, then put under a covered key by a tool call) still holds
    it; the Recording is the saved evidence, so each record is swept once more as its row is
    made. Only when the policy learned something (``RunScrubber.sweep``): otherwise, and for a
    run without a policy, nothing is done per record.
    """
    policy = recorder.policy
    sweep: Callable[[Any], Any] | None = getattr(policy, "sweep", None)
    return sweep if sweep is not None and getattr(policy, "learned", False) else _unchanged


def build_recording(
    recorder: Recorder,
    *,
    runner: dict[str, Any],
    status: str,
    input: dict[str, Any],
    answer: str | None,
    identity: dict[str, str] | None = None,
    stopped_early: dict[str, Any] | None = None,
    error: dict[str, Any] | None = None,
    ended_ns: int,
    children: list[Recording] | None = None,
    redaction: dict[str, Any] | None = None,
) -> Recording:
    """Materialise a recorder's capture into a ``Recording``.

    The recording's own fields are made now; its per-step lists are ``Rows`` over the
    capture, each made into models the first time it is read (the capture's lists only
    grow, so the counts taken here fix what the recording holds).
    """
    start = recorder.started_ns
    clean = recorder.clean
    captured_steps = recorder.steps

    def step(i: int) -> Step:
        s = captured_steps[i]
        return _step({"step_id": s[0], "stage": s[1], "iteration": s[2], "status": s[5],
                      "started_ms": (s[3] - start) / 1e6, "duration_ms": ((s[4] or s[3]) - s[3]) / 1e6})

    sweep = _sweeper(recorder)
    captured_reads = recorder.reads

    def read(i: int) -> Read:
        r = captured_reads[i]
        return _read({"step_id": r[0], "path": list(r[1]), "writer": r[2], "summary": sweep(r[3])})

    captured_commits, paths, verbs, values = recorder.commits, recorder.entry_paths, recorder.entry_verbs, \
        recorder.entry_values

    def commit(i: int) -> Commit:
        step_id, first, end = captured_commits[i]
        return _commit({"step_id": step_id, "entries": [
            _entry({"path": list(paths[j]), "verb": verbs[j], "value": sweep(jsonable(values[j]))})
            for j in range(first, end)
        ]})

    captured_decisions = recorder.decisions

    def decision(i: int) -> Decision:
        d = captured_decisions[i]
        return _decision({"step_id": d[0], "rule": d[1], "evidence": [
            _rule({"rule": n, "reads": sweep(jsonable(r)), "result": sweep(jsonable(x))}) for n, r, x in d[2]
        ], "chosen": sweep(d[3])})

    run_id = recorder.run_id
    seqs, types, event_steps, payloads, refs = (recorder.event_seqs, recorder.event_types, recorder.event_steps,
                                                recorder.event_payloads, recorder.event_refs)

    # a value learned late whose words went out in neighbouring streamed tokens: those tokens as they should read
    tokens = swept_tokens(types, event_steps, payloads, recorder.policy) if sweep is not _unchanged else {}

    def event(i: int) -> Event:
        type_, payload = types[i], tokens.get(i, payloads[i])
        # a routine event's payload (made from its record) holds paths and step ids, never a value: nothing to sweep
        payload = recorder.payload(type_, None, refs[i]) if payload is None else sweep(jsonable(payload))
        return _event({"seq": seqs[i], "run_id": run_id, "type": type_, "step_id": event_steps[i],
                       "payload": payload})

    captured_pieces, captured_exchanges = recorder.pieces, recorder.exchanges
    shared_tools: dict[int, Any] = {}
    return _recording({
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "path": recorder.path,
        "runner": RunnerInfo(**runner),
        "identity": clean(identity),
        "status": status,
        "input": clean(jsonable(input)),
        "answer": clean(answer),
        "stopped_early": clean(jsonable(stopped_early)),
        "error": clean(jsonable(error)),
        "started_at": recorder.started_at,
        "duration_ms": (ended_ns - start) / 1e6,
        "steps": Rows(count=len(captured_steps), make=step),
        "reads": Rows(count=len(captured_reads), make=read),
        "commits": Rows(count=len(captured_commits), make=commit),
        "decisions": Rows(count=len(captured_decisions), make=decision),
        "events": Rows(count=len(seqs), make=event),
        "context_pieces": Rows(count=len(captured_pieces),
                               make=lambda i: _piece(i, as_dict(captured_pieces[i]), clean)),
        "exchanges": Rows(count=len(captured_exchanges),
                          make=lambda i: _exchange(as_dict(captured_exchanges[i]), clean, recorder, shared_tools)),
        "messages": clean(jsonable(recorder.messages)),
        "message_pieces": list(recorder.message_pieces),
        "children": children or [],
        "annotations": [Annotation.model_validate(note) for note in clean(jsonable(recorder.annotations))],
        "redaction": redaction,
        "listener_errors": recorder.listener_errors,
        "meta": clean(jsonable(recorder.meta)),
        "seal": None,
    })


_PIECE_FIELDS = frozenset(ContextPiece.model_fields) - {"index", "content", "content_hash", "detail"}
_PIECE_ORDER = tuple(ContextPiece.model_fields)
_PIECE_DEFAULTS = {name: field.default for name, field in ContextPiece.model_fields.items() if name in _PIECE_FIELDS}


def _piece(index: int, piece: dict[str, Any], clean: Any) -> ContextPiece:
    """A captured piece (a ``CapturedPiece``, as a dict): its known fields as they are, its evidence keys
    into ``detail``.

    Runners capture pieces as flat tuples of plain values (see ``engine._captured``), so evidence
    such as a tool result's ``requested_by`` rides beside the fields and is gathered into
    ``detail`` here; a field a piece leaves out takes its default.
    """
    content = clean(piece["content"])
    values = dict(_PIECE_DEFAULTS)
    detail = {}
    for key, value in piece.items():
        if key in _PIECE_FIELDS:
            values[key] = clean(value) if key in _PIECE_TEXT else value
        elif key != "content":
            detail[key] = value
    if values["reason"] == OVER_BUDGET and values["verdict"] == "dropped":
        values["reason"] = budget_reason(values["slot"], detail["budget"], detail["used"], detail["size"])
    values.update(index=index, content=content, content_hash=content_hash(content), detail=jsonable(clean(detail)))
    return _context_piece({name: values[name] for name in _PIECE_ORDER})


_RESPONSE_FIELDS = ("content", "tool_calls", "stop_reason", "response_model", "usage", "tool_margins")


def _exchange(captured: dict[str, Any], clean: Any, recorder: Recorder, shared_tools: dict[int, Any]) -> LLMExchange:
    """A captured exchange (flat: the response's fields sit beside the request's) as a model.

    Its ``tools`` may be an index into the recorder's shared values (made JSON-native once per
    index, in ``shared_tools``: every call of a run is usually sent the same tools), and its
    tool calls (given ``reply`` instead of ``tool_calls``) those of the reply message, at that
    index in the transcript.
    """
    tools = captured.get("tools")
    if isinstance(tools, int):
        made = shared_tools.get(tools)
        if made is None:
            made = shared_tools[tools] = clean(jsonable(recorder.shared[tools]))
        captured = {**captured, "tools": ()}
    else:
        made = None
    if "reply" in captured:
        captured = {**captured, "tool_calls": recorder.messages[captured["reply"]].get("tool_calls", [])}
    data = clean(jsonable({k: v for k, v in captured.items() if k not in _RESPONSE_FIELDS}))
    if made is not None:
        data["tools"] = made  # one list for every exchange sent the same tools, as the run sent them
    response = clean(jsonable({k: captured.get(k) for k in _RESPONSE_FIELDS}))
    usage = response["usage"]
    # the captured usage counts (engine._captured.UsageCounts), a list once made JSON-native
    usage = dict(zip(UsageCounts._fields, usage, strict=True)) if isinstance(usage, list) else usage or {}
    calls = response["tool_calls"] or []
    data["response"] = _response({
        "content": response["content"],
        "tool_calls": [_tool_call({"id": c["id"], "name": c["name"], "args": c["args"]}) for c in calls],
        "stop_reason": response["stop_reason"], "model": response["response_model"],
        "usage": _usage({name: usage.get(name, default) for name, default in _USAGE_DEFAULTS.items()}),
        "tool_margins": [_tool_margin({name: margin.get(name) for name in _MARGIN_FIELDS})  # in field order
                         for margin in response["tool_margins"] or ()],
    })
    return _llm_exchange({name: data[name] if name in data else field.get_default(call_default_factory=True)
                          for name, field in LLMExchange.model_fields.items()})


_USAGE_DEFAULTS = {name: field.default for name, field in UsageRecord.model_fields.items()}
_MARGIN_FIELDS = tuple(ToolMargin.model_fields)
