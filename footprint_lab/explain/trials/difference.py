"""Two runs side by side: what the model was given in each, piece by piece, and which difference changed the answer.

Rule kept here: a difference is always between two recorded calls, one of each run, aligned; and it is
named by what it is (a fact, a tool, a tool's result, the user's message), never by a position.

- **Alignment** (:func:`compare_runs`): the calls of each run (and of each member of a composition, by its
  path) are paired by step first (the agent's iteration, else the step id), then the calls left over
  by content (the pair whose pieces share the most), in order. A call with no partner is a
  difference of its own.
- **Pieces**: each part of a call's request (:class:`~footprint_lab.explain.trials.replay.RecordedCall`) is
  keyed by what it is: a declaration by its kind and id, a tool by its name, a tool's result by the
  tool and which of its results it is, the user's and the model's turns by their order. A key in the
  first call only was *removed* in the second, one in the second only was *added*, one in both with
  another text was *changed* (with a word-level diff). Each says where it came from: the
  declaration, its trigger, the tool, and what the other run's record says of it (skipped by its
  trigger, over a budget, never declared).
- **Besides the pieces**: each pair's tool calls and replies side by side, the answers, the tokens
  and the time.

:func:`explain_difference` carries each difference from a good run into a bad one (put back what was
removed, restore what changed, take out what was added) and tests, with the statistics, budget and
report of ``localize`` (:mod:`~footprint_lab.explain.trials.trial`), which of them flip the bad answer to
the good one. The comparator's question is "does this rerun give the *good* answer?" (not "does it
differ from the bad one?"): a difference explains the changed answer only when carrying it in brings
the good answer back; one that only breaks the bad answer into a third one explains nothing, and the
report counts those reruns apart. With ``replay=`` each arm is a replay of the bad run's answering
call with that difference carried in (every kind of difference of that call can be carried but a
message that was not sent and the model's own turns); with ``rerun=`` it is a rerun of the bad run
built with ``exclude=`` / ``force=``, as ``localize`` and ``find_dropped_context`` do, which can carry
a declaration or a tool in or out but not a changed text nor a tool's result. Nothing is skipped
quietly: every difference it could not carry is named with why.

Role: explain layer; reruns go through whatever it is handed, as ``localize``'s do.
Refusal raised here: :class:`SameAnswerError`.
"""

from __future__ import annotations

import inspect
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any, Unpack

from footprint_lab.explain.arguments import ExplainConfigError, recording_of
from footprint_lab.explain.provenance.members import members_of
from footprint_lab.explain.provenance.sources import NOT_REMOVABLE, describe_source, removal_id
from footprint_lab.explain.render import display_bundle, shorten
from footprint_lab.explain.trials._arm_fields import ArmFields
from footprint_lab.explain.trials._rerun_pool import Draws
from footprint_lab.explain.trials._stopping import Partial, partial_line, run_trial, stopped
from footprint_lab.explain.trials.ablation import budget_note, original_answer, untested_lines
from footprint_lab.explain.trials.replay import (
    CallReplayer,
    Carry,
    RecordedCall,
    _Part,
    check_provider,
    recorded_call,
    replay_policy,
)
from footprint_lab.explain.trials.rerun import Progress, Rerunner, check_comparator
from footprint_lab.explain.trials.settings import Trials, TrialSettings, settings_for
from footprint_lab.explain.trials.trial import (
    VERDICT_LABELS,
    Arm,
    ArmVerdict,
    TrialResult,
    default_budget,
)
from footprint_lab.markup.elements import TEXT_LIMIT
from footprint_lab.record.refusal import Refusal
from footprint_lab.record.schema import KIND_TOOL_RESULT

if TYPE_CHECKING:
    import pandas as pd

    from footprint_lab.record.recording import Recording

#: what a difference of a piece is called, seen from the first run to the second, and what carries it back
CARRY_WORDS = {"removed": "put back", "added": "take out", "changed": "restore"}
DIFFERENCE_COLUMNS = ["member", "call_a", "call_b", "change", "slot", "what", "source_kind", "source_id", "a", "b",
                      "diff", "came_from", "tokens_a", "tokens_b", "ms_a", "ms_b"]
_TOKENS = re.compile(r"\s+|[^\s]+")


class SameAnswerError(Refusal):
    """Raised by ``explain_difference`` when its comparator reads the good and the bad answer as the same.

    Carries ``comparator`` (the comparator's name): no rerun could then tell the good answer from the bad one.
    """

    code = "ERR_SAME_ANSWER"
    fields = ("comparator",)

    def __init__(self, function: str, comparator: str) -> None:
        super().__init__(f"{function}: the comparator ({comparator}) reads the good run's answer and the bad run's "
                         "as the same, so no rerun could show a difference bringing the good one back. Pass two runs "
                         "whose answers differ, or a comparator that tells them apart (footprint_lab.explain.compare "
                         "has ones that read a label or a mention).")
        self.comparator = comparator


