"""A recording built from a recorder's capture, without validating again what is JSON-native already.

Rule kept here: :func:`build_recording` turns the capture's tuples and columns into a ``Recording``
whose per-step lists are ``Rows``. Each kind is worked out as its fields' columns, JSON-native: the
seal hashes those, and models are made from them on first use, skipping pydantic's validation. A
secret the policy learned after some records were captured is swept from each row as it is made.

Role: record layer, called by every runner when its run ends.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from footprint_lab.record._recall import swept_tokens
from footprint_lab.record.by_field import CALL, MESSAGE, NUMBER, Kind, by_field, kinds_of, texts
from footprint_lab.record.captured import (
    CARRIED_FROM,
    OVER_BUDGET,
    PIECE_FIELDS,
    CapturedPiece,
    Carried,
    as_dict,
    budget_reason,
)
from footprint_lab.record.exchange import LLMExchange, ResponseRecord, ToolMargin, UsageRecord
from footprint_lab.record.kinds import rows_of
from footprint_lab.record.recording import Recording, RunnerInfo
from footprint_lab.record.records import (
    Annotation,
    ContextPiece,
    content_hash,
    fingerprint,
    jsonable,
    jsonable_each,
    maker,
)
from footprint_lab.record.rows import transposed
from footprint_lab.record.schema import SCHEMA_VERSION
from footprint_lab.record.spliced import Spliced, matched

if TYPE_CHECKING:
    from footprint_lab.record.recorder import Recorder


_recording = maker(Recording)


def _unchanged(value: Any) -> Any:
    return value


def _sweeper(recorder: Recorder) -> Callable[[Any], Any]:
    """What masks again the secrets the policy learned only after some records were captured.

    A record is scrubbed only when captured, so one captured before a secret was learned still holds
    it. With no policy, or one that learned nothing, nothing is done per record.
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

    Its own fields are made now; its per-step lists are ``Rows``, made into models when first read.
    The capture's lists only grow, so the counts taken here fix what the recording holds.
    """
    start = recorder.started_ns
    clean = recorder.clean
    captured_pieces, captured_exchanges = recorder.pieces, recorder.exchanges
    n_pieces, n_exchanges = len(captured_pieces), len(captured_exchanges)
    if recorder.policy is not None:  # what every record made now will teach the policy, learned first
        _teach(recorder, captured_pieces[:n_pieces], captured_exchanges[:n_exchanges])
    # own fields next: what the policy learns from them (an input's covered keys) is then swept from
    # every record captured before
    own = {"identity": clean(identity), "input": clean(jsonable(input)), "answer": clean(answer),
           "stopped_early": clean(jsonable(stopped_early)), "error": clean(jsonable(error))}
    sweep = _sweeper(recorder)
    steps, reads, commits, decisions = recorder.steps, recorder.reads, recorder.commits, recorder.decisions
    n_steps, n_reads, n_commits, n_decisions = len(steps), len(reads), len(commits), len(decisions)

    # each kind's columns for its ``Rows``, JSON-native (and masked, under a policy)
    plain = recorder.policy is None

    def step_columns() -> list[Any]:
        ids, stages, iterations, starts, ends, statuses = transposed(steps[:n_steps], 6)
        return [ids, stages, iterations, statuses, [(t - start) / 1e6 for t in starts],
                [((e or s) - s) / 1e6 for s, e in zip(starts, ends, strict=True)]]

    def read_columns() -> list[Any]:
        ids, paths, writers, summaries = transposed(reads[:n_reads], 4)
        return [ids, list(map(list, paths)), writers, _each(sweep, summaries)]

    paths, verbs, values = recorder.entry_paths, recorder.entry_verbs, recorder.entry_values

    def commit_columns() -> list[Any]:
        made = jsonable_each(values[:commits[n_commits - 1][2]] if n_commits else [])
        if sweep is not _unchanged:
            made = list(map(sweep, made))
        taken = commits[:n_commits]
        held = list(map(list, paths[:len(made)]))  # the recording holds a path as a list
        # every committed entry at once (they come first), then each commit's stretch of them
        entries = [{"path": path, "verb": verb, "value": value}
                   for path, verb, value in zip(held, verbs, made, strict=False)]
        return [[step_id for step_id, _, _ in taken], [entries[first:end] for _, first, end in taken]]

    def decision_columns() -> list[Any]:
        taken, made = decisions[:n_decisions], jsonable
        return [[d[0] for d in taken], [d[1] for d in taken], [[
            {"rule": n, "reads": sweep(made(r)), "result": sweep(made(x))} for n, r, x in d[2]
        ] for d in taken], [sweep(d[3]) for d in taken]]

    run_id = recorder.run_id
    seqs, types, event_steps, payloads, refs = (recorder.event_seqs, recorder.event_types, recorder.event_steps,
                                                recorder.event_payloads, recorder.event_refs)
    n_events = len(seqs)

    # tokens that together carry a value learned late, as they should read
    tokens = swept_tokens(types, event_steps, payloads, recorder.policy) if sweep is not _unchanged else {}

    def event_columns() -> list[Any]:
        # a routine event's payload (made from its record) holds paths and step ids, never a value: nothing to sweep
        captured = jsonable_each(payloads[:n_events])  # a routine event's None stays None
        if sweep is not _unchanged:
            captured = [None if payload is None else sweep(payload) for payload in captured]
        made = recorder.payloads(types[:n_events], captured, refs)
        for i, payload in tokens.items():
            made[i] = sweep(jsonable(payload))
        return [list(seqs[:n_events]), [run_id] * n_events, types[:n_events], event_steps[:n_events], made]

    carried = recorder.carried

    def piece_columns() -> list[Any]:
        return _piece_columns(captured_pieces[:n_pieces], None if plain else clean,
                              carried.from_run if carried is not None else None)

    shared_tools: dict[int, Any] = {}

    def native_tools(index: int) -> Any:
        """The tools under shared ``index``, made JSON-native and cleaned once for every exchange sent them."""
        made = shared_tools.get(index)
        if made is None:
            made = shared_tools[index] = texts(jsonable(recorder.shared[index]), clean)  # a declaration, not data
        return made

    def exchange_columns() -> list[Any]:
        messages = recorder.messages
        taken = captured_exchanges[:n_exchanges]
        pairs = jsonable_each([(values, _calls(values.get("reply"), values.get("tool_calls"), messages))
                               for values in map(as_dict, taken)])
        if not plain:
            pairs = [_cleaned_exchange(values, calls, clean) for values, calls in pairs]
        rows = [_exchange(_request(values), tuple(map(values.get, _RESPONSE_VALUES)), calls, native_tools)
                for values, calls in pairs]
        return transposed(rows, len(_EXCHANGE_FIELDS))

    return _recording({
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "path": recorder.path,
        "runner": RunnerInfo(**_runner_shown(runner, recorder.policy)),
        "identity": own["identity"],
        "status": status,
        "input": own["input"],
        "answer": own["answer"],
        "stopped_early": own["stopped_early"],
        "error": own["error"],
        "started_at": recorder.started_at,
        "duration_ms": (ended_ns - start) / 1e6,
        "steps": rows_of("steps", n_steps, step_columns),
        "reads": rows_of("reads", n_reads, read_columns),
        "commits": rows_of("commits", n_commits, commit_columns),
        "decisions": rows_of("decisions", n_decisions, decision_columns),
        "events": rows_of("events", n_events, event_columns),
        "context_pieces": rows_of("context_pieces", n_pieces, piece_columns),
        "exchanges": rows_of("exchanges", n_exchanges, exchange_columns),
        "messages": _recorded_messages(recorder.messages, carried, None if plain else clean),
        "message_pieces": (Spliced([recorder.message_pieces]) if isinstance(recorder.message_pieces, Spliced)
                           else list(recorder.message_pieces)),
        "children": children or [],
        "annotations": [Annotation.model_validate(note) for note in clean(jsonable(recorder.annotations))],
        "redaction": redaction,
        "listener_errors": recorder.listener_errors,
        "meta": clean(jsonable(recorder.meta)),
        "seal": None,
    })


def _teach(recorder: Recorder, pieces: list[CapturedPiece], exchanges: list[Any]) -> None:
    """Show the policy, quietly (nothing counted), what the records made at the run's end hold: a piece's
    evidence, an exchange's tools and calls, the transcript, the notes and meta. What it learns there (a
    value under a covered key) is then masked in every record, whatever order the records are made in."""
    quiet: Callable[[Any], Any] = getattr(recorder.policy, "quietly", recorder.clean)
    _piece_columns(pieces, quiet)
    messages = recorder.messages
    for values in map(as_dict, exchanges):
        tools = values.get("tools")
        values = {**values, "tools": recorder.shared[tools] if isinstance(tools, int) else tools}
        made, calls = jsonable([values, _calls(values.get("reply"), values.get("tool_calls"), messages)])
        _cleaned_exchange(made, calls, quiet)
    _cleaned(jsonable(list(messages)), quiet)
    quiet(jsonable([recorder.annotations, recorder.meta]))


def _cleaned_exchange(values: dict[str, Any], calls: Any, clean: Callable[[Any], Any]) -> tuple[Any, Any]:
    """A captured exchange and its tool calls masked field by field (``record.by_field``), never by a field's name."""
    return by_field(values, clean, _CAPTURED_EXCHANGE), [by_field(call, clean, CALL) for call in calls or ()]


