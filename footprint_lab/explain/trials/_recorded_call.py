"""One recorded LLM call as a list of parts, each tied to the piece it came from, and the request they make.

Rule kept here: a recorded call's request is rebuilt from its parts alone (the system slot's pieces,
the messages, the tool definitions, in the order sent), so removing, editing or carrying in a part
changes that part and nothing else; a tool result removed takes the call that asked for it out of
the assistant turn, so the request stays one a model accepts.

It holds :class:`RecordedCall` (a call's parts and the ids they can be named by),
:func:`recorded_call` (the answering call of a run, or one named by its step id) and :class:`Carry`
(parts of another run's call carried in). Sending the request again and recording the reply is
:mod:`~footprint_lab.explain.trials.replay`'s; comparing two calls part by part is
:mod:`~footprint_lab.explain.trials.comparison`'s.

Role: explain layer; it reads recordings and builds requests, never sends one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from footprint_lab.base.refusal import describe_shape
from footprint_lab.explain.arguments import ExplainConfigError, recording_of
from footprint_lab.explain.provenance.sources import NOT_REMOVABLE, removal_id
from footprint_lab.providers.types import LLMRequest
from footprint_lab.record.captured import Slot
from footprint_lab.record.schema import HISTORY, TURN_KINDS

if TYPE_CHECKING:
    from footprint_lab.record.recording import ContextPiece, LLMExchange, Recording


def replay_id(piece: ContextPiece) -> str | None:
    """The id a replay removes a piece by: its removal id, or for an earlier turn of a conversation (``history#i``,
    which a rerun keeps) its own id, since a replay edits the recorded request itself."""
    if piece.source_id.startswith(HISTORY) and piece.source_kind in TURN_KINDS:
        return piece.source_id
    return removal_id(piece)


@dataclass(slots=True)
class _Part:
    """One part of the recorded request and the piece it came from (``None``: a part no piece records)."""

    slot: Slot
    piece: ContextPiece | None
    value: Any  # the system text of a piece, a message dict, a tool definition
    #: ``run_id/step_id`` of another run's call this part was carried from (``None``: this call's own)
    origin: str | None = None
    #: which system message of the recorded request a system part went in (a request may send several)
    group: int = 0


@dataclass(frozen=True, slots=True)
class Carry:
    """Parts of another run's call carried into this call's request ("put back what was removed").

    ``drop``: indices of this call's parts taken out; ``restore``: an index of this call's parts and
    the other call's part sent in its place; ``insert``: an index of this call's parts (its length for
    the end) and the other call's parts sent before it.
    """

    drop: frozenset[int] = frozenset()
    restore: Mapping[int, _Part] = field(default_factory=dict)
    insert: Mapping[int, tuple[_Part, ...]] = field(default_factory=dict)

    @staticmethod
    def merged(carries: Sequence[Carry]) -> Carry:
        """Every change of ``carries`` at once (inserts at one place keep the order given)."""
        insert: dict[int, tuple[_Part, ...]] = {}
        for carry in carries:
            for k, parts in carry.insert.items():
                insert[k] = (*insert.get(k, ()), *parts)
        return Carry(frozenset().union(*(c.drop for c in carries)),
                     {k: part for c in carries for k, part in c.restore.items()}, insert)


@dataclass(slots=True)
class RecordedCall:
    """One recorded call's request, part by part, and the ids its pieces can be named by."""

    recording: Recording
    exchange: LLMExchange
    parts: list[_Part]

    @property
    def step_id(self) -> str:
        return self.exchange.step_id

    def names(self) -> dict[str, list[int]]:
        """Each id a replay can name (removal id, and each piece's own source id) and the parts it covers."""
        named: dict[str, list[int]] = {}
        for k, part in enumerate(self.parts):
            if part.piece is None or (part.piece.source_kind in NOT_REMOVABLE and replay_id(part.piece) is None):
                continue
            for name in dict.fromkeys((replay_id(part.piece), part.piece.source_id)):
                if name is not None:
                    named.setdefault(name, []).append(k)
        return named

    def removable(self) -> list[str]:
        """The removal ids of this call's pieces, in the order sent (what ``localize(replay=...)`` tests)."""
        found = (replay_id(p.piece) for p in self.parts if p.piece is not None)
        return list(dict.fromkeys(name for name in found if name is not None))

    def turns(self) -> dict[str, str]:
        """The earlier turns of the conversation this call was sent (``history#i``), each with its kind: a replay
        removes them by id, where a rerun keeps them."""
        return {p.piece.source_id: p.piece.source_kind for p in self.parts
                if p.piece is not None and replay_id(p.piece) == p.piece.source_id != removal_id(p.piece)}

    def sent_whole(self) -> set[str]:
        """The removal ids of pieces the call was sent inside a text a replay sends whole (a system text the runner
        formatted, documents a framework put inside a user turn): sent, yet not removable one by one."""
        pieces = self.recording.context_pieces
        held = {replay_id(pieces[i]) for indices in self.recording.exchange_pieces(self.exchange).values()
                for i in indices if 0 <= i < len(pieces)}
        return {name for name in held if name is not None} - set(self.removable())

    def _askers(self) -> dict[int, int]:
        """For each tool result among the parts, the part of the nearest earlier assistant turn that asked for it."""
        latest: dict[Any, int] = {}
        asker: dict[int, int] = {}
        for k, part in enumerate(self.parts):
            if part.slot != "messages":
                continue
            if part.value.get("role") == "tool" and part.value.get("tool_call_id") in latest:
                asker[k] = latest[part.value.get("tool_call_id")]
            for call in part.value.get("tool_calls") or ():
                latest[call.get("id")] = k
        return asker

    def request(self, without: Sequence[str] = (), edit: Mapping[str, str] | None = None, *,
                seed: int | None = None, carry: Carry | None = None) -> tuple[LLMRequest, list[tuple[_Part, str, Any]]]:
        """The request with ``without`` removed, ``edit`` applied and ``carry`` carried in, and each part's fate
        (``kept``, ``edited``, ``removed``, ``restored``, ``inserted``) with what the request holds for it (``None``
        when removed, or an assistant turn left empty)."""
        carry = carry or Carry()
        named = self.names()
        gone = {k for name in without for k in named[name]} | carry.drop
        changed = {k: text for name, text in (edit or {}).items() for k in named[name]}
        # a tool result answers the nearest earlier turn that asked for its id (each turn of a chat numbers its calls
        # anew): a result removed takes its call out of that turn, and a turn removed takes its results along (a tool
        # message must follow the turn that asked for it)
        asker = self._askers()
        answered_gone = {k for k, turn in asker.items() if turn in gone}
        calls_gone: dict[int, set[Any]] = {}
        for k in gone:
            if k in asker:
                calls_gone.setdefault(asker[k], set()).add(self.parts[k].value.get("tool_call_id"))
        system: list[str] = []
        groups: dict[int, list[str]] = {}  # the system messages the recorded request sent, by their order
        messages: list[dict[str, Any]] = []
        tools: list[dict[str, Any]] = []
        fates: list[tuple[_Part, str, Any]] = []
        order: list[tuple[int, _Part, str]] = []
        for k in range(len(self.parts) + 1):
            order += [(-1, part, "inserted") for part in carry.insert.get(k, ())]
            if k < len(self.parts):
                order.append((k, carry.restore[k], "restored") if k in carry.restore else (k, self.parts[k], ""))
        for k, part, carried in order:
            if k in gone or k in answered_gone:
                fates.append((part, "removed", None))
                continue
            fate = carried or ("edited" if k in changed else "kept")
            sent: Any
            if part.slot == "system":
                sent = changed.get(k, part.value)
                system.append(sent)
                groups.setdefault(part.group, []).append(sent)
            elif part.slot == "tools":
                sent = {**part.value, "description": changed[k]} if k in changed else part.value
                tools.append(sent)
            else:
                sent = dict(part.value)
                if k in changed:
                    sent["content"] = changed[k]
                if k in calls_gone and sent.get("tool_calls"):
                    kept = [c for c in sent["tool_calls"] if c.get("id") not in calls_gone[k]]
                    if kept:
                        sent["tool_calls"] = kept
                    else:
                        del sent["tool_calls"]
                        if not sent.get("content"):  # an assistant turn that only asked for removed calls
                            fates.append((part, "removed", None))
                            continue
                messages.append(sent)
            fates.append((part, fate, sent))
        sent_apart = ["\n\n".join(texts) for _, texts in sorted(groups.items())]
        if len(sent_apart) > 1:  # sent as several system messages: the first as the system text, the rest after it
            system = [sent_apart[0]]
            messages = [*({"role": "system", "content": text} for text in sent_apart[1:]), *messages]
        request = LLMRequest(model=self.exchange.model, system="\n\n".join(system), messages=messages, tools=tools,
                             iteration=1, call_index=0, seed=seed,
                             input_chars=sum(map(len, system)) + sum(len(str(m.get("content") or ""))
                                                                      for m in messages))
        return request, fates