# -- one call's pieces, keyed by what they are --------------------------------------------


@dataclass(frozen=True, slots=True)
class _Keyed:
    key: tuple[str, ...]
    index: int
    part: _Part
    text: str


def _base_key(part: _Part) -> tuple[str, ...]:
    piece = part.piece
    if part.slot == "tools":
        return ("tools", "tool", str(part.value.get("name")))
    if piece is None:
        return (part.slot, "unrecorded", str(part.value.get("role")) if isinstance(part.value, dict) else "")
    if piece.source_kind == KIND_TOOL_RESULT:
        return (part.slot, KIND_TOOL_RESULT, str(piece.detail.get("tool", "?")))
    if piece.source_kind in NOT_REMOVABLE:
        return (part.slot, piece.source_kind, "")
    return (part.slot, piece.source_kind, piece.source_id)


def _text(part: _Part) -> str:
    """What a part says, as compared and diffed: a tool's definition as JSON, a turn's calls without their ids."""
    value = part.value
    if part.slot == "system":
        return str(value)
    if part.slot == "tools":
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    text = str(value.get("content") or "")
    calls = value.get("tool_calls") or ()
    if calls:  # a call's id is drawn at random: two runs asking the same thing differ only in it
        text += "".join(f"\n[calls {c.get('name')}({json.dumps(c.get('args'), sort_keys=True, default=str)})]"
                        for c in calls if isinstance(c, dict))
    return text


def keyed_parts(call: RecordedCall) -> dict[tuple[str, ...], _Keyed]:
    """Each part of a call by its key (a repeated key numbered in order: the second result of a tool ...)."""
    seen: Counter[tuple[str, ...]] = Counter()
    found: dict[tuple[str, ...], _Keyed] = {}
    for index, part in enumerate(call.parts):
        base = _base_key(part)
        seen[base] += 1
        key = (*base, str(seen[base]))
        found[key] = _Keyed(key, index, part, _text(part))
    return found


def _label(key: tuple[str, ...]) -> str:
    slot, kind, name, nth = key
    if slot == "tools":
        return f"tool '{name}'"
    if kind == "unrecorded":
        return "the system text" if slot == "system" else f"unrecorded {name or 'message'} #{nth}"
    if kind == KIND_TOOL_RESULT:
        return f"result #{nth} of tool '{name}'"
    if kind == "user":
        return f"user message #{nth}"
    if kind == "assistant":
        return f"model turn #{nth}"
    return f"{kind} '{name}'" + (f" #{nth}" if nth != "1" else "")


# -- two calls' differences ------------------------------------------------------------------


def word_diff(a: str, b: str) -> list[tuple[str, str]]:
    """``a`` turned into ``b`` word by word: ``("=", same)``, ``("-", only in a)``, ``("+", only in b)`` in order.

    Each text is read up to the views' bound (:data:`~footprint_lab.markup.elements.TEXT_LIMIT`
    characters), so a huge tool result costs no more than a long one.
    """
    left, right = _TOKENS.findall(a[:TEXT_LIMIT]), _TOKENS.findall(b[:TEXT_LIMIT])
    out: list[tuple[str, str]] = []
    for op, i, j, k, m in SequenceMatcher(None, left, right, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("=", "".join(left[i:j])))
            continue
        if i < j:
            out.append(("-", "".join(left[i:j])))
        if k < m:
            out.append(("+", "".join(right[k:m])))
    return out


def spelled_diff(segments: Sequence[tuple[str, str]]) -> str:
    """A word diff as text: ``[-removed-]{+added+}``, as ``git diff --word-diff`` writes it."""
    return "".join(text if op == "=" else (f"[-{text}-]" if op == "-" else f"{{+{text}+}}") for op, text in segments)


@dataclass(slots=True)
class PieceChange:
    """One piece of a call that the other run's call did not have, or had with another text.

    ``change`` is seen from the first run to the second: ``removed`` (in the first call only),
    ``added`` (in the second only) or ``changed``; ``a`` / ``b`` are its texts (``None`` where absent);
    ``why`` says where it came from in each run.
    """

    change: str
    slot: str
    what: str
    source_kind: str
    source_id: str
    a: str | None
    b: str | None
    why: str
    #: the part in each call (``None`` where absent)
    a_part: _Part | None = None
    b_part: _Part | None = None
    a_index: int | None = None
    b_index: int | None = None
    key: tuple[str, ...] = ()

    @property
    def words(self) -> list[tuple[str, str]]:
        """The word-level diff of a changed text (empty for a piece added or removed)."""
        return word_diff(self.a, self.b) if self.a is not None and self.b is not None else []

    @property
    def removal_id(self) -> str | None:
        """The id a rerun takes it out by (``None`` for the user's message, the model's turns)."""
        part = self.a_part or self.b_part
        return removal_id(part.piece) if part is not None and part.piece is not None else None


