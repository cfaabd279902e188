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

from footprint_lab.engine._captured import (
    OVER_BUDGET,
    PIECE_FIELDS,
    CapturedPiece,
    as_dict,
    budget_reason,
)
from footprint_lab.engine._exchange import LLMExchange, ResponseRecord, ToolCallRecord, ToolMargin, UsageRecord
from footprint_lab.engine._recall import swept_tokens
from footprint_lab.engine._recording import Recording, RunnerInfo
from footprint_lab.engine._records import (
    Annotation,
    Commit,
    CommitEntry,
    ContextPiece,
    Decision,
    Event,
    Read,
    RuleEvidence,
    Step,
    content_hash,
    jsonable,
    jsonable_each,
    maker,
)
from footprint_lab.engine._rows import Rows
from footprint_lab.engine.schema import SCHEMA_VERSION

if TYPE_CHECKING:
    from footprint_lab.engine._recorder import Recorder


(_step, _read, _commit, _entry, _decision, _rule, _event, _context_piece, _llm_exchange, _response, _usage,
 _tool_call, _tool_margin, _recording) = (maker(model) for model in (
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
    sweep = _sweeper(recorder)
    steps, reads, commits, decisions = recorder.steps, recorder.reads, recorder.commits, recorder.decisions
    n_steps, n_reads, n_commits, n_decisions = len(steps), len(reads), len(commits), len(decisions)

    # each kind's columns (``Rows``), its values made JSON-native; ``raw`` (for the seal, engine._seal)
    # leaves captured values as captured where nothing is to be cleaned or swept (no redaction policy)
    plain = recorder.policy is None

    def native_each(raw: bool) -> Callable[[Any], Any]:
        return _unchanged if raw and plain else jsonable_each

    def step_columns(raw: bool) -> list[list[Any]]:
        ids, stages, iterations, starts, ends, statuses = _transposed(steps[:n_steps], 6)
        return [ids, stages, iterations, statuses, [(t - start) / 1e6 for t in starts],
                [((e or s) - s) / 1e6 for s, e in zip(starts, ends, strict=True)]]

    def read_columns(raw: bool) -> list[list[Any]]:
        ids, paths, writers, summaries = _transposed(reads[:n_reads], 4)
        return [ids, paths if raw else list(map(list, paths)), writers, _each(sweep, summaries)]

    paths, verbs, values = recorder.entry_paths, recorder.entry_verbs, recorder.entry_values

    def commit_columns(raw: bool) -> list[list[Any]]:
        made = native_each(raw)(values[:commits[n_commits - 1][2]] if n_commits else [])
        taken = commits[:n_commits]
        path: Callable[[Any], Any] = _unchanged if raw else list
        return [[step_id for step_id, _, _ in taken], [[
            {"path": path(paths[j]), "verb": verbs[j], "value": sweep(made[j])} for j in range(first, end)
        ] for _, first, end in taken]]

    def decision_columns(raw: bool) -> list[list[Any]]:
        taken = decisions[:n_decisions]
        native = _unchanged if raw and plain else jsonable
        return [[d[0] for d in taken], [d[1] for d in taken], [[
            {"rule": n, "reads": sweep(native(r)), "result": sweep(native(x))} for n, r, x in d[2]
        ] for d in taken], [sweep(d[3]) for d in taken]]

    run_id = recorder.run_id
    seqs, types, event_steps, payloads, refs = (recorder.event_seqs, recorder.event_types, recorder.event_steps,
                                                recorder.event_payloads, recorder.event_refs)
    n_events = len(seqs)

    # a value learned late whose words went out in neighbouring streamed tokens: those tokens as they should read
    tokens = swept_tokens(types, event_steps, payloads, recorder.policy) if sweep is not _unchanged else {}

    def event_columns(raw: bool) -> list[list[Any]]:
        # a routine event's payload (made from its record) holds paths and step ids, never a value: nothing to sweep
        captured = native_each(raw)(payloads[:n_events])  # a routine event's None stays None
        if sweep is not _unchanged:
            captured = [None if payload is None else sweep(payload) for payload in captured]
        made = recorder.payloads(types[:n_events], captured, refs)
        for i, payload in tokens.items():
            made[i] = sweep(jsonable(payload))
        return [seqs[:n_events].tolist(), [run_id] * n_events, types[:n_events], event_steps[:n_events], made]

    captured_pieces, captured_exchanges = recorder.pieces, recorder.exchanges
    n_pieces, n_exchanges = len(captured_pieces), len(captured_exchanges)

    def piece_columns(raw: bool) -> list[list[Any]]:
        hashes: dict[str, str] = {}  # a run lands the same text again and again (a tool's description each call)
        native = _unchanged if raw and plain else jsonable
        return _transposed([_piece(i, piece, clean, hashes, native)
                            for i, piece in enumerate(captured_pieces[:n_pieces])], len(_PIECE_FIELDS))

    shared_tools: dict[int, Any] = {}

    def exchange_columns(raw: bool) -> list[list[Any]]:
        messages = recorder.messages
        merged = [{**exchange, "tool_calls": messages[exchange["reply"]].get("tool_calls", [])} if "reply" in exchange
                  else exchange for exchange in map(as_dict, captured_exchanges[:n_exchanges])]
        made = list(map(dict, merged)) if raw and plain else clean(jsonable_each(merged))  # copies: filled in below
        return _transposed([_exchange(exchange, clean, recorder, shared_tools) for exchange in made],
                           len(_EXCHANGE_FIELDS))

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
        "steps": Rows(count=n_steps, columns=step_columns, fields=_STEP_FIELDS, model=_step),
        "reads": Rows(count=n_reads, columns=read_columns, fields=_READ_FIELDS, model=_read),
        "commits": Rows(count=n_commits, columns=commit_columns, fields=_COMMIT_FIELDS, model=_commit_model),
        "decisions": Rows(count=n_decisions, columns=decision_columns, fields=_DECISION_FIELDS,
                          model=_decision_model),
        "events": Rows(count=n_events, columns=event_columns, fields=_EVENT_FIELDS, model=_event),
        "context_pieces": Rows(count=n_pieces, columns=piece_columns, fields=_PIECE_FIELDS, model=_context_piece),
        "exchanges": Rows(count=n_exchanges, columns=exchange_columns, fields=_EXCHANGE_FIELDS,
                          model=_exchange_model),
        "messages": clean(jsonable(recorder.messages)),
        "message_pieces": list(recorder.message_pieces),
        "children": children or [],
        "annotations": [Annotation.model_validate(note) for note in clean(jsonable(recorder.annotations))],
        "redaction": redaction,
        "listener_errors": recorder.listener_errors,
        "meta": clean(jsonable(recorder.meta)),
        "seal": None,
    })


