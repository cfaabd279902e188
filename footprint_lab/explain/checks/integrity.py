"""Integrity: the contradictions a recording holds, found by deterministic checks, with no question asked.

Rule kept here: "no findings" and "no check ran" are different results. ``integrity(run)``
runs every registered check over the run's recording (its member runs included) and returns
the findings together with one disposition per check: ``passed`` (it ran and found nothing),
``failed`` (it found something), ``not_applicable`` (the run holds nothing it could look at,
and the note says what it would need) or ``could_not_run`` (the recording lacks what it needs,
or the check broke, named by exception type). The checks:

- ``ungrounded_tool``: a tool offered to the model after what grounded it left the window:
  a loaded skill's tool whose instructions were dropped (budget) or skipped, or whose
  loading result is no longer among the messages sent;
- ``invented_identifier``: a tool called with an identifier (an argument named like ``id``,
  ``order_id``, ``ticket``, ``ref``, or a value shaped like one, ``A-1001``) that appears
  nowhere in what the asking call was sent;
- ``duplicate_tool_call``: the same tool called twice with the same arguments within one
  turn (one recording): the second execution repeats the first, and a tool that acts on
  the world acts twice;
- ``answer_contradicts_tool``: the final answer states a value for a field the analyst
  declared (``claims={"age_days": r"(\\d+) days"}``) that differs from what a tool returned
  for that field;
- ``unsupported_value``: a number, amount, date, time, identifier or proper name in the answer
  that appears in nothing the answering call was sent, with the nearest value the evidence
  holds (:mod:`footprint_lab.explain.checks._unsupported`);
- ``tool_failed``: a tool call whose tool raised: the model read the error in place of a
  result (the tool step keeps the exception's type, its masked message and the tool's own
  frame). A tool that returns an error text without raising is a result, not a failure;
- ``run_failed``: the run (or a member) ended failed, a provider's error included: where, by
  which exception, and its masked message. A composition that failed because a member did is
  reported once, at the member.

``claims`` is the declaration of (d): a mapping from a field name, as it appears in the tool
results (JSON objects, searched at any depth), to how to read the value the answer states:
a regular expression (its first group, or the whole match) or a function of the answer text
returning the stated value (``None``: not stated). Numbers compare as numbers, ``yes/no/
true/false`` as booleans, other text without case.

Pattern: one pass per recording builds what every check needs (tool calls with the step
that ran each, the transcript position of each piece), so a 10,000-step run is checked in
milliseconds. Role: explain layer; a pure function of a ``Recording``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from footprint_lab.explain.arguments import ExplainConfigError, recording_of
from footprint_lab.explain.checks._unsupported import unsupported_values
from footprint_lab.explain.provenance.index import RecordingIndex
from footprint_lab.explain.render import display_bundle, shorten
from footprint_lab.record.refusal import describe_shape
from footprint_lab.record.schema import KIND_TOOL_RESULT

if TYPE_CHECKING:
    import pandas as pd

    from footprint_lab.record.recording import ContextPiece, LLMExchange, Recording, ToolCallRecord

DISPOSITIONS = ("passed", "failed", "not_applicable", "could_not_run")
_ID_KEY = re.compile(r"(^|_)(id|ids|number|num|no|ref|reference|ticket|code|sku|key)$|[a-z]Id$")
_ID_VALUE = re.compile(r"^(?=(?:.*\d){3})(?=.*[A-Za-z])[A-Za-z0-9][A-Za-z0-9_\-#/.:]{2,63}$")
_TRUE = {"true", "yes", "y"}
_FALSE = {"false", "no", "n", "not"}


@dataclass(frozen=True, slots=True)
class Finding:
    """One contradiction: its ``kind`` (the check's name), the ``steps`` involved and why it matters."""

    kind: str
    steps: tuple[str, ...]
    what: str
    why: str

    def line(self) -> str:
        return f"[{self.kind}] {self.what} (steps: {', '.join(self.steps)}). Why it matters: {self.why}"


@dataclass(frozen=True, slots=True)
class Disposition:
    """What one check concluded: ``passed``, ``failed``, ``not_applicable`` or ``could_not_run``, and why."""

    check: str
    status: str
    note: str

    def line(self) -> str:
        return f"{self.check:<24} {self.status.upper().replace('_', ' '):<15} {self.note}"


@dataclass(slots=True)
class IntegrityReport:
    """The findings of every registered check, and each check's disposition."""

    run_id: str
    findings: list[Finding]
    dispositions: list[Disposition]

    @property
    def ok(self) -> bool:
        """``True`` when every check that ran passed (none failed, none broke)."""
        return all(d.status in ("passed", "not_applicable") for d in self.dispositions)

    def disposition(self, check: str) -> str:
        """The status of one check by name."""
        return next(d.status for d in self.dispositions if d.check == check)

    def of_kind(self, kind: str) -> list[Finding]:
        return [f for f in self.findings if f.kind == kind]

    def by_step(self) -> dict[str, list[str]]:
        """For each step a finding involves, the kinds of the findings on it (what a view shows as badges)."""
        badges: dict[str, list[str]] = {}
        for finding in self.findings:
            for step in finding.steps:
                kinds = badges.setdefault(step, [])
                if finding.kind not in kinds:
                    kinds.append(finding.kind)
        return badges

    def summary(self) -> str:
        counts = {s: sum(1 for d in self.dispositions if d.status == s) for s in DISPOSITIONS}
        ran = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in counts.items() if n)
        return f"Integrity of run {self.run_id}: {len(self.findings)} finding(s); checks: {ran}."

    def __str__(self) -> str:
        lines = [self.summary(), *(f.line() for f in self.findings), "Checks:",
                 *(f"  {d.line()}" for d in self.dispositions)]
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """One row per finding: kind, steps, what, why."""
        from footprint_lab.explain.frame import ShownFrame  # imports pandas

        rows = [{"kind": f.kind, "steps": list(f.steps), "what": f.what, "why": f.why} for f in self.findings]
        return ShownFrame(rows, columns=["kind", "steps", "what", "why"])

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return display_bundle("integrity", self, self.summary(), str(self), include, exclude)

    def _repr_html_(self) -> str:
        return str(self._repr_mimebundle_(include=["text/html"])["text/html"])