def _why(part: _Part, recording: Recording, other: Recording, other_iteration: int | None, side: str,
         other_side: str) -> str:
    """Where a piece came from in the run that has it, and what the other run's record says of it."""
    piece = part.piece
    if piece is None:
        return f"in {side}: not recorded piece by piece"
    said = f"in {side}: {describe_source(piece)}"
    if piece.trigger not in ("base", "replay"):
        said += f", trigger {piece.trigger}"
    if piece.reason and piece.reason != piece.trigger:
        said += f" ({piece.reason})"
    if piece.source_kind in NOT_REMOVABLE or piece.source_kind == KIND_TOOL_RESULT:
        return said
    left = [p for p in other.context_pieces if p.source_id == piece.source_id and p.source_kind == piece.source_kind]
    skipped = [p for p in left if p.verdict != "admitted" and p.iteration == other_iteration] or \
              [p for p in left if p.verdict != "admitted"]
    if skipped:
        p = skipped[-1]
        at = f" at {p.allowed_by}" if p.allowed_by else ""
        return f"{said}; in {other_side}: {p.verdict}{at}: {p.reason or 'no reason recorded'}"
    if not left:
        return f"{said}; in {other_side}: not declared"
    return said


def call_changes(a: RecordedCall, b: RecordedCall) -> list[PieceChange]:
    """The pieces that differ between two calls, in the first call's order, then the second's additions."""
    left, right = keyed_parts(a), keyed_parts(b)
    found: list[PieceChange] = []
    for key in [*left, *(k for k in right if k not in left)]:
        x, y = left.get(key), right.get(key)
        if x is not None and y is not None and x.text == y.text:
            continue
        part = (x or y).part  # type: ignore[union-attr]
        piece = part.piece
        if x is not None and y is not None:
            change = "changed"
            source = describe_source(piece) if piece is not None else _label(key)
            why = f"{source}: its text differs" + ("" if x.part.piece is None or y.part.piece is None or
                                                    x.part.piece.trigger == y.part.piece.trigger else
                                                    f" (trigger {x.part.piece.trigger} in a, {y.part.piece.trigger} "
                                                    "in b)")
        elif x is not None:
            change = "removed"
            why = _why(x.part, a.recording, b.recording, b.exchange.iteration, "a", "b")
        else:
            change = "added"
            why = _why(part, b.recording, a.recording, a.exchange.iteration, "b", "a")
        found.append(PieceChange(
            change, part.slot, _label(key), piece.source_kind if piece is not None else key[1],
            piece.source_id if piece is not None else "", x.text if x else None, y.text if y else None, why,
            x.part if x else None, y.part if y else None, x.index if x else None, y.index if y else None, key))
    return found


def _calls_of(exchange: Any) -> list[str]:
    return [f"{c.name}({json.dumps(c.args, sort_keys=True, ensure_ascii=False, default=str)})"
            for c in exchange.response.tool_calls]


@dataclass(slots=True)
class CallPair:
    """Two aligned calls (one side ``None`` for a call with no partner) and the pieces that differ."""

    member: str
    a: RecordedCall | None
    b: RecordedCall | None
    pieces: list[PieceChange] = field(default_factory=list)

    def _side(self, call: RecordedCall | None, read: Callable[[Any], Any]) -> Any:
        return read(call.exchange) if call is not None else None

    step_a = property(lambda self: self._side(self.a, lambda x: x.step_id))
    step_b = property(lambda self: self._side(self.b, lambda x: x.step_id))
    tool_calls_a = property(lambda self: self._side(self.a, _calls_of), doc="The tool calls the first call asked for.")
    tool_calls_b = property(lambda self: self._side(self.b, _calls_of))
    reply_a = property(lambda self: self._side(self.a, lambda x: x.response.content))
    reply_b = property(lambda self: self._side(self.b, lambda x: x.response.content))
    tokens_a = property(lambda self: self._side(self.a, _tokens), doc="Input plus output tokens of the first call.")
    tokens_b = property(lambda self: self._side(self.b, _tokens))
    ms_a = property(lambda self: self._side(self.a, lambda x: x.duration_ms))
    ms_b = property(lambda self: self._side(self.b, lambda x: x.duration_ms))

    @property
    def same(self) -> bool:
        """Both calls there, sent the same pieces, and answered alike."""
        return (self.a is not None and self.b is not None and not self.pieces
                and self.tool_calls_a == self.tool_calls_b and self.reply_a == self.reply_b)