#: where a captured piece's evidence starts: after its keys and one value per ``PIECE_FIELDS`` name
_EVIDENCE = len(PIECE_FIELDS) + 1


def _piece(index: int, piece: CapturedPiece, clean: Any, hashes: dict[str, str],
           native: Callable[[Any], Any]) -> tuple[Any, ...]:
    """A captured piece as its record's values, in the ``ContextPiece`` field order: its fields as they
    are (the text ones cleaned), its evidence keys gathered into ``detail``, its content's hash looked up
    in ``hashes`` (kept there when first worked out), its evidence made JSON-native by ``native``.

    Runners capture pieces as flat tuples of plain values (see ``engine._captured``), so evidence
    such as a tool result's ``requested_by`` rides beside the fields; a piece dropped over its
    slot's budget gets its reason written here, from that evidence.
    """
    (keys, slot, position, source_kind, source_id, content, trigger, verdict, reason, allowed_by, landed_by,
     iteration, cache, declared_at) = piece[:_EVIDENCE]
    detail = dict(zip(keys[_EVIDENCE - 1:], piece[_EVIDENCE:], strict=True)) if len(piece) > _EVIDENCE else {}
    if reason == OVER_BUDGET and verdict == "dropped":
        reason = budget_reason(slot, detail["budget"], detail["used"], detail["size"])
    content = clean(content)
    hashed = hashes.get(content)
    if hashed is None:
        hashed = hashes[content] = content_hash(content)
    return (index, slot, position, source_kind, clean(source_id), content, hashed, trigger, verdict, clean(reason),
            allowed_by, landed_by, iteration, native(clean(detail)) if detail else {}, cache, declared_at)