def recorded_call(function: str, run: Any, call: str | None = None) -> RecordedCall:
    """The recorded call of ``run`` to replay: ``call`` (a step id) or the answering call; refused by name when the
    run recorded none or the system text cannot be told apart piece by piece."""
    recording = recording_of(run, function)
    exchanges = list(recording.exchanges)
    if not exchanges:
        raise ExplainConfigError(function, "run", "a run with no recorded LLM call",
                                 "must hold at least one LLM call to replay (a composition's member runs are "
                                 "replayed one by one: pass the member's run)")
    if call is None:
        answering = [e for e in exchanges if e.response.content is not None and e.response.content == recording.answer]
        exchange = (answering or exchanges)[-1]
    else:
        found = [e for e in exchanges if e.step_id == call] if isinstance(call, str) else []
        if not found:
            raise ExplainConfigError(function, "call", describe_shape(call),
                                     "must be the step id of one of the run's LLM calls (run.steps lists them, stage "
                                     "call-llm), or None for the answering call")
        exchange = found[0]
    pieces = recording.context_pieces
    slots = recording.exchange_pieces(exchange)
    system_pieces = [pieces[i] for i in slots["system"]]
    parts: list[_Part] = []
    if "\n\n".join(p.content for p in system_pieces) == exchange.system:
        parts += _grouped([_Part("system", p, p.content) for p in system_pieces], exchange)
    else:  # the system text is not the join of its pieces (a runner that formats it): it goes whole, unnamed
        parts.append(_Part("system", None, exchange.system))
    messages = recording.request_messages(exchange)
    named = slots["messages"]
    parts += [_Part("messages", pieces[named[k]] if k < len(named) else None, message)
              for k, message in enumerate(messages)]
    tools = slots["tools"]
    parts += [_Part("tools", pieces[tools[k]] if k < len(tools) else None, schema)
              for k, schema in enumerate(exchange.tools)]
    return RecordedCall(recording, exchange, parts)


def _grouped(parts: list[_Part], exchange: LLMExchange) -> list[_Part]:
    """``parts`` (the system text's pieces, in order) each told which system message it went in, when the recorded
    request sent its system text as several (``wire["request"]["system_messages"]``: each one's length)."""
    lengths = ((exchange.wire or {}).get("request") or {}).get("system_messages")
    if not isinstance(lengths, list) or len(lengths) < 2:
        return parts
    starts = [sum(lengths[:k]) + 2 * k for k in range(len(lengths))]  # messages are joined with a blank line
    at = 0
    for part in parts:
        part.group = max(k for k, start in enumerate(starts) if start <= at)
        at += len(part.value) + 2
    return parts