# -- the door: every check over one recording ------------------------------------------
def integrity(run: Any, *, claims: Mapping[str, Any] | None = None) -> IntegrityReport:
    """Run every registered check over a run's recording; see the module docstring for each check."""
    readers = _check_claims(claims)
    recording = recording_of(run, "integrity")
    turns = _turns(recording)
    findings: list[Finding] = []
    dispositions: list[Disposition] = []
    for name, check in CHECKS.items():
        try:
            found, status, note = check(turns, readers, recording.answer)
        except Exception as exc:  # a check that breaks says so; the others still run
            dispositions.append(Disposition(name, "could_not_run", f"the check raised {type(exc).__name__}"))
            continue
        findings += found
        dispositions.append(Disposition(name, "failed" if found else status,
                                        f"{len(found)} finding(s); {note}" if found else note))
    return IntegrityReport(recording.run_id, findings, dispositions)


def _check_claims(claims: Any) -> dict[str, Any]:
    if claims is None:
        return {}
    fix = ("must map field names, as in the tool results, to a regular expression reading the value the answer "
           "states (its first group) or a function of the answer text, e.g. claims={'age_days': r'(\\d+) days'}")
    if not isinstance(claims, Mapping) or not all(isinstance(k, str) for k in claims):
        raise ExplainConfigError("integrity", "claims", describe_shape(claims), fix)
    readers: dict[str, Any] = {}
    for key, reader in claims.items():
        if callable(reader):
            readers[key] = reader
            continue
        if not isinstance(reader, str):
            raise ExplainConfigError("integrity", "claims", f"a {type(reader).__name__} for one field", fix)
        try:
            readers[key] = re.compile(reader, re.IGNORECASE)
        except re.error:
            raise ExplainConfigError("integrity", "claims", "a pattern that is not a valid regular expression",
                                     fix) from None
    return readers