def _runner_shown(runner: dict[str, Any], policy: Any) -> dict[str, Any]:
    """The runner's fields as the recording holds them: a caller's id and name are masked like any text, the
    kind (the library's own word) is not."""
    if policy is None:
        return runner
    return {field: value if field == "kind" or not isinstance(value, str) else policy.scrub(value)
            for field, value in runner.items()}


#: where a captured piece's evidence starts: after its keys and one value per ``PIECE_FIELDS`` name
_EVIDENCE = len(PIECE_FIELDS) + 1


def _recorded_messages(messages: Sequence[dict[str, Any]], carried: Carried | None,
                       clean: Callable[[Any], Any] | None) -> list[Any] | Spliced:
    """The transcript made JSON-native (and masked by ``clean``, a policy's).

    A leg that carried a conversation gets a :class:`~footprint_lab.record.spliced.Spliced`: the carried
    messages in the forms the conversation shares (where its masked copy equals them), then its own.
    A run that carried none gets a list."""
    if carried is None:
        made = jsonable(list(messages))
        return cast("list[Any] | Spliced", made if clean is None else _cleaned(made, clean))
    size = carried.size
    shared = carried.history.natives(size, jsonable)
    if clean is None:  # nothing to mask: the carried ones are the shared forms themselves
        return Spliced([shared, jsonable(list(messages[size:]))])
    made = _cleaned(jsonable(list(messages)), clean)
    return Spliced([*matched(made[:size], shared), made[size:]])