def _tokens(exchange: Any) -> int:
    usage = exchange.response.usage
    return int(usage.input_tokens + usage.output_tokens)


def _run_calls(recording: Recording, function: str) -> dict[str, list[RecordedCall]]:
    """Every recorded call of a run tree, by member path (``""`` for the run itself), in order."""
    members = members_of(recording)
    found: dict[str, list[RecordedCall]] = {}
    pending = [recording]
    while pending:
        current = pending.pop(0)
        pending.extend(current.children)
        path = members[id(current)].path
        found[path] = [recorded_call(function, current, exchange.step_id) for exchange in current.exchanges]
    return found


def _step_key(calls: Sequence[RecordedCall]) -> list[str]:
    """Each call's step key: its iteration (and which call of it), else its step id."""
    seen: Counter[int] = Counter()
    keys = []
    for call in calls:
        iteration = call.exchange.iteration
        if iteration is None:
            keys.append(call.step_id)
        else:
            seen[iteration] += 1
            keys.append(f"iteration {iteration}.{seen[iteration]}")
    return keys


def _shared(a: RecordedCall, b: RecordedCall) -> float:
    """How much two calls' pieces have in common (0: nothing, 1: the same), keys and texts together."""
    left = {(k, p.text) for k, p in keyed_parts(a).items()}
    right = {(k, p.text) for k, p in keyed_parts(b).items()}
    return len(left & right) / max(len(left | right), 1)


def align(a: Sequence[RecordedCall], b: Sequence[RecordedCall]) -> list[tuple[RecordedCall | None,
                                                                              RecordedCall | None]]:
    """Pairs of calls: by step key first, then the calls left between two pairs by content, in order."""
    pairs: list[tuple[RecordedCall | None, RecordedCall | None]] = []
    i = j = 0
    for block in SequenceMatcher(None, _step_key(a), _step_key(b), autojunk=False).get_matching_blocks():
        pairs += _by_content(a[i:block.a], b[j:block.b])
        pairs += [(a[block.a + n], b[block.b + n]) for n in range(block.size)]
        i, j = block.a + block.size, block.b + block.size
    return pairs


def _by_content(a: Sequence[RecordedCall], b: Sequence[RecordedCall]) -> list[tuple[RecordedCall | None,
                                                                                      RecordedCall | None]]:
    pairs: list[tuple[RecordedCall | None, RecordedCall | None]] = []
    start = 0
    for call in a:
        scores = [(_shared(call, other), n) for n, other in enumerate(b[start:], start)]
        best = max(scores, default=(0.0, -1))
        if best[0] <= 0.0:
            pairs.append((call, None))
            continue
        pairs += [(None, other) for other in b[start:best[1]]]
        pairs.append((call, b[best[1]]))
        start = best[1] + 1
    return pairs + [(None, other) for other in b[start:]]