# -- what every check reads, gathered once per recording ----------------------------------
# The checks keep what they gather in dicts of strings and numbers: a 10,000-step recording
# is a large heap, and long-lived containers made here would make the collector walk it.
@dataclass(slots=True)
class _Turn:
    """One recording (one turn, or one member's run) as the checks read it, gathered in one pass."""

    recording: Recording
    #: tool call id -> the tool step that ran it (``None``: it never ran)
    ran_in: dict[str, str | None] = field(default_factory=dict)
    #: piece index -> its position in the transcript (only pieces that carry a transcript message)
    transcript_position: dict[int, int] = field(default_factory=dict)
    #: tool step -> the index of the result piece it returned
    result_of: dict[str, int] = field(default_factory=dict)
    #: (iteration, skill id) -> the skill's instructions piece of that iteration
    bodies: dict[tuple[int | None, str], ContextPiece] = field(default_factory=dict)
    #: whether any call was offered a tool whose offer depends on an earlier result
    grounded_offers: bool = False
    #: the result piece of each tool call whose tool raised, in order
    raised: list[ContextPiece] = field(default_factory=list)

    def calls(self) -> Iterator[tuple[LLMExchange, ToolCallRecord]]:
        """Every tool call a model asked for, with the exchange that asked, in order."""
        for exchange in self.recording.exchanges:
            for call in exchange.response.tool_calls:
                yield exchange, call

    def steps_of(self, exchange: LLMExchange, call: ToolCallRecord) -> tuple[str, ...]:
        """The call that asked for a tool call and, when it ran, the tool step that ran it."""
        ran = self.ran_in.get(call.id)
        return (exchange.step_id, ran) if ran else (exchange.step_id,)


def _recordings(root: Recording) -> list[Recording]:
    found, pending = [], [root]
    while pending:
        recording = pending.pop()
        found.append(recording)
        pending += recording.children
    return found


def _turns(root: Recording) -> list[_Turn]:
    turns = []
    for recording in _recordings(root):
        turn = _Turn(recording)
        pieces = recording.context_pieces
        ran_in = turn.ran_in
        # A tool result is a transcript message, so the transcript's pieces hold every one of them.
        for number in recording.message_pieces:
            piece = pieces[number]
            if piece.source_kind == KIND_TOOL_RESULT:
                ran_in[piece.source_id] = piece.landed_by
                if piece.landed_by is not None:
                    turn.result_of[piece.landed_by] = number
                if "error_type" in piece.detail:
                    turn.raised.append(piece)
        for exchange in recording.exchanges:
            for number in exchange.tool_pieces:
                if "activated_by" in pieces[number].detail:
                    turn.grounded_offers = True
        if turn.grounded_offers:
            turn.transcript_position = {p: n for n, p in enumerate(recording.message_pieces)}
            turn.bodies = {(p.iteration, p.source_id): p for p in pieces
                           if p.source_kind == "skill" and p.slot == "system"}
        turns.append(turn)
    return turns


# -- the checks, each followed by what only it uses --------------------------------------
CheckResult = tuple[list[Finding], str, str]  # findings, status when none, note