def _exchange(values: dict[str, Any], clean: Any, recorder: Recorder,
              shared_tools: dict[int, Any]) -> tuple[Any, ...]:
    """A captured exchange, made JSON-native and cleaned (flat: the response's fields sit beside the
    request's, its tool calls those of its reply message), as its record's values.

    Its ``tools`` may be an index into the recorder's shared values (made JSON-native once per
    index, in ``shared_tools``: every call of a run is usually sent the same tools).
    """
    tools = values.get("tools")
    if isinstance(tools, int):
        made = shared_tools.get(tools)
        if made is None:
            made = shared_tools[tools] = clean(jsonable(recorder.shared[tools]))
        values["tools"] = made  # one list for every exchange sent the same tools, as the run sent them
    usage = values.get("usage")
    # the captured usage counts (engine._captured.UsageCounts, in the UsageRecord's field order), a list
    # once made JSON-native (a tuple as captured); a runner that captured a mapping may leave some out
    usage = (dict(zip(_USAGE_FIELDS, usage, strict=True)) if isinstance(usage, list | tuple)
             else {name: (usage or {}).get(name, default) for name, default in _USAGE_DEFAULTS})
    values["response"] = {
        "content": values.get("content"),
        "tool_calls": [{"id": c["id"], "name": c["name"], "args": c["args"]} for c in values.get("tool_calls") or ()],
        "stop_reason": values.get("stop_reason"), "model": values.get("response_model"), "usage": usage,
        "tool_margins": [{name: margin.get(name) for name in _MARGIN_FIELDS}  # in field order
                         for margin in values.get("tool_margins") or ()],
    }
    try:  # a runner's exchange usually holds every field: taken in field order, in C
        return tuple(map(values.__getitem__, _EXCHANGE_FIELDS))
    except KeyError:
        return tuple(values[name] if name in values else default() for name, default in _EXCHANGE_DEFAULTS)


def _transposed(rows: list[tuple[Any, ...]], width: int) -> list[list[Any]]:
    """Records' values (one tuple each, in their fields' order) as ``width`` columns, one list per field."""
    return list(map(list, zip(*rows, strict=True))) if rows else [[] for _ in range(width)]


def _each(sweep: Callable[[Any], Any], column: list[Any]) -> list[Any]:
    """A column swept value by value (as it is when there is nothing to sweep)."""
    return column if sweep is _unchanged else list(map(sweep, column))


#: each kind's record fields, in the order its columns come (the seal's chain reads them so, engine._seal)
(_STEP_FIELDS, _READ_FIELDS, _COMMIT_FIELDS, _DECISION_FIELDS, _EVENT_FIELDS, _PIECE_FIELDS) = (
    tuple(model.model_fields) for model in (Step, Read, Commit, Decision, Event, ContextPiece))
_USAGE_DEFAULTS = tuple((name, field.default) for name, field in UsageRecord.model_fields.items())
_USAGE_FIELDS = tuple(UsageRecord.model_fields)  # the order UsageCounts captures them in (tests/test_agent.py)
_MARGIN_FIELDS = tuple(ToolMargin.model_fields)
_EXCHANGE_FIELDS = tuple(LLMExchange.model_fields)
#: each ``LLMExchange`` field, in order, and what makes its default (for a runner that leaves it out)
_EXCHANGE_DEFAULTS = tuple((name, lambda field=field: field.get_default(call_default_factory=True))
                           for name, field in LLMExchange.model_fields.items())


# -- models of the record values (nested records are values too until a model is asked for) --------
def _commit_model(values: dict[str, Any]) -> Commit:
    return _commit({**values, "entries": list(map(_entry, values["entries"]))})


def _decision_model(values: dict[str, Any]) -> Decision:
    return _decision({**values, "evidence": list(map(_rule, values["evidence"]))})


def _exchange_model(values: dict[str, Any]) -> LLMExchange:
    response = values["response"]
    return _llm_exchange({**values, "response": _response({
        **response, "tool_calls": list(map(_tool_call, response["tool_calls"])), "usage": _usage(response["usage"]),
        "tool_margins": list(map(_tool_margin, response["tool_margins"]))})})