@dataclass(slots=True)
class Difference:
    """Two runs compared: their calls aligned, each pair's differing pieces, tool calls, replies, tokens and time."""

    run_a: str
    run_b: str
    answer_a: str | None
    answer_b: str | None
    calls: list[CallPair]
    tokens: tuple[int, int]
    ms: tuple[float, float]

    @property
    def differing(self) -> list[CallPair]:
        """The aligned pairs that differ in anything (pieces, tool calls, reply, or a call with no partner)."""
        return [pair for pair in self.calls if not pair.same]

    @property
    def pieces(self) -> list[PieceChange]:
        return [change for pair in self.calls for change in pair.pieces]

    def summary(self) -> str:
        counts = Counter(change.change for change in self.pieces)
        alone = sum(1 for pair in self.calls if pair.a is None or pair.b is None)
        answers = "the same answer" if self.answer_a == self.answer_b else "different answers"
        return (f"Difference of run {self.run_a} (a) and run {self.run_b} (b), {answers}: {len(self.calls)} "
                f"aligned call(s), {len(self.differing)} differ{f', {alone} with no partner' if alone else ''}; "
                f"pieces {counts['added']} added, {counts['removed']} removed, {counts['changed']} changed; "
                f"tokens {self.tokens[0]} / {self.tokens[1]}, time {self.ms[0]:.0f} / {self.ms[1]:.0f} ms.")

    def __str__(self) -> str:
        lines = [self.summary(), f"  answer a: \"{shorten(self.answer_a or '-')}\"",
                 f"  answer b: \"{shorten(self.answer_b or '-')}\""]
        for pair in self.differing:
            where = f" in member '{pair.member}'" if pair.member else ""
            lines.append(f"Call {pair.step_a or '(none)'} / {pair.step_b or '(none)'}{where}: tokens "
                         f"{_or(pair.tokens_a)} / {_or(pair.tokens_b)}")
            for change in pair.pieces:
                text = (spelled_diff(change.words) if change.change == "changed"
                        else change.a if change.change == "removed" else change.b) or ""
                lines.append(f"  {change.change} {change.what}: \"{shorten(text)}\" ({change.why})")
            if pair.tool_calls_a != pair.tool_calls_b:
                lines.append(f"  tool calls: {_listed(pair.tool_calls_a)} / {_listed(pair.tool_calls_b)}")
            if pair.reply_a != pair.reply_b:
                lines.append(f"  reply: \"{shorten(pair.reply_a or '-', 60)}\" / "
                             f"\"{shorten(pair.reply_b or '-', 60)}\"")
        return "\n".join(lines)

    def rows(self) -> list[dict[str, Any]]:
        """One row per difference: each piece, each pair's tool calls and reply, a call with no partner, the answer."""
        rows: list[dict[str, Any]] = []
        for pair in self.differing:
            common = {"member": pair.member, "call_a": pair.step_a, "call_b": pair.step_b, "tokens_a": pair.tokens_a,
                      "tokens_b": pair.tokens_b, "ms_a": pair.ms_a, "ms_b": pair.ms_b}
            if pair.a is None or pair.b is None:
                rows.append({**common, "change": "call only in " + ("b" if pair.a is None else "a"),
                             "what": "LLM call", "came_from": "no call of the other run aligns with it"})
                continue
            for change in pair.pieces:
                rows.append({**common, "change": change.change, "slot": change.slot, "what": change.what,
                             "source_kind": change.source_kind, "source_id": change.source_id, "a": change.a,
                             "b": change.b, "diff": spelled_diff(change.words) if change.words else None,
                             "came_from": change.why})
            if pair.tool_calls_a != pair.tool_calls_b:
                rows.append({**common, "change": "tool calls", "what": "tool calls asked for",
                             "a": _listed(pair.tool_calls_a), "b": _listed(pair.tool_calls_b)})
            if pair.reply_a != pair.reply_b:
                rows.append({**common, "change": "reply", "what": "the call's reply", "a": pair.reply_a,
                             "b": pair.reply_b})
        if self.answer_a != self.answer_b:
            rows.append({"member": "", "change": "answer", "what": "the run's answer", "a": self.answer_a,
                         "b": self.answer_b, "tokens_a": self.tokens[0], "tokens_b": self.tokens[1],
                         "ms_a": self.ms[0], "ms_b": self.ms[1]})
        return rows

    def to_frame(self) -> pd.DataFrame:
        """One row per difference (see :meth:`rows`), columns :data:`DIFFERENCE_COLUMNS`."""
        from footprint_lab.explain.frame import ShownFrame  # imports pandas

        return ShownFrame(self.rows(), columns=DIFFERENCE_COLUMNS)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return display_bundle("difference", self, self.summary(), str(self), include, exclude)


def _or(value: Any) -> str:
    return "-" if value is None else str(value)


def _listed(calls: Sequence[str] | None) -> str:
    return "-" if calls is None else (", ".join(calls) or "none")


def _totals(recording: Recording) -> tuple[int, float]:
    tokens = sum(_tokens(x) for x in recording.exchanges)
    return tokens + sum(_totals(child)[0] for child in recording.children), recording.duration_ms


def compare_runs(a: Any, b: Any) -> Difference:
    """What two runs were given and did, call by call: see the module docstring.

    ``a`` and ``b`` are runs (native, loaded with ``load_recording``, imported with ``from_spans``,
    a member's run, a chat's turn) or their recordings. Compositions are compared member by member
    (by path). ``Difference.to_frame()`` has one row per difference; displayed, it is a view.
    """
    function = "compare_runs"
    left, right = recording_of(a, function, "a"), recording_of(b, function, "b")
    calls_a, calls_b = _run_calls(left, function), _run_calls(right, function)
    pairs: list[CallPair] = []
    for member in [*calls_a, *(m for m in calls_b if m not in calls_a)]:
        for x, y in align(calls_a.get(member, []), calls_b.get(member, [])):
            pairs.append(CallPair(member, x, y, call_changes(x, y) if x is not None and y is not None else []))
    (tokens_a, ms_a), (tokens_b, ms_b) = _totals(left), _totals(right)
    return Difference(left.run_id, right.run_id, left.answer, right.answer, pairs, (tokens_a, tokens_b), (ms_a, ms_b))