def _ungrounded_tool(turns: list[_Turn], _claims: Mapping[str, Any], _answer: str | None) -> CheckResult:
    grouped: dict[tuple[str, str, str], list[str]] = {}
    looked = 0
    for turn in turns:
        if not turn.grounded_offers:
            continue
        recording = turn.recording
        pieces = recording.context_pieces
        bodies = turn.bodies
        results = turn.result_of
        for exchange in recording.exchanges:
            for number in exchange.tool_pieces:
                piece = pieces[number]
                grounding = piece.detail.get("activated_by")
                if not isinstance(grounding, str):
                    continue
                looked += 1
                tool = str(piece.detail.get("tool", piece.source_id))
                body = bodies.get((piece.iteration, piece.source_id)) if piece.source_kind == "skill" else None
                if body is not None and body.verdict != "admitted":
                    cause = (f"the instructions of {piece.source_kind} '{piece.source_id}' that go with it were "
                             f"{body.verdict} ({shorten(body.reason, 60)})")
                    grouped.setdefault((tool, cause, grounding), []).append(exchange.step_id)
                result = results.get(grounding)
                position = turn.transcript_position.get(result) if result is not None else None
                if result is not None and (position is None or position >= exchange.message_count):
                    cause = f"the result of {grounding} that loaded it is no longer among the messages sent"
                    grouped.setdefault((tool, cause, grounding), []).append(exchange.step_id)
    if not looked:
        return [], "not_applicable", "no call was offered a tool whose offer depends on an earlier result"
    findings = [
        Finding("ungrounded_tool", (grounding, *calls),
                f"tool '{tool}' was offered to {', '.join(calls)} while {cause}",
                "the model can call a tool without the instructions or result that say when and how to use it")
        for (tool, cause, grounding), calls in grouped.items()
    ]
    return findings, "passed", f"{looked} offer(s) of result-dependent tools checked"


def _invented_identifier(turns: list[_Turn], _claims: Mapping[str, Any], _answer: str | None) -> CheckResult:
    findings: list[Finding] = []
    looked = 0
    for turn in turns:
        recording = turn.recording
        transcript: _Transcript | None = None
        for exchange, call in turn.calls():
            wanted = _identifiers(call.args)
            if not wanted:
                continue
            looked += len(wanted)
            if transcript is None:
                transcript = _Transcript(recording.messages)
            for key, value in wanted:
                folded = value.casefold()
                if transcript.holds(folded, exchange.message_count):
                    continue
                sent = [exchange.system, *map(_message_text, exchange.injected_messages)]
                if any(_occurs(text, folded, len(text)) for text in (t.casefold() for t in sent)):
                    continue
                findings.append(Finding(
                    "invented_identifier", turn.steps_of(exchange, call),
                    f"{exchange.step_id} called tool '{call.name}' with {key or 'an argument'}="
                    f"'{shorten(value, 40)}', which appears nowhere in what that call was sent",
                    "an identifier the model made up points the tool at the wrong record, or at none",
                ))
    if not looked:
        return [], "not_applicable", "no tool call carried an identifier-like argument"
    return findings, "passed", f"{looked} identifier argument(s) traced to what their call was sent"