def _cleaned(messages: list[Any], clean: Callable[[Any], Any]) -> list[Any]:
    """Transcript messages masked field by field (``record.by_field``): a message's role, text and tool calls
    are its fields, never keys a policy covers."""
    return [by_field(message, clean, MESSAGE) for message in messages]


def _piece_columns(pieces: list[CapturedPiece], clean: Callable[[Any], Any] | None,
                   carried_from: str | None = None) -> list[Any]:
    """Captured pieces as the ``ContextPiece`` fields' columns.

    Text fields are cleaned by ``clean`` (a policy's, or ``None``); each piece's evidence goes into
    ``detail``, JSON-native; each distinct content is hashed once. A shared carried piece gets
    ``carried_from`` as its ``from_run``, and a piece dropped over budget gets its reason written
    from its evidence. The policy reads every piece's evidence before any text, so what it learns
    there is masked in all the text.
    """
    if not pieces:
        return transposed(pieces, len(_PIECE_FIELDS))
    # a piece's keys and one value per field come first: their columns, the evidence left out
    (_, slots, positions, source_kinds, source_ids, contents, triggers, verdicts, reasons, allowed_by, landed_by,
     iterations, caches, declared_at) = zip(*(piece[:_EVIDENCE] for piece in pieces), strict=True)
    details = [dict(zip(piece[0][_EVIDENCE - 1:], piece[_EVIDENCE:], strict=True)) if len(piece) > _EVIDENCE
               else {} for piece in pieces]
    if carried_from is not None:
        details = [{**detail, "from_run": carried_from} if detail.get("from_run") is CARRIED_FROM else detail
                   for detail in details]
    if OVER_BUDGET in reasons:
        reasons = tuple(budget_reason(slot, detail["budget"], detail["used"], detail["size"])
                        if reason == OVER_BUDGET and verdict == "dropped" else reason
                        for slot, reason, verdict, detail in zip(slots, reasons, verdicts, details, strict=True))
    details = [jsonable(detail if clean is None else clean(detail)) if detail else detail for detail in details]
    if clean is not None:
        source_ids, contents, reasons = (tuple(map(clean, column)) for column in (source_ids, contents, reasons))
    if clean is None:
        hashes = list(map(fingerprint, contents))
    else:  # a run lands the same text again and again
        hashed = {text: content_hash(text) for text in set(contents)}
        hashes = list(map(hashed.__getitem__, contents))
    return [list(range(len(pieces))), slots, positions, source_kinds, source_ids, contents, hashes, triggers, verdicts,
            reasons, allowed_by, landed_by, iterations, details, caches, declared_at]