# -- which difference changed the answer ----------------------------------------------------------


@dataclass(slots=True)
class CarriedDifference(ArmFields):
    """One difference carried from the good run into the bad one, and what the reruns with it said.

    A flip is a rerun that gave the good answer (by the comparator); ``other`` counts the finished
    reruns that gave neither the good answer nor the bad one's text (spacing aside): the difference
    changed the answer without bringing the good one back.
    """

    name: str
    change: PieceChange
    call: str
    trial: ArmVerdict
    other: int = 0

    def line(self) -> str:
        cost = f"{self.reruns} rerun{'s' if self.reruns != 1 else ''}"
        other = f"; {self.other} rerun(s) gave a third answer" if self.other else ""
        return f"{VERDICT_LABELS[self.verdict]}: {self.name} ({self.change.why}) {self.reason}{other}; {cost}"


@dataclass(slots=True)
class DifferenceExplanation(Partial):
    """Which differences between a good run and a bad one flip the bad answer to the good one, and which do not."""

    good: str
    bad: str
    difference: Difference
    tested: list[CarriedDifference]
    untested: list[tuple[str, str]]
    comparator: str
    trial: TrialResult
    #: ``replay`` (the bad run's answering call replayed) or ``rerun`` (the bad run rerun)
    how: str
    #: ``(reruns done, reruns planned)`` when the call was stopped: the verdicts it reached, the rest undecided
    stopped: tuple[int, int] | None = None

    reruns = property(lambda self: self.trial.reruns, doc="Every rerun started, failed ones included.")
    budget = property(lambda self: self.trial.budget)
    alpha = property(lambda self: self.trial.alpha)
    notes = property(lambda self: self.trial.notes)

    @property
    def confirmed(self) -> list[str]:
        """The differences shown to bring the good answer back when carried into the bad run."""
        return [d.name for d in self.tested if d.verdict == "confirmed"]

    def verdict(self, name: str) -> str | None:
        return next((d.verdict for d in self.tested if d.name == name), None)

    def summary(self) -> str:
        counts = Counter(d.verdict for d in self.tested)
        flips, finished = self.trial.noise
        failed = self.trial.failures
        lost = f"; {sum(failed.values())} failed" if failed else ""
        untested = (f"; {len(self.untested)} not tested (named below)" if self.untested
                    else "; every difference was tested")
        return (f"{partial_line(self.stopped)}Difference explained by {self.how}: {counts['confirmed']} of "
                f"{len(self.tested)} tested differences "
                f"bring the good answer \"{shorten(self.good, 40)}\" back into the bad run, {counts['undecided']} "
                f"undecided{untested}; {self.reruns} reruns (budget {self.budget}){lost}; "
                f"noise: {flips}/{finished} unchanged reruns gave the good answer; false-confirmation rate at most "
                f"{self.alpha:.0%}; comparator {self.comparator}.")

    def __str__(self) -> str:
        lines = [self.summary(), f"  good: \"{shorten(self.good)}\"", f"  bad:  \"{shorten(self.bad)}\"",
                 *(d.line() for d in self.tested)]
        lines += untested_lines(self.untested)
        lines += self.notes
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """One row per tested difference: what it is, its verdict and every count the verdict rests on."""
        from footprint_lab.explain.frame import ShownFrame  # imports pandas

        rows = [{"difference": d.name, "change": d.change.change, "what": d.change.what, "call": d.call,
                 "verdict": d.verdict, "flips": d.flips, "samples": d.samples, "other": d.other,
                 "noise_flips": d.noise_flips, "noise_samples": d.noise_samples, "p_value": d.p_value,
                 "level": d.level, "reruns": d.reruns, "failed": d.failed, "came_from": d.change.why,
                 "reason": d.reason}
                for d in self.tested]
        return ShownFrame(rows, columns=EXPLANATION_COLUMNS)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return display_bundle("difference_explanation", self, self.summary(), str(self), include, exclude)


EXPLANATION_COLUMNS = ["difference", "change", "what", "call", "verdict", "flips", "samples", "other", "noise_flips",
                       "noise_samples", "p_value", "level", "reruns", "failed", "came_from", "reason"]


class GoodAnswer:
    """The comparator of ``explain_difference``: a rerun flips when it gives the good answer.

    It asks the given comparator (``(original, rerun) -> True when they differ``) whether the rerun's
    answer differs from the good one, and says the opposite; an awaitable judgement is awaited.
    """

    def __init__(self, compare: Callable[[str, str], Any]) -> None:
        self.compare = compare

    def __call__(self, good: str, answer: str) -> Any:
        judged = self.compare(good, answer)
        if inspect.isawaitable(judged):
            return _opposite(judged)
        return None if judged is None else not judged

    def __repr__(self) -> str:
        return f"the good answer, by {self.compare!r}"