def _identifiers(args: Any, key: str = "", found: list[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    """``(argument name, value)`` for each identifier-like value in a call's arguments, at any depth."""
    found = [] if found is None else found
    items = args.items() if isinstance(args, dict) else ((key, value) for value in args)
    for name, value in items:
        kind = type(value)
        if kind is str:
            if 0 < len(value) <= 64 and (_names_identifier(name) or _ID_VALUE.match(value)) and not value.isspace():
                found.append((name, value))
        elif kind is int:
            if _names_identifier(name):
                found.append((name, str(value)))
        elif kind is dict or kind is list:
            _identifiers(value, str(name), found)
    return found


@functools.lru_cache(maxsize=1024)
def _names_identifier(key: str) -> bool:
    return _ID_KEY.search(key) is not None


def _message_text(message: dict[str, Any]) -> str:
    calls = message.get("tool_calls")
    if not calls:
        return str(message.get("content") or "")
    return "\n".join([str(message.get("content") or ""), *(str(call.get("args")) for call in calls)])


class _Transcript:
    """A recording's transcript as one case-folded text, with where each message ends, built on first use.

    A call was sent a prefix of the transcript, so "does this value appear in what the call
    was sent" is one bounded search of that text: the last messages first (an identifier
    usually comes from the result just before), then the whole prefix, at the speed of ``str.find``.
    """

    __slots__ = ("ends", "text", "texts")

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.texts = [_message_text(m).casefold() for m in messages]
        self.text = "\n".join(self.texts)
        ends, position = [], 0
        for text in self.texts:
            position += len(text)
            ends.append(position)
            position += 1
        self.ends = ends

    def holds(self, value: str, count: int) -> bool:
        """Whether ``value`` (case-folded) stands as a whole word in the first ``count`` messages."""
        texts = self.texts
        for position in range(count - 1, max(count - 4, -1), -1):
            if _occurs(texts[position], value, len(texts[position])):
                return True
        return count > 0 and _occurs(self.text, value, self.ends[min(count, len(self.ends)) - 1])


def _occurs(text: str, value: str, end: int) -> bool:
    """Whether ``value`` occurs in ``text[:end]`` with no letter or digit glued to either side."""
    at = text.find(value, 0, end)
    while at >= 0:
        after = at + len(value)
        if (at == 0 or not text[at - 1].isalnum()) and (after >= len(text) or not text[after].isalnum()):
            return True
        at = text.find(value, at + 1, end)
    return False


def _duplicate_tool_call(turns: list[_Turn], _claims: Mapping[str, Any], _answer: str | None) -> CheckResult:
    findings: list[Finding] = []
    looked = 0
    for turn in turns:
        first: dict[str, int] = {}
        repeats: dict[int, list[int]] = {}
        for number, (_, call) in enumerate(turn.calls()):
            looked += 1
            key = f"{call.name}\x00{_args_key(call.args)}"
            earlier = first.setdefault(key, number)
            if earlier != number:
                repeats.setdefault(earlier, [earlier]).append(number)
        if not repeats:
            continue
        calls = list(turn.calls())
        for numbers in repeats.values():
            ran = [calls[n] for n in numbers if turn.ran_in.get(calls[n][1].id) is not None]
            if len(ran) < 2:
                continue
            steps = tuple(step for exchange, call in ran for step in turn.steps_of(exchange, call))
            findings.append(Finding(
                "duplicate_tool_call", steps,
                f"tool '{ran[0][1].name}' ran {len(ran)} times with the same arguments in one turn "
                f"({', '.join(str(turn.ran_in.get(call.id)) for _, call in ran)})",
                "the repeat bought nothing new, and a tool that acts on the world (sends, books, pays) acted twice",
            ))
    if not looked:
        return [], "not_applicable", "the run called no tool"
    return findings, "passed", f"{looked} tool call(s) compared within their turn"


def _args_key(args: dict[str, Any]) -> str:
    """A text equal for equal arguments (flat ones without JSON encoding, the common case)."""
    if all(type(value) in (str, int, float, bool) or value is None for value in args.values()):
        return repr(sorted(args.items()))
    return json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)


def _answer_contradicts_tool(turns: list[_Turn], claims: Mapping[str, Any], answer: str | None) -> CheckResult:
    if not claims:
        return [], "not_applicable", "no field declared: pass claims={'field': r'pattern'} to compare the answer"
    if answer is None:
        return [], "could_not_run", "the run has no answer to compare"
    recorded: dict[str, list[tuple[Any, str]]] = {}
    for turn in turns:
        for piece in turn.recording.context_pieces:
            if piece.source_kind != KIND_TOOL_RESULT or piece.verdict != "admitted":
                continue
            try:
                data = json.loads(piece.content)
            except ValueError:
                continue
            for key, value in _fields(data, claims):
                entry = (value, piece.landed_by or piece.source_id)
                if entry not in recorded.setdefault(key, []):
                    recorded[key].append(entry)
    if not recorded:
        return [], "not_applicable", "no tool result holds a declared field"
    answer_step = RecordingIndex(turns[0].recording).answer_step()
    findings: list[Finding] = []
    compared = 0
    for key, values in recorded.items():
        stated = _stated(claims[key], answer)
        if stated is None:
            continue
        compared += 1
        if any(_normal(stated) == _normal(value) for value, _ in values):
            continue
        shown = ", ".join(f"{shorten(str(v), 30)} ({step})" for v, step in values)
        steps = tuple(dict.fromkeys([*(step for _, step in values), *([answer_step] if answer_step else [])]))
        findings.append(Finding(
            "answer_contradicts_tool", steps,
            f"the answer states {key} = {shorten(str(stated), 30)}, but the tool result said {shown}",
            "the answer reads well and contradicts the evidence the run itself fetched",
        ))
    if not compared:
        return [], "passed", "the answer states none of the declared fields"
    return findings, "passed", f"{compared} declared field(s) compared with the tool results"


def _fields(value: Any, wanted: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            if key in wanted and not isinstance(inner, dict | list):
                yield key, inner
            yield from _fields(inner, wanted)
    elif isinstance(value, list):
        for inner in value:
            yield from _fields(inner, wanted)


def _normal(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip().casefold()
    try:
        return float(text.replace(",", ""))
    except ValueError:
        pass
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return text


def _stated(reader: Any, answer: str) -> Any:
    if callable(reader):
        return reader(answer)
    match = reader.search(answer)
    if match is None:
        return None
    return match.group(1) if match.groups() else match.group(0)


def _unsupported_value(turns: list[_Turn], _claims: Mapping[str, Any], _answer: str | None) -> CheckResult:
    missing, call, looked, note = unsupported_values(turns[0].recording)
    if call is None or not looked:
        return [], "not_applicable" if call is None else "passed", note
    findings = [Finding("unsupported_value", tuple(dict.fromkeys(s for s in (call, one.step) if s)), one.what(call),
                        "the answer states it as fact, and nothing the model was given says so")
                for one in missing]
    return findings, "passed", note


def _tool_failed(turns: list[_Turn], _claims: Mapping[str, Any], _answer: str | None) -> CheckResult:
    ran = sum(len(turn.result_of) for turn in turns)
    if not ran:
        return [], "not_applicable", "the run ran no tool"
    findings = [Finding("tool_failed", tuple(s for s in (piece.detail.get("requested_by"), piece.landed_by) if s),
                        failed_tool(piece),
                        "the model read an error where the tool's result should have been: what it said next was "
                        "made without that result")
                for turn in turns for piece in turn.raised]
    return findings, "passed", f"{ran} tool call(s) looked at"


def failed_tool(piece: ContextPiece) -> str:
    """A failed tool call in one line: the tool, the exception and its message, and where in the tool it was raised."""
    detail = piece.detail
    frame = detail.get("error_frame")
    at = f" at {frame}" if frame else ""
    return (f"tool '{detail.get('tool', piece.source_id)}' raised {detail.get('error_type')}{at}: "
            f"{shorten(str(detail.get('error_message', '')), 120)}")


def _run_failed(turns: list[_Turn], _claims: Mapping[str, Any], _answer: str | None) -> CheckResult:
    failed = {turn.recording.path for turn in turns if turn.recording.status == "failed"}
    findings = []
    for turn in turns:
        recording = turn.recording
        error = recording.error or {}
        step = error.get("step_id")
        if recording.status != "failed" or step in failed:  # a member's failure is reported at the member
            continue
        frame = f" at {error['frame']}" if error.get("frame") else ""
        message = f": {shorten(str(error['message']), 120)}" if error.get("message") else ""
        findings.append(Finding(
            "run_failed", (step,) if isinstance(step, str) else (),
            f"{'the run' if not recording.path else 'member ' + recording.path} failed at {step or 'an unknown step'}"
            f" with {error.get('type', 'an error')}{frame}{message}",
            "the run stopped there: it has no answer, and what it did before is all there is to read"))
    members = len(turns) - 1
    return findings, "passed", f"the status of the run{f' and its {members} member run(s)' if members else ''} read"


# -- the registry: every check, in the order they run and are listed ----------------------
Check = Callable[[list[_Turn], Mapping[str, Any], str | None], CheckResult]

#: Every registered check, in the order they run and are listed.
CHECKS: dict[str, Check] = {
    "ungrounded_tool": _ungrounded_tool,
    "invented_identifier": _invented_identifier,
    "duplicate_tool_call": _duplicate_tool_call,
    "answer_contradicts_tool": _answer_contradicts_tool,
    "unsupported_value": _unsupported_value,
    "tool_failed": _tool_failed,
    "run_failed": _run_failed,
}
