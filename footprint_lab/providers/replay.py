"""``replay_provider(recording)``: answer from a recording, so a shared notebook runs without a key.

Rule kept here: a replayed run is the recorded run or nothing. Each request is looked up among
the recorded requests (system text, messages, tool schemas, exactly as the recording holds
them) and answered with the response recorded for it. A request the recording never saw is
refused with :class:`ReplayMismatchError`, naming the first difference against the nearest
recorded call (which call, which slot, which piece, a short diff that quotes the recording
and describes the request by shape), never answered with some other call's reply.

A composed recording replays member by member: every member run's calls are in the table,
so one replay provider handed to each member agent answers each with its own recorded
replies, whatever order parallel members ask in. The same request recorded more than once
(samples of one prompt) is answered with its recorded replies in turn, starting over when
they run out, so re-executing a notebook replays it again. The model name is the provider's
business, not the request's: it is not compared.

A recording made under a redaction policy holds masked requests; the live request is masked
with the same policy before it is looked up (``redact=`` when the policy has patterns of its
own, otherwise rebuilt from the keys and library pattern names the recording's report lists).
A value masked under one of its keys may have been learned only later in the recorded run (the
recording is swept), so where no request matches exactly such a mask stands for any text.

Pattern: recorded-cassette fake at the provider seam. Role: providers layer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from itertools import takewhile
from typing import TYPE_CHECKING, Any

from footprint_lab.base.refusal import Refusal, RunFailure, describe_shape
from footprint_lab.providers.errors import ProviderError
from footprint_lab.providers.mock_provider import chunks
from footprint_lab.providers.types import LLMRequest, LLMResponse, TokenCallback, ToolCall, Usage
from footprint_lab.record.by_field import MESSAGE, by_field, texts
from footprint_lab.record.recording import LLMExchange, Recording
from footprint_lab.record.records import jsonable
from footprint_lab.redact.policy import Redaction, policy_from_reports

if TYPE_CHECKING:
    from footprint_lab.explain.arguments import RunLike

_SLOTS = ("system", "messages", "tools")
_EXCERPT = 24


class ReplaySourceError(Refusal, ValueError):
    """Raised by ``replay_provider(source)`` when ``source`` is not a recording (or a run) holding LLM calls.

    Carries ``received`` (the shape of what arrived).
    """

    code = "ERR_REPLAY_SOURCE"
    fields = ("received",)

    def __init__(self, received: str, fix: str) -> None:
        super().__init__(f"replay_provider: {fix} (received {received}).")
        self.received = received


class ReplayMismatchError(ProviderError, RunFailure):
    """Raised during a replayed call whose request the recording does not hold (a failure while
    running: the steps before the call ran and are kept, like any provider failure's).

    Carries ``call`` (the step id of the nearest recorded call, member path included),
    ``slot`` (``system``, ``messages`` or ``tools``), ``piece`` (the source id of the context
    piece where the two first differ, when one carries that part) and ``diff`` (where they
    differ: the recorded text around it, the request's by size only). Nothing was answered.
    """

    code = "ERR_PROVIDER_REPLAY_MISMATCH"
    fields = ("call", "slot", "piece", "diff")

    def __init__(self, call: str, slot: str, piece: str | None, diff: str) -> None:
        where = f"the {slot} slot" + (f", piece '{piece}'" if piece else "")
        super().__init__(
            f"replay: this request differs from every recorded one; nearest is {call}, first difference in "
            f"{where}: {diff}. A replay only answers the requests the recording holds: run the notebook's "
            "code as it was recorded (the same system prompt, declarations, tools and input), or use a live "
            "provider to see what the change does.",
            provider="replay",
        )
        self.call = call
        self.slot = slot
        self.piece = piece
        self.diff = diff


class _Recorded:
    """One recorded call, with its request in the form requests are compared in."""

    __slots__ = ("exchange", "position", "recording", "request")

    def __init__(self, recording: Recording, exchange: LLMExchange, position: int) -> None:
        self.recording = recording
        self.exchange = exchange
        self.position = position
        self.request = {"system": exchange.system, "messages": recording.request_messages(exchange),
                        "tools": exchange.tools}


class ReplayProvider:
    """Answers requests with the responses a recording holds. Build it with :func:`replay_provider`."""

    name = "replay"

    def __init__(self, recording: Recording, policy: Redaction | None, stream: bool) -> None:
        self.model = recording.exchanges[0].model if recording.exchanges else _first_model(recording)
        self._policy = policy
        #: the masks of the policy's keys: in a recorded request, each stands for whatever value it masked
        self._wild = re.compile("|".join(re.escape(f"[redacted:{key}]") for key in policy.keys)) if (
            policy is not None and policy.keys) else None
        self._stream = stream
        self._recorded = [_Recorded(r, x, k) for r in _members(recording) for k, x in enumerate(r.exchanges)]
        self._table: dict[str, list[_Recorded]] = {}
        for recorded in self._recorded:
            self._table.setdefault(_key(recorded.request), []).append(recorded)
        self._served: dict[str, int] = {}
        self.calls = 0

    async def complete(self, request: LLMRequest, on_token: TokenCallback | None = None) -> LLMResponse:
        self.calls += 1
        sent = self._as_recorded(request)
        key = _key(sent)
        found = self._table.get(key)
        if not found and self._wild is not None:  # a value masked under a key stands for any text
            key = next((_key(r.request) for r in self._recorded if _fits(r.request, sent, self._wild)), key)
            found = self._table.get(key)
        if not found:
            raise self._mismatch(sent, request.call_index)
        turn = self._served.get(key, 0)
        self._served[key] = turn + 1
        response = found[turn % len(found)].exchange.response
        if self._stream and on_token is not None and response.content:
            for chunk in chunks(response.content):
                on_token(chunk)
        return LLMResponse(
            content=response.content,
            tool_calls=[ToolCall(c.id, c.name, dict(c.args)) for c in response.tool_calls],
            usage=Usage(**response.usage.model_dump()), stop_reason=response.stop_reason, model=response.model,
        )

    def _as_recorded(self, request: LLMRequest) -> dict[str, Any]:
        """The request as a recording would hold it: JSON-native, masked by the recording's policy."""
        sent = {"system": request.system, "messages": jsonable(list(request.messages)),
                "tools": jsonable(request.tools)}
        if self._policy is None:
            return sent
        scrubber = self._policy.for_run()
        scrub = scrubber.scrub
        # masked as a recording masks them: each message field by field, the tools' texts alone (a declaration);
        # then swept, so a value learned under a covered key late in the request is masked before it too
        scrubbed: dict[str, Any] = scrubber.sweep({
            "system": scrub(sent["system"]), "messages": [by_field(m, scrub, MESSAGE) for m in sent["messages"]],
            "tools": texts(sent["tools"], scrub)})
        return scrubbed

    def _mismatch(self, sent: dict[str, Any], call_index: int) -> ReplayMismatchError:
        if not self._recorded:
            return ReplayMismatchError("(none)", "system", None, "the recording holds no LLM call to replay")
        nearest = max(self._recorded, key=lambda r: (*_likeness(sent, r.request), r.position == call_index))
        slot = next(s for s in _SLOTS if sent[s] != nearest.request[s])
        recorded = nearest.request[slot]
        piece_at, diff = _first_difference(slot, recorded, sent[slot])
        pieces = nearest.recording.exchange_pieces(nearest.exchange)[slot]
        piece = None
        if slot == "system":
            piece = _system_piece(nearest.recording, pieces, piece_at)
        elif 0 <= piece_at < len(pieces):
            piece = nearest.recording.context_pieces[pieces[piece_at]].source_id
        return ReplayMismatchError(nearest.exchange.step_id, slot, piece, diff)


def replay_provider(source: RunLike, *, redact: Redaction | None = None, stream: bool = False) -> ReplayProvider:
    """A provider that answers with the responses ``source`` recorded (a ``Recording``, or a run holding one).

    Hand it to the agent (to every member agent of a composition) in place of the live
    provider; ``redact`` is the policy the run was recorded under, when it has patterns of its
    own; ``stream=True`` sends each recorded reply to token listeners word by word.
    """
    recording = getattr(source, "recording", source) if not isinstance(source, Recording) else source
    if not isinstance(recording, Recording):
        raise ReplaySourceError(describe_shape(source), "give it a Recording, or a Run (run.recording is used)")
    if not any(member.exchanges for member in _members(recording)):
        raise ReplaySourceError("a recording with no LLM call", "give it the recording of a run that called a model")
    if redact is not None and not isinstance(redact, Redaction):
        raise ReplaySourceError(describe_shape(redact), "'redact' must be the Redaction the run was recorded under")
    return ReplayProvider(recording, _policy(recording, redact), stream)


def _members(recording: Recording) -> list[Recording]:
    """The recording and every member run's, depth first, in recorded order."""
    found = [recording]
    for child in recording.children:
        found.extend(_members(child))
    return found


def _first_model(recording: Recording) -> str:
    return next((m.exchanges[0].model for m in _members(recording) if m.exchanges), "replay")


def _policy(recording: Recording, redact: Redaction | None) -> Redaction | None:
    """The policy to mask live requests with: ``redact``, else the report's keys and library patterns."""
    if redact is not None:
        return redact
    return policy_from_reports(m.redaction for m in _members(recording) if m.redaction)


def _key(request: dict[str, Any]) -> str:
    return json.dumps([request[s] for s in _SLOTS], sort_keys=True, ensure_ascii=False)


def _fits(recorded: Any, sent: Any, wild: re.Pattern[str]) -> bool:
    """Whether ``sent`` is ``recorded`` with each of its ``wild`` masks standing for some text.

    A value the run learned to mask only late (a password the message named before a tool call put
    it under a covered key) is masked in the recording's every request, but a live request can
    only be masked with what the policy knows by then. A pattern's mask is not wild: the policy
    masks every match of it as soon as it sees one.
    """
    if isinstance(recorded, str) and isinstance(sent, str):
        return _glob(recorded, sent, wild)
    if isinstance(recorded, list) and isinstance(sent, list):
        return len(recorded) == len(sent) and all(_fits(a, b, wild) for a, b in zip(recorded, sent, strict=True))
    if isinstance(recorded, dict) and isinstance(sent, dict):
        return len(recorded) == len(sent) and all(
            _fits(key, other, wild) and _fits(value, given, wild)
            for (key, value), (other, given) in zip(recorded.items(), sent.items(), strict=True))
    return bool(recorded == sent)


def _glob(recorded: str, sent: str, wild: re.Pattern[str]) -> bool:
    """``sent`` read against ``recorded`` whose ``wild`` masks each match one or more characters (linear: each
    literal part is found leftmost, in order, never backtracking)."""
    parts = wild.split(recorded)
    if len(parts) == 1:
        return recorded == sent
    first, *middle, last = parts
    end = len(sent) - len(last)
    if not sent.startswith(first) or not sent.endswith(last) or end - len(first) < len(parts) - 1:
        return False
    at = len(first)
    for part in middle:
        found = sent.find(part, at + 1, end)
        if found == -1:
            return False
        at = found + len(part)
    return end - at >= 1


def _likeness(sent: dict[str, Any], recorded: dict[str, Any]) -> tuple[int, int]:
    """How far two requests agree: slots equal in order, then how much of the next slot agrees."""
    for equal, slot in enumerate(_SLOTS):
        if sent[slot] != recorded[slot]:
            return equal, _agreement(sent[slot], recorded[slot])
    return len(_SLOTS), 0


def _agreement(sent: Any, recorded: Any) -> int:
    if isinstance(sent, str) and isinstance(recorded, str):
        return _common_prefix(sent, recorded)
    pairs = zip(sent, recorded, strict=False) if isinstance(sent, list) and isinstance(recorded, list) else ()
    return sum(1 for _ in takewhile(lambda pair: pair[0] == pair[1], pairs))


def _common_prefix(a: str, b: str) -> int:
    size = min(len(a), len(b))
    at = 0
    while at < size and a[at] == b[at]:
        at += 1
    return at


def _first_difference(slot: str, recorded: Any, sent: Any) -> tuple[int, str]:
    """Where a slot first differs (a character offset for the system text, else an item index) and a short diff."""
    if slot == "system":
        return _common_prefix(recorded, sent), _text_diff(recorded, sent)
    at = _agreement(sent, recorded)
    noun = "message" if slot == "messages" else "tool"
    if at >= len(recorded):
        return at, f"the request has {len(sent) - len(recorded)} more {noun}(s) than the {len(recorded)} recorded"
    if at >= len(sent):
        return at, f"the request stops after {len(sent)} {noun}(s); the recording has {len(recorded)}"
    mine, theirs = recorded[at], sent[at]
    if isinstance(mine, dict) and isinstance(theirs, dict):
        field = next((k for k in sorted({*mine, *theirs}) if mine.get(k) != theirs.get(k)), "")
        a, b = mine.get(field), theirs.get(field)
        inner = _text_diff(a, b) if isinstance(a, str) and isinstance(b, str) else (
            f"recorded {describe_shape(a)}, sent {describe_shape(b)}")
        return at, f"{noun} {at}, field '{field}': {inner}"
    return at, f"{noun} {at}: recorded {describe_shape(mine)}, sent {describe_shape(theirs)}"


def _text_diff(recorded: str, sent: str) -> str:
    """Where two texts part: the recorded text around it (quoted), the sent one by size only."""
    head = _common_prefix(recorded, sent)
    tail = _common_prefix(recorded[head:][::-1], sent[head:][::-1])
    changed = recorded[head:len(recorded) - tail]
    excerpt = recorded[max(0, head - 12):head + max(min(len(changed), _EXCERPT), 12)]
    more = "…" if len(changed) > _EXCERPT else ""
    return (f"at character {head}, around which the recording reads {json.dumps(excerpt, ensure_ascii=False)}{more}, "
            f"{len(changed)} recorded character(s) became {len(sent) - head - tail} other(s) (recorded "
            f"{len(recorded)} characters, sent {len(sent)}; the first {head} and the last {tail} agree)")


def _system_piece(recording: Recording, pieces: Sequence[int], offset: int) -> str | None:
    """The system piece holding character ``offset`` of the system text (pieces joined by a blank line)."""
    end = 0
    for index in pieces:
        piece = recording.context_pieces[index]
        end += len(piece.content)
        if offset <= end:
            return piece.source_id
        end += 2
    return recording.context_pieces[pieces[-1]].source_id if pieces else None