async def _opposite(judged: Any) -> bool | None:
    value = await judged
    return None if value is None else not value


#: why a difference cannot be carried, by how it would be carried
_REPLAY_CANNOT = {
    "assistant": "a model turn: the model's own turns are what a replay produces again",
    "unsent message": ("a message the bad call was not sent: putting it back needs the model turn that asked for "
                       "it; rerun= reruns the whole run"),
}
_RERUN_CANNOT = {
    "changed": "a changed text: a rerun cannot restore another run's text (replay= restores it in the answering call)",
    "message": ("a message of the conversation (a tool's result, a turn): a rerun produces them again; replay= "
                "carries a tool result into the answering call"),
}


def _anchor(change: PieceChange, good: RecordedCall, bad: RecordedCall, bad_keys: dict[tuple[str, ...], _Keyed]
            ) -> int:
    """Where in the bad call a piece only the good call was sent goes back: after the last piece of its slot
    that comes before it in the good call and that the bad call has too, else where its slot begins."""
    good_keys = list(keyed_parts(good))
    before = good_keys[: good_keys.index(change.key)]
    for key in reversed(before):
        if key[0] == change.slot and key in bad_keys:
            return bad_keys[key].index + 1
    first = [k for k, part in enumerate(bad.parts) if part.slot == change.slot]
    if first:
        return first[0]
    return 0 if change.slot == "system" else len(bad.parts)


def _replay_carry(change: PieceChange, good: RecordedCall, bad: RecordedCall,
                  bad_keys: dict[tuple[str, ...], _Keyed]) -> Carry | str:
    """How one difference of the answering calls is carried into the bad one, or why it cannot be."""
    origin = f"{good.recording.run_id}/{good.step_id}"
    if change.source_kind == "assistant":
        return _REPLAY_CANNOT["assistant"]
    if change.change == "added":
        return Carry(drop=frozenset({change.b_index})) if change.b_index is not None else "not in the bad call"
    assert change.a_part is not None
    carried = _Part(change.a_part.slot, change.a_part.piece, change.a_part.value, origin)
    if change.change == "removed":
        if change.slot == "messages":
            return _REPLAY_CANNOT["unsent message"]
        return Carry(insert={_anchor(change, good, bad, bad_keys): (carried,)})
    assert change.b_index is not None and change.b_part is not None
    if change.slot == "messages":  # the good text, in the bad call's own message (its call id kept)
        carried.value = {**change.b_part.value, "content": change.a_part.value.get("content")}
    return Carry(restore={change.b_index: carried})


def _rerun_arm(change: PieceChange) -> tuple[tuple[str, ...], tuple[str, ...]] | str:
    """``(exclude, force)`` that carry one difference into a rerun of the bad run, or why none can."""
    if change.change == "changed":
        return _RERUN_CANNOT["changed"]
    if change.slot == "messages":
        return _RERUN_CANNOT["message"]
    name = change.removal_id
    if name is None:
        return "no rerun can take it out or force it in"
    return ((name,), ()) if change.change == "added" else ((), (name,))


def _flat(text: str | None) -> str:
    return " ".join((text or "").split())


def _carried_name(change: PieceChange) -> str:
    return f"{CARRY_WORDS[change.change]} {change.what}"


