"""Replay one recorded LLM call: its exact request sent again, with pieces removed or their text replaced.

Rule kept here: a recorded call is a list of pieces with provenance (the system slot's pieces, the
messages, the tool definitions, each tied to the piece it came from), so removing pieces and sending
the rest again is ablation at the level of one call, with no agent to rebuild. It works on any run
that recorded its calls: a native one, one loaded from JSON, one imported from spans.

- **Which call**: the answering call by default (the last call whose reply is the run's answer, else
  the last call); ``call=`` names another by its step id (``run.steps`` lists them).
- **Which pieces**: ``without=`` and ``edit=`` name pieces by the id a rerun removes them by
  (:func:`~footprint_lab.explain.provenance.sources.removal_id`: a declaration's id, ``system-prompt``, a
  tool's name, which takes its definition and every result of it), or by a piece's own source id
  (one tool result by its tool call's id). Removing a tool result removes the call that asked for
  it from the assistant turn, so the request stays one a model accepts. The user's message and the
  model's own turns are the input and the history of this call, and are not removed.
- **The request**: the system text is the kept system pieces joined with a blank line (as the
  runner joined them); messages and tools keep their order; the model is the recorded one, unless
  the provider sets its own.
- **Evidence**: every replay is a recorded run (runner kind ``llm_call``): its assemble step lands
  each kept piece (``replayed_from`` names the run and call it came from, ``edited`` marks a
  replaced text) and records each removed one as ``skipped`` ("removed by replay"), its call step
  reads them, and ``meta["replay"]`` says what was replayed and what changed.

What a replay proves, and what it cannot: removing a piece from the answering call tests its effect
on that call only. A piece that acted through an earlier call (the tool call it caused, whose result
this call reads) is still present in that effect; a rerun of the agent (``rerun=``) tests it whole.

The recorded call itself, part by part, and the request its parts make are
:mod:`~footprint_lab.explain.trials._recorded_call`'s; this module sends it and records the reply.

Role: explain layer; it drives whatever provider it is handed (``complete(request)``), never a runner.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from footprint_lab.base.refusal import Refusal, describe_shape
from footprint_lab.explain.arguments import ExplainConfigError
from footprint_lab.explain.trials._recorded_call import Carry, RecordedCall, _Part, recorded_call
from footprint_lab.providers.types import provider_name
from footprint_lab.record.build import build_recording
from footprint_lab.record.captured import CapturedPiece, captured_piece
from footprint_lab.record.recorder import Recorder
from footprint_lab.record.schema import ANSWER, INPUT_MESSAGE, LAST_RESPONSE, MESSAGES, SYSTEM, TOOLS

if TYPE_CHECKING:
    from footprint_lab.explain.arguments import RunLike
    from footprint_lab.explain.trials.rerun import Comparator
    from footprint_lab.providers.types import Provider
    from footprint_lab.record.recording import Recording
    from footprint_lab.redact.policy import Redaction

#: The reason a removed piece is recorded with in the replay's own recording.
REMOVED = "removed by replay"


class ReplayPieceError(Refusal, ValueError):
    """Raised by ``replay`` / ``localize(replay=...)`` when ``without=`` or ``edit=`` names no piece of the call, or one
    a replay cannot remove (the user's message, the model's own turns).

    Carries ``setting`` (``without`` or ``edit``), ``count`` (how many ids were refused) and ``known`` (the ids this
    call's pieces can be named by).
    """

    code = "ERR_REPLAY_PIECE"
    fields = ("setting", "count", "known")

    def __init__(self, function: str, setting: str, count: int, known: Sequence[str], why: str) -> None:
        listed = ", ".join(known[:12]) + (f" and {len(known) - 12} more" if len(known) > 12 else "")
        super().__init__(f"{function}: {count} id(s) in {setting}= {why}. The pieces of this call are named "
                         f"{listed or '(none)'}: pass some of those (run.suspects() ranks them).")
        self.setting = setting
        self.count = count
        self.known = list(known)


#: the reason a carried part's piece is recorded with in a replay, by its fate
_CARRIED_REASONS = {"inserted": "put back by replay", "restored": "restored by replay"}


def check_changes(function: str, call: RecordedCall, without: Any, edit: Any) -> tuple[list[str], dict[str, str]]:
    """``without`` and ``edit`` as an id list and an id-to-text map, every id one of the call's pieces; else refused."""
    if isinstance(without, str):
        without = [without]
    if not isinstance(without, Sequence) or not all(isinstance(name, str) for name in without):
        raise ExplainConfigError(function, "without", describe_shape(without),
                                 "must be a list of piece ids to remove (run.suspects() names them)")
    edit = {} if edit is None else edit
    if not isinstance(edit, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in edit.items()):
        raise ExplainConfigError(function, "edit", describe_shape(edit),
                                 "must map piece ids to their new text, e.g. edit={'refund-policy': 'Refunds within "
                                 "14 days.'}")
    named = call.names()
    known = list(named)
    for setting, ids in (("without", list(without)), ("edit", list(edit))):
        unknown = [name for name in ids if name not in named]
        if unknown:
            raise ReplayPieceError(function, setting, len(unknown), known,
                                   "name no piece this call was sent that a replay can change (the user's message "
                                   "and the model's own turns stay)")
    both = set(without) & set(edit)
    if both:
        raise ExplainConfigError(function, "edit", f"{len(both)} id(s) also in without=",
                                 "must name pieces kept in the replay: a piece is removed or edited, not both")
    return list(dict.fromkeys(without)), dict(edit)


@dataclass(slots=True)
class ReplayResult:
    """One replay's answer and its recording (``answer`` is the reply's text, or its tool calls spelled out)."""

    answer: str
    recording: Recording
    redact: Any = None

    @property
    def run_id(self) -> str:
        return self.recording.run_id


def replay_policy(function: str, recording: Recording, redact: Any = None) -> Redaction | None:
    """The policy a replay of ``recording`` records under: ``redact``, else the one its redaction report rebuilds;
    refused when the run was recorded under a policy with patterns of its own and none is given."""
    from footprint_lab.redact.policy import BUILTIN_PATTERNS, Redaction, policy_from_reports

    if redact is not None:
        if not isinstance(redact, Redaction):
            raise ExplainConfigError(function, "redact", describe_shape(redact),
                                     "must be the Redaction policy the run was recorded under")
        return redact
    report = recording.redaction
    if report is None:
        return None
    own = [name for name in report.get("patterns") or () if name not in BUILTIN_PATTERNS]
    if own:
        fix = ("must be given for a run recorded under a policy with patterns of its own (its report names them, "
               "not what they match): replay(run, provider, redact=policy), so the replies are masked alike")
        if function == "localize":
            fix = ("must be given for a run recorded under a policy with patterns of its own (its report names them, "
                   "not what they match): localize(run, replay=provider, redact=policy), or rerun the agent built "
                   "with that policy, localize(run, rerun=agent)")
        raise ExplainConfigError(function, "redact", "nothing", fix)
    return policy_from_reports([report])


#: the recorded generation settings a replay sends again: those every provider's wire shares (a seed is the
#: replay's own; a penalty one provider knows another would refuse)
REPLAYED_SETTINGS = ("temperature", "top_p", "max_tokens", "stop")


async def send(call: RecordedCall, provider: Any, without: Sequence[str] = (), edit: Mapping[str, str] | None = None,
               *, seed: int | None = None, policy: Redaction | None = None, carry: Carry | None = None,
               carried: Sequence[str] = ()) -> ReplayResult:
    """Send the call once with ``without`` removed, ``edit`` applied and ``carry`` carried in (``carried`` names
    those changes for the record); the reply as a recorded run (under ``policy``: what it covers is masked in the
    recording, as in the recorded run)."""
    request, fates = call.request(without, edit, seed=seed, carry=carry)
    # the generation settings the call was sent with (an imported span records them), where the provider given
    # does not set its own: a replay at another temperature is another experiment
    recorded = ((call.exchange.wire or {}).get("request") or {}).get("options")
    own = getattr(provider, "options", None)
    if isinstance(recorded, dict):
        request.options = {key: value for key, value in recorded.items()
                           if key in REPLAYED_SETTINGS and not (isinstance(own, dict) and key in own)}
    original = call.recording
    scrubber = policy.for_run() if policy is not None else None
    rec = Recorder(f"replay-{uuid.uuid4().hex[:12]}", policy=scrubber)
    started = time.time_ns()
    rec.started_ns, rec.started_at = started, started / 1e9
    message = original.input.get("message") if isinstance(original.input, dict) else None
    rec.begin("seed")
    rec.write(INPUT_MESSAGE, "set", message)
    rec.end()
    step_id = rec.begin("assemble", 1)
    system_ids: list[int] = []
    tool_ids: list[int] = []
    positions = {"system": 0, "messages": 0, "tools": 0}
    for part, fate, sent in fates:
        if part.slot == "messages" and sent is not None:
            _land_message(rec, sent, part, step_id, fate, call)
        elif part.piece is None:
            continue
        elif sent is None:
            rec.pieces.append(_piece(part, "removed", step_id, -1, call))
        else:
            (system_ids if part.slot == "system" else tool_ids).append(len(rec.pieces))
            rec.pieces.append(_piece(part, fate, step_id, positions[part.slot], call, sent))
            positions[part.slot] += 1
    # the system text as the pieces hold it; sent as several system messages when the recorded request was
    apart = [m["content"] for m in request.messages[: len(request.messages)] if m.get("role") == "system"]
    system_text = "\n\n".join([request.system, *apart])
    rec.write(SYSTEM, "set", system_text)
    rec.write(TOOLS, "set", tuple(t.get("name") for t in request.tools))
    rec.end()
    call_step = rec.begin("call-llm", 1)
    rec.read(SYSTEM)
    rec.read(MESSAGES)
    rec.read(TOOLS)
    rec.emit("llm_start", call_step, {"model": request.model, "iteration": 1, "messages": len(request.messages),
                                      "tools": len(request.tools)})
    began = time.perf_counter_ns()
    # as an agent keeps what it is answered
    response = (await provider.complete(request)).made_sound(provider_name(provider))
    usage = response.usage
    calls = [{"id": c.id, "name": c.name, "args": c.args} for c in response.tool_calls]
    rec.emit("llm_end", call_step, {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                                    "cache_read_tokens": usage.cache_read_tokens,
                                    "cache_write_tokens": usage.cache_write_tokens, "estimated": usage.estimated,
                                    "tool_calls": len(calls), "stop_reason": response.stop_reason})
    rec.exchanges.append({
        "step_id": call_step, "iteration": 1, "model": request.model, "system": system_text,
        "message_count": len(rec.messages), "tools": list(request.tools), "system_pieces": system_ids,
        "wire": {"source": "replay", "request": {"system_messages": [len(request.system), *map(len, apart)]}
                 if apart else {}},
        "tool_pieces": tool_ids, "duration_ms": (time.perf_counter_ns() - began) / 1e6,
        "content": response.content, "tool_calls": calls, "stop_reason": response.stop_reason,
        "response_model": response.model, "usage": (usage.input_tokens, usage.output_tokens,
                                                    usage.cache_read_tokens, usage.cache_write_tokens,
                                                    usage.estimated),
    })
    answer = response.content if response.content is not None else spelled_calls(calls)
    rec.write(LAST_RESPONSE, "set", response.content)
    rec.end()
    rec.begin("final")
    rec.read(LAST_RESPONSE)
    rec.write(ANSWER, "set", answer)
    rec.end()
    rec.meta["replay"] = {"of_run": original.run_id, "call": call.step_id, "without": list(without),
                          "edited": sorted(edit or {}), "model": request.model,
                          **({"carried": list(carried)} if carried else {})}
    recording = build_recording(rec, runner={"kind": "llm_call", "id": None, "name": "replay"}, status="finished",
                                input={"message": message}, answer=answer, ended_ns=time.time_ns(),
                                redaction=scrubber.report() if scrubber is not None else None)
    return ReplayResult(recording.answer or "", recording)


def spelled_calls(calls: Sequence[Mapping[str, Any]]) -> str:
    """A reply that only asked for tools, as an answer a comparator can read: ``[calls lookup_order]``."""
    return "[calls " + ", ".join(str(c.get("name")) for c in calls) + "]"


def _land_message(rec: Recorder, message: dict[str, Any], part: _Part, step: str, fate: str,
                  call: RecordedCall) -> None:
    rec.write(MESSAGES, "append", message)
    rec.messages.append(message)
    rec.message_pieces.append(len(rec.pieces))
    if part.piece is None:  # a message no piece records: a placeholder keeps the transcript and its pieces parallel
        rec.pieces.append(captured_piece("messages", str(message.get("role")), "unrecorded", str(message.get(
            "content") or ""), step=step, iteration=1, position=len(rec.messages) - 1, reason="replayed",
            trigger="replay"))
        return
    rec.pieces.append(_piece(part, fate, step, len(rec.messages) - 1, call, message.get("content")))


def _piece(part: _Part, fate: str, step: str, position: int, call: RecordedCall, sent: Any = None) -> CapturedPiece:
    piece = part.piece
    assert piece is not None
    content = sent if isinstance(sent, str) else piece.content
    if part.slot == "tools" and isinstance(sent, Mapping):
        content = str(sent.get("description") or piece.content)
    detail = {key: value for key, value in piece.detail.items() if key in _CARRIED}
    return captured_piece(part.slot, piece.source_kind, piece.source_id, content, step=step, iteration=1,
                          position=position, verdict="skipped" if fate == "removed" else "admitted",
                          reason=REMOVED if fate == "removed" else _CARRIED_REASONS.get(fate, (
                              "edited by replay" if fate == "edited" else "replayed")),
                          trigger="replay", replayed_from=part.origin or f"{call.recording.run_id}/{call.step_id}",
                          edited=fate in ("edited", "restored"), **detail)


#: Evidence a replayed piece keeps from the recorded one (which tool a result is of, a chunk's document ...).
_CARRIED = ("tool", "is_error", "document", "chunk", "score", "rank", "item", "role")


@dataclass(slots=True)
class Replay:
    """What ``replay`` found: the recorded answer, each replay's answer and recording, and the unchanged replays'."""

    call: str
    original: str
    without: list[str]
    edited: list[str]
    replays: list[ReplayResult] = field(default_factory=list)
    unchanged: list[ReplayResult] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    comparator: Callable[[str, str], Any] | None = None

    @property
    def answers(self) -> list[str]:
        return [r.answer for r in self.replays]

    @property
    def changed(self) -> int:
        """How many replays changed the answer (by the comparator)."""
        return sum(1 for r in self.replays if self.flipped(r.answer))

    @property
    def noise(self) -> int:
        """How many unchanged replays changed the answer all the same."""
        return sum(1 for r in self.unchanged if self.flipped(r.answer))

    def flipped(self, answer: str) -> bool:
        """Whether ``answer`` differs from the recorded one, by the comparator."""
        return bool(self.comparator(self.original, answer)) if self.comparator is not None else answer != self.original

    def summary(self) -> str:
        what = ", ".join([*(f"without '{n}'" for n in self.without), *(f"'{n}' edited" for n in self.edited)])
        noise = f"; unchanged replays changed it {self.noise}/{len(self.unchanged)}" if self.unchanged else ""
        lost = f"; {len(self.failed)} failed ({', '.join(sorted(set(self.failed)))})" if self.failed else ""
        return (f"Replay of {self.call} {what or 'as recorded'}: the answer changed in "
                f"{self.changed}/{len(self.replays)} replays{noise}{lost}.")

    def __str__(self) -> str:
        from footprint_lab.explain.render import shorten

        lines = [self.summary(), f"  recorded: \"{shorten(self.original)}\""]
        lines += [f"  replay {k + 1}: \"{shorten(r.answer)}\"" for k, r in enumerate(self.replays)]
        lines += [f"  unchanged {k + 1}: \"{shorten(r.answer)}\"" for k, r in enumerate(self.unchanged)]
        lines.append("A replay tests this call only: a piece that acted through an earlier call (the tool call it "
                     "caused) needs a rerun of the agent, localize(run, rerun=agent), or rerun=factory for an agent "
                     "built elsewhere.")
        return "\n".join(lines)

    def to_frame(self) -> Any:
        from footprint_lab.explain.frame import ShownFrame  # imports pandas

        rows = [{"replay": k + 1, "arm": arm, "answer": r.answer, "changed": self.flipped(r.answer),
                 "run_id": r.run_id} for arm, group in (("changed", self.replays), ("unchanged", self.unchanged))
                for k, r in enumerate(group)]
        return ShownFrame(rows, columns=["replay", "arm", "answer", "changed", "run_id"])

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        from footprint_lab.explain.render import display_bundle

        return display_bundle("replay", self, self.summary(), str(self), include, exclude)


def check_provider(function: str, provider: Any, setting: str = "provider") -> Any:
    """``provider`` when it can be sent a request (an async ``complete``); else refused by name."""
    if not callable(getattr(provider, "complete", None)):
        raise ExplainConfigError(function, setting, describe_shape(provider),
                                 "must be a provider to send the recorded request to, e.g. "
                                 "footprint_lab.providers.openai(base_url=..., model=...) or mock(...)")
    return provider


class CallReplayer:
    """What ``localize(run, replay=provider)`` reruns: the answering call, replayed without each piece.

    It has the shape a rerun is handed (``without(ids, seed=...)`` gives a runner of one replay), so the
    trial's screening, statistics, budget and report are those of any other rerun. With ``carries``
    (``explain_difference``), the ids are names of differences, each carried in by its :class:`Carry`.
    """

    def __init__(self, call: RecordedCall, provider: Any, policy: Redaction | None = None,
                 carries: Mapping[str, Carry] | None = None) -> None:
        self.call = call
        self.provider = provider
        self.policy = policy
        self.carries = carries

    def without(self, ids: Sequence[str], seed: int | None = None) -> _OneReplay:
        return _OneReplay(self, list(ids), seed)

    def rerun_start(self, recording: Any) -> tuple[dict[str, Any], None]:
        """A replay answers within the recorded request itself: no conversation to continue."""
        message = recording.input.get("message") if isinstance(recording.input, dict) else None
        return {"message": message or ""}, None


class _OneReplay:
    __slots__ = ("_replayer", "_seed", "_without")

    @property
    def redact(self) -> Any:
        """The policy each replay is recorded under (``False`` for a run recorded under none)."""
        return self._replayer.policy or False

    def __init__(self, replayer: CallReplayer, without: list[str], seed: int | None) -> None:
        self._replayer = replayer
        self._without = without
        self._seed = seed

    def source_ids(self) -> list[str]:
        if self._replayer.carries is not None:  # the ids are differences carried in, never pieces still declared
            return []
        return [name for name in self._replayer.call.removable() if name not in self._without]

    async def run(self, *_: Any, **__: Any) -> ReplayResult:
        replayer = self._replayer
        if replayer.carries is not None:
            carry = Carry.merged([replayer.carries[name] for name in self._without])
            return await send(replayer.call, replayer.provider, seed=self._seed, policy=replayer.policy,
                              carry=carry, carried=self._without)
        return await send(replayer.call, replayer.provider, self._without, seed=self._seed, policy=replayer.policy)


async def replay(run: RunLike, provider: Provider, *, call: str | None = None, without: Sequence[str] | str = (),
                 edit: Mapping[str, str] | None = None, samples: int = 1, baseline: int | None = None,
                 comparator: Comparator | None = None, concurrency: int = 4, time_limit: float | None = None,
                 redact: Redaction | None = None, progress: bool | Callable[[int, int], None] | None = None) -> Replay:
    """Send one recorded LLM call again through ``provider``, ``samples`` times, with pieces removed or edited.

    ``call`` is the step id of the call (``None``: the answering call). ``without`` names pieces to
    remove and ``edit`` maps piece ids to new text (ids as ``run.suspects()`` names them, or a
    tool result by its call id). With a change, as many unchanged replays run beside (``baseline``,
    by default ``samples``), so the changed answers can be told from the model's noise. Every replay
    is a recorded run (``Replay.replays[k].recording``). ``comparator`` says whether an answer
    differs from the recorded one (by default any difference of the text, as ``localize``'s
    ``TextDifference`` judges it); ``time_limit`` caps each replay (seconds, default 300). A run
    recorded under a redaction policy is replayed as recorded (masked) and each reply recorded
    under the policy too: ``redact`` when given, else the one the run's report rebuilds (a policy
    with patterns of its own must be given).
    """
    import asyncio

    from footprint_lab.explain.arguments import whole_number
    from footprint_lab.explain.trials._rerun_pool import run_all
    from footprint_lab.explain.trials.rerun import RERUN_TIME_LIMIT, Progress, check_comparator, check_time_limit

    function = "replay"
    recorded = recorded_call(function, run, call)
    check_provider(function, provider)
    removed, edited = check_changes(function, recorded, without, edit)
    whole_number(function, "samples", samples, 1, 1000)
    whole_number(function, "concurrency", concurrency, 1, 10_000)
    unchanged = (samples if removed or edited else 0) if baseline is None else baseline
    whole_number(function, "baseline", unchanged, 0, 1000)
    compare = check_comparator(function, comparator)
    limit = check_time_limit(function, RERUN_TIME_LIMIT if time_limit is None else time_limit)
    policy = replay_policy(function, recorded.recording, redact)
    report = Replay(recorded.step_id, recorded.exchange.response.content or spelled_calls(
        [c.model_dump() for c in recorded.exchange.response.tool_calls]), removed, list(edited), comparator=compare)
    bar = Progress(samples + unchanged, "replay", progress, unit="replays")

    async def one(changes: bool, seed: int) -> Any:
        try:
            async with asyncio.timeout(limit):
                return await send(recorded, provider, removed if changes else (), edited if changes else None,
                                  seed=seed, policy=policy)
        except TimeoutError:
            return f"replay took over {limit:g} s"
        except Exception as exc:  # one failed replay must not sink the others: it is counted as failed
            return type(exc).__name__

    jobs = [functools.partial(one, True, k) for k in range(samples)]
    jobs += [functools.partial(one, False, k) for k in range(unchanged)]
    results: list[Any] = list(await run_all(jobs, concurrency=concurrency, on_done=bar.step))
    bar.close()
    for k, result in enumerate(results):
        if isinstance(result, str):
            report.failed.append(result)
        else:
            (report.replays if k < samples else report.unchanged).append(result)
    return report
