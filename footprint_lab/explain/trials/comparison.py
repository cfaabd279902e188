"""Two runs side by side: what the model was given in each, piece by piece, call by call.

Rule kept here: a difference is always between two recorded calls, one of each run, aligned; and it is
named by what it is (a fact, a tool, a tool's result, the user's message), never by a position.

- **Alignment** (:func:`compare_runs`): the calls of each run (and of each member of a composition, by its
  path) are paired by step first (the agent's iteration, else the step id), then the calls left over
  by content (the pair whose pieces share the most), in order. A call with no partner is a
  difference of its own.
- **Pieces**: each part of a call's request (:class:`~footprint_lab.explain.trials._recorded_call.RecordedCall`) is
  keyed by what it is: a declaration by its kind and id, a tool by its name, a tool's result by the
  tool and which of its results it is, the user's and the model's turns by their order. A key in the
  first call only was *removed* in the second, one in the second only was *added*, one in both with
  another text was *changed* (with a word-level diff). Each says where it came from: the
  declaration, its trigger, the tool, and what the other run's record says of it (skipped by its
  trigger, over a budget, never declared).
- **Besides the pieces**: each pair's tool calls and replies side by side, the answers, the tokens
  and the time.

Which of these differences changed the answer is tested in :mod:`~footprint_lab.explain.trials.difference`.

Role: explain layer; reads recordings only, reruns nothing.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any

from footprint_lab.explain.arguments import recording_of
from footprint_lab.explain.provenance.members import members_of
from footprint_lab.explain.provenance.sources import NOT_REMOVABLE, describe_source, removal_id
from footprint_lab.explain.render import display_bundle, shorten
from footprint_lab.explain.trials._recorded_call import RecordedCall, _Part, recorded_call
from footprint_lab.markup.elements import TEXT_LIMIT
from footprint_lab.record.schema import KIND_TOOL_RESULT

if TYPE_CHECKING:
    import pandas as pd

    from footprint_lab.explain.arguments import RunLike
    from footprint_lab.record.recording import Recording


DIFFERENCE_COLUMNS = ["member", "call_a", "call_b", "change", "slot", "what", "source_kind", "source_id", "a", "b",
                      "diff", "came_from", "tokens_a", "tokens_b", "ms_a", "ms_b"]
_TOKENS = re.compile(r"\s+|[^\s]+")


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


def compare_runs(a: RunLike, b: RunLike) -> Difference:
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