async def explain_difference(
    good: Any,
    bad: Any,
    *,
    rerun: Any = None,
    replay: Any = None,
    input: Any = None,
    continue_from: Any = None,
    trials: Trials | None = None,
    **settings: Unpack[TrialSettings],
) -> DifferenceExplanation:
    """Which differences between a good run and a bad one bring the good answer back into the bad run.

    Each difference (:func:`compare_runs`) is carried from ``good`` into ``bad``: what ``good`` was sent
    and ``bad`` was not is put back, a changed text restored, what ``bad`` was sent alone taken out.
    ``replay`` is a provider: each arm replays the bad run's answering call with the difference
    carried in (the differences of that call with the good run's answering call; those of earlier
    calls are named untested). ``rerun`` is the bad run's agent or a factory called with
    ``exclude=`` / ``force=`` (as ``localize`` and ``find_dropped_context`` call it): each arm reruns
    the bad run with the declaration or tool carried in or out. A rerun flips when ``comparator``
    (``(original, rerun) -> True when they differ``, by default ``TextDifference``) reads its answer
    as the *good* answer. The screening, statistics, budget and the trial settings (``trials=`` or
    keywords) are ``localize``'s.
    """
    function = "explain_difference"
    good_rec, bad_rec = recording_of(good, function, "good"), recording_of(bad, function, "bad")
    good_answer, bad_answer = original_answer(function, good_rec), original_answer(function, bad_rec)
    chosen_trials = settings_for(function, trials, settings).for_call(function)
    samples, alpha, budget, concurrency = (chosen_trials.samples or 3, chosen_trials.alpha, chosen_trials.budget,
                                           chosen_trials.concurrency)
    compare_answers = check_comparator(function, chosen_trials.comparator)
    if replay is not None and rerun is not None:
        raise ExplainConfigError(function, "replay", "a provider beside rerun=",
                                 "is one way to carry the differences in; rerun= is the other: pass one of them "
                                 "(replay= re-sends the bad run's answering call, rerun= reruns the bad run)")
    differs = compare_answers(good_answer, bad_answer)
    if inspect.isawaitable(differs):
        differs = await differs
    if not differs:
        raise SameAnswerError(function, repr(compare_answers))
    found = compare_runs(good_rec, bad_rec)
    arms: dict[str, tuple[Arm, PieceChange, str]] = {}
    untested: list[tuple[str, str]] = []
    carries: dict[str, Carry] = {}
    answering: set[int] = set()
    if replay is not None:
        good_call, bad_call = recorded_call(function, good_rec), recorded_call(function, bad_rec)
        bad_keys = keyed_parts(bad_call)
        for change in call_changes(good_call, bad_call):
            name = _carried_name(change)
            carry = _replay_carry(change, good_call, bad_call, bad_keys)
            if isinstance(carry, str):
                untested.append((name, carry))
                continue
            carries[name] = carry
            arms[name] = (Arm(name, (name,)), change, bad_call.step_id)
        answering = {id(pair) for pair in found.calls if pair.b is not None and pair.b.step_id == bad_call.step_id
                     and pair.member == ""}
        policy = replay_policy(function, bad_rec)
        runner: Any = CallReplayer(bad_call, check_provider(function, replay, "replay"), policy, carries)
    else:
        runner = rerun
    earlier: dict[str, list[str]] = {}
    for pair in found.calls:
        if id(pair) in answering:
            continue
        call = pair.step_b or pair.step_a or "?"
        for change in pair.pieces:
            name = _carried_name(change) + (f" in member '{pair.member}'" if pair.member else "")
            if replay is not None:
                if name not in arms:
                    earlier.setdefault(name, []).append(call)
                continue
            how = _rerun_arm(change)
            if isinstance(how, str):
                earlier.setdefault(name, []).append(f"{call}: {how}")
            elif name not in arms:
                arms[name] = (Arm(name, *how), change, call)
    for name, where in earlier.items():
        if name in arms:
            continue
        why = (f"in call(s) {', '.join(dict.fromkeys(where))}, not the answering call: a replay of the answering "
               "call cannot carry it; rerun= reruns the whole run" if replay is not None
               else "; ".join(dict.fromkeys(where)))
        untested.append((name, why))
    rerunner = Rerunner(function, runner, bad_rec, input, continue_from, retries=chosen_trials.retries,
                         time_limit=chosen_trials.time_limit)
    chosen = list(arms.values())
    trial_arms = [arm for arm, _, _ in chosen]
    limit = budget if budget is not None else default_budget(samples, len(trial_arms))
    judge = GoodAnswer(compare_answers)
    bar = Progress(limit, "explain_difference", chosen_trials.progress, unit="reruns")
    draws = Draws(rerunner, judge, good_answer, concurrency=concurrency, bar=bar)
    trial, stop = await run_trial("explain_difference", draws, bar, trial_arms, samples=samples, alpha=alpha,
                                  budget=limit, prepare=draws.prepare)
    trial.notes += budget_note(trial, budget, default_budget(samples, len(trial_arms)))
    by_key = {verdict.arm.key: verdict for verdict in trial.arms}
    tested: list[CarriedDifference] = []
    for arm, change, call in chosen:
        verdict = by_key[arm.key]
        if verdict.untested:
            untested.append((arm.key, verdict.reason.removeprefix("was not tested: ")))
            continue
        other = sum(1 for o in (*verdict.screening, *verdict.confirmation)
                    if o.error is None and not o.flipped and _flat(o.answer) != _flat(bad_answer))
        tested.append(CarriedDifference(arm.key, change, call, verdict, other))
    report = DifferenceExplanation(good_answer, bad_answer, found, tested, untested, repr(judge), trial,
                                   "replay" if replay is not None else "rerun", stop)
    if stop is not None:
        raise stopped("explain_difference", bar, report)
    return report