def _exchange(row: list[Any], response: Any, calls: Any, tools_of: Callable[[int], Any]) -> list[Any]:
    """A captured exchange as its record's values in field order: ``row`` (all but the response, from
    :func:`_request`) with the response made from ``response`` (the :data:`_RESPONSE_VALUES`) and ``calls``.

    Its ``tools`` may be an index into the recorder's shared values, read with ``tools_of``.
    """
    tools = row[_AT_TOOLS]
    if isinstance(tools, int):
        row[_AT_TOOLS] = tools_of(tools)
    content, stop_reason, model, usage, margins = response
    # UsageCounts (a list once JSON-native), in UsageRecord's field order; a runner's mapping may leave some out
    usage = (dict(zip(_USAGE_FIELDS, usage, strict=True)) if isinstance(usage, _SEQUENCES)
             else {name: (usage or {}).get(name, default) for name, default in _USAGE_DEFAULTS})
    row.insert(_AT_RESPONSE, {
        "content": content,
        "tool_calls": [{"id": c["id"], "name": c["name"], "args": c["args"]} for c in calls or ()],
        "stop_reason": stop_reason, "model": model, "usage": usage,
        "tool_margins": [{name: margin.get(name) for name in _MARGIN_FIELDS}  # in field order
                         for margin in margins or ()],
    })
    return row


def _request(values: dict[str, Any]) -> list[Any]:
    """An exchange's record values but the response, in field order; a field a runner left out gets its default."""
    return [values[name] if name in values else default() for name, default in _REQUEST_DEFAULTS]


def _calls(reply: Any, own: Any, messages: list[dict[str, Any]]) -> Any:
    """An exchange's tool calls: those of its reply message (the next in the transcript) when it names one,
    else its own."""
    return own if reply is None else messages[reply].get("tool_calls", [])


def _each(sweep: Callable[[Any], Any], column: list[Any]) -> list[Any]:
    """A column swept value by value (as it is when there is nothing to sweep)."""
    return column if sweep is _unchanged else list(map(sweep, column))


_PIECE_FIELDS = tuple(ContextPiece.model_fields)
_SEQUENCES = (list, tuple)
_USAGE_DEFAULTS = tuple((name, field.default) for name, field in UsageRecord.model_fields.items())
_USAGE_FIELDS = tuple(UsageRecord.model_fields)  # the order UsageCounts captures them in (tests/core/test_agent.py)
_MARGIN_FIELDS = tuple(ToolMargin.model_fields)
_EXCHANGE_FIELDS = tuple(LLMExchange.model_fields)
_AT_RESPONSE, _AT_TOOLS = _EXCHANGE_FIELDS.index("response"), _EXCHANGE_FIELDS.index("tools")
assert _AT_TOOLS < _AT_RESPONSE  # so the tools sit at the same place with the response left out
#: the flat values of a captured exchange its response is made from, in the order :func:`_exchange` reads them
_RESPONSE_VALUES = ("content", "stop_reason", "response_model", "usage", "tool_margins")
#: what each value of a captured exchange holds: its record's fields and its response's, the reply's index,
#: the tools (or their index among the recorder's shared values)
_CAPTURED_EXCHANGE: dict[str, Kind] = {**kinds_of(LLMExchange), **kinds_of(ResponseRecord), "response_model": None,
                                       "reply": NUMBER}
#: every ``LLMExchange`` field but the response, in order, with what makes its default (for a runner that leaves
#: it out)
_REQUEST_DEFAULTS: tuple[tuple[str, Callable[[], Any]], ...] = tuple(
    (name, functools.partial(field.get_default, call_default_factory=True))
    for name, field in LLMExchange.model_fields.items() if name != "response")
