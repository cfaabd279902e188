"""Reruns for explanations: the same input again, with sources removed or forced in.

Rule kept here: an explanation reruns whatever runner it is handed, by duck typing, and
builds every runner it will need *before* the first rerun starts, so a bad ``rerun=`` is
refused before anything is billed.

- An agent (anything with ``without(ids, seed=...)``) is rebuilt from its own declarations:
  ``agent.without([...])`` to remove sources, ``agent.with_forced([...])`` to force a
  skipped or dropped piece in.
- A chat (anything with ``rerun_start(recording)`` besides ``without``) also says, for the
  recording of one of its turns, the message that turn answered, the checkpoint it
  continued and what a person answered when it asked, so the turn reruns inside its own
  conversation, and a rerun that stops at the same question tool is given the same answer.
- A factory (any other callable) is called as ``factory(exclude=[...])`` or
  ``factory(force=[...])`` and must return a runner; it is also given ``seed=`` when its
  signature accepts one. For an agent built with another framework (an imported run), the
  factory may instead return an awaitable (a coroutine) that gives the answer: a text, or a
  result with ``.output`` (pydantic-ai) or ``.answer``.

A run recorded under a redaction policy is rerun under one too (a runner built without a
policy is refused), and each rerun's answer is taken from its own recording, masked like the
original's: the comparison is like with like, and no report shows what the policy covers.

Each rerun gets its own runner, so reruns can go concurrently (one runner answers one turn
at a time). Outcomes are compared by a comparator: any ``(original, rerun) -> bool`` that says
whether the outcome flipped; the default, :class:`TextDifference`, normalises both texts
and calls it a flip when they differ by more than a threshold.

Role: explain layer; it never imports a runner class.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeAlias, cast

from footprint_lab.base.progress import PROGRESS_FIX, progress_problem
from footprint_lab.base.progress import Progress as Progress  # the one bar, as the reruns' modules know it
from footprint_lab.base.refusal import Refusal, call_problem, describe_shape
from footprint_lab.context.rebuild import recalled_items, recalling_as
from footprint_lab.context.source_ids import UnknownSourceError
from footprint_lab.explain.arguments import ExplainConfigError, fraction
from footprint_lab.explain.provenance.members import Source, removable_sources
from footprint_lab.explain.provenance.sources import NOT_REMOVABLE
from footprint_lab.explain.trials.rerun_masking import Masking, words
from footprint_lab.record.schema import HISTORY
from footprint_lab.redact.policy import PLACEHOLDER

if TYPE_CHECKING:
    from footprint_lab.record.recording import Recording

Comparator = Callable[[str, str], bool]


class Rebuildable(Protocol):
    """A runner a rerun rebuilds without some sources (``Agent``, ``LLMCall``, a composition, a ``Chat``)."""

    def without(self, exclude: Sequence[str], /, *, seed: int | None = ...) -> object:
        """A fresh runner without the ``exclude`` ids, each of its requests seeded with ``seed``."""
        ...


class Restorable(Rebuildable, Protocol):
    """A runner a rerun also rebuilds with left-out sources forced in (``find_dropped_context``)."""

    def with_forced(self, force: Sequence[str], /, *, exclude: Sequence[str] = ...,
                    seed: int | None = ...) -> object:
        """A fresh runner with the ``force`` ids forced in (and without ``exclude``)."""
        ...


#: what ``rerun=`` takes: the runner itself, or a factory called as ``factory(exclude=[...])`` that returns one
Rerun: TypeAlias = "Rebuildable | Callable[..., object]"
#: ``rerun=`` where a rerun may force a source in: the runner itself, or a factory that also takes ``force=[...]``
Restore: TypeAlias = "Restorable | Callable[..., object]"
#: Seconds one rerun may take by default: its factory call, its run and its comparison, each.
RERUN_TIME_LIMIT = 300.0


class TextDifference:
    """The default comparator: a flip when the normalised texts differ by more than ``threshold``.

    Normalising lower-cases the text and keeps only its words, so punctuation and spacing never
    count; the difference is ``1 - similarity`` of the two word sequences (0: same words, 1: none shared).
    """

    def __init__(self, threshold: float = 0.2) -> None:
        self.threshold = fraction("TextDifference", "threshold", threshold)

    @staticmethod
    def difference(original: str, rerun: str) -> float:
        left, right = words(original), words(rerun)
        if left == right:
            return 0.0
        return 1.0 - SequenceMatcher(None, left, right, autojunk=False).ratio()

    def __call__(self, original: str, rerun: str) -> bool:
        return self.difference(original, rerun) > self.threshold

    def __repr__(self) -> str:
        return f"TextDifference(threshold={self.threshold})"


def check_comparator(function: str, comparator: Any) -> Comparator:
    """The comparator to use: the default when ``None``, else any callable of two texts."""
    if comparator is None:
        return TextDifference()
    problem = call_problem(comparator, 2)
    if problem is not None:
        raise ExplainConfigError(function, "comparator", problem,
                                 "must be a function (original, rerun) -> True when the outcome flipped, "
                                 "e.g. TextDifference(threshold=0.3)")
    return cast("Callable[[str, str], bool]", comparator)


@dataclass(slots=True)
class Outcome:
    """One rerun: its seed, its answer (``None`` when it failed), and the run it left.

    ``attempts`` counts the tries a failing rerun was given (see :meth:`Rerunner.run`);
    ``changed`` names the sources the rerun removed or forced in (empty for an unchanged rerun).
    """

    seed: int | None
    answer: str | None
    error: str | None = None
    run: Any = None
    flipped: bool = False
    attempts: int = 1
    changed: tuple[str, ...] = ()


class Rerunner:
    """Builds runners for reruns from an agent or a factory, and runs them on the recorded input."""

    __slots__ = ("_answers", "_continue_from", "_finished", "_function", "_input", "_masking", "_recalled", "_redacted",
                 "_seeded", "identity", "rerun", "retries", "retry_wait", "time_limit")

    def __init__(self, function: str, rerun: Any, recording: Recording, input: Any = None,
                 continue_from: Any = None, *, retries: int = 2, retry_wait: float = 0.5,
                 time_limit: float | None = RERUN_TIME_LIMIT, run: Any = None) -> None:
        self._function = function
        self.rerun = rerun
        #: seconds one rerun may take (its factory call, its run, its comparison, each), else it fails; None: no limit
        self.time_limit = check_time_limit(function, time_limit)
        #: how many more times a rerun that fails for a passing reason is tried, waiting retry_wait, then twice that
        self.retries = retries
        self.retry_wait = retry_wait
        #: the run was recorded under a redaction policy: reruns are judged and shown as recorded, masked alike
        self._redacted = recording.redaction is not None
        if callable(getattr(rerun, "without", None)):
            self._seeded = True
        elif callable(rerun) and (_accepts(rerun, "exclude") or _accepts(rerun, "force")):
            self._seeded = _accepts(rerun, "seed")
        elif rerun is None:
            raise ExplainConfigError(
                function, "rerun", "nothing",
                "is needed: a proof reruns the run without each piece. Pass the agent that made the run "
                f"({function}(run, rerun=agent): it is rebuilt from its declarations minus each piece), or a "
                "factory for an agent built elsewhere: def factory(exclude=(), seed=None): return ..."
                + (", or a provider to re-send the answering call without each piece: localize(run, replay=provider)"
                   if function == "localize" else ""),
            )
        elif callable(rerun):
            keyword = "force" if function == "find_dropped_context" else "exclude"
            raise ExplainConfigError(
                function, "rerun", f"a function that takes no {keyword}= keyword",
                f"must be a factory called as factory({keyword}=[...]) that returns a runner built without "
                f"(or with) those ids, e.g. def factory({keyword}=(), seed=None): "
                f"return agent.{'with_forced(force)' if keyword == 'force' else 'without(exclude)'}; or pass the "
                "agent itself, rerun=agent",
            )
        else:
            raise ExplainConfigError(
                function, "rerun", describe_shape(rerun),
                "must be the agent that made the run (it is rebuilt from its declarations minus the removed "
                "ids) or a factory called as factory(exclude=[...]) that returns a runner",
            )
        turn = getattr(rerun, "rerun_start", None)
        given = turn(recording) if callable(turn) else None
        #: a chat turn's answers to the questions it asked: (question tool, answer), replayed in order
        self._answers: list[tuple[str, Any]] = []
        if given is not None:  # a chat's turn: the message it answered, inside the conversation it continued
            input = given[0] if input is None else input
            continue_from = given[1] if continue_from is None else continue_from
            self._answers = list(given[2]) if len(given) > 2 else []
        #: the recorded message holds a mask a policy wrote: only the original message can be rerun
        masked = recording.redaction is not None and bool(PLACEHOLDER.search(str(recording.input.get("message", ""))))
        if input is None:
            if masked:
                raise ExplainConfigError(
                    function, "input", "nothing, for a run whose recorded message was redacted",
                    "must be given when the recording holds a redacted message: a rerun of the masked text "
                    "would answer a different question. Pass the original, input='...'",
                )
            self._input: Any = dict(recording.input)
        elif isinstance(input, str) or (isinstance(input, dict) and isinstance(input.get("message"), str)):
            message = input if isinstance(input, str) else input["message"]
            if masked and PLACEHOLDER.search(message):
                raise ExplainConfigError(
                    function, "input", "a message that still holds a mask the policy wrote",
                    "must be the original message, as the user typed it: a rerun of the masked text would answer "
                    "a different question",
                )
            self._input = input
        else:
            raise ExplainConfigError(function, "input", describe_shape(input),
                                     "must be the message to rerun (a string or {'message': ...}); leave it out "
                                     "to rerun the recorded input")
        #: how a rerun's answer is masked and judged beside the original's, for a run recorded under a policy
        self._masking = Masking(recording, run, self._input) if self._redacted else None
        self._finished = 0  # reruns that ran to an end, for telling a refusal of every rerun from one rerun's
        self.identity = recording.identity
        self._recalled = recalled_items(recording)  # each rerun recalls the memory the original recalled
        continues = recording.meta.get("continues")
        # a chat names its turn's start itself: a first turn that paused and was answered starts from nothing
        if continues and continue_from is None and given is None:
            raise ExplainConfigError(
                function, "continue_from", "nothing, for a run that continued a conversation",
                f"must be the checkpoint this run continued (from run {continues.get('run_id')}), so that every "
                "rerun answers within the same conversation: keep agent.checkpoint() before the follow-up and "
                "pass it as continue_from=...",
            )
        self._continue_from = continue_from

    def build(self, *, exclude: Sequence[str] = (), force: Sequence[str] = (), seed: int | None = None) -> Any:
        """A fresh runner without ``exclude`` and with ``force`` forced in."""
        rerun = self.rerun
        seeded = {"seed": seed} if self._seeded and seed is not None else {}
        if callable(getattr(rerun, "without", None)):
            try:
                runner = (rerun.with_forced(list(force), exclude=list(exclude), **seeded) if force
                          else rerun.without(list(exclude), **seeded))
            except UnknownSourceError as refused:  # the run's own ids, checked against its recording: another agent
                raise ExplainConfigError(
                    self._function, "rerun", f"an agent that does not declare {refused.unknown} of the pieces this "
                    "run was sent", "must be the agent that made the run, or a factory that builds it (return "
                    "agent.without(exclude)): a rerun removes each piece by the id the run recorded") from None
        else:  # a factory's own refusal (an id it adds itself) is its own to say
            keywords: dict[str, Any] = {"force": list(force)} if force else {"exclude": list(exclude)}
            if force and exclude:
                keywords["exclude"] = list(exclude)
            runner = rerun(**keywords, **seeded)
            if inspect.isawaitable(runner):  # a foreign agent's factory: one awaitable answer per rerun
                runner = _Awaited(runner, self._function)
        if not callable(getattr(runner, "run", None)):
            raise ExplainConfigError(self._function, "rerun", f"a factory that returned {describe_shape(runner)}",
                                     "must return a runner (an Agent, an LLMCall or a composition) to rerun")
        declared = getattr(runner, "source_ids", None)
        kept = [name for name in exclude if name in declared()] if exclude and callable(declared) else []
        if kept:
            raise ExplainConfigError(
                self._function, "rerun",
                f"a factory whose runner still declares {len(kept)} of the ids it was told to exclude",
                "must build each runner without every id in exclude (e.g. return agent.without(exclude)): a rerun "
                "that still sends a piece cannot test whether it matters",
            )
        if self._redacted and getattr(runner, "redact", False) is None:
            raise ExplainConfigError(
                self._function, "rerun", "a runner with no redaction policy, for a run recorded under one",
                "must build runners under the run's redaction policy (e.g. Agent(..., redact=policy)): a rerun's "
                "answer is compared with the recorded, masked answer and shown beside it, so it must be masked alike",
            )
        return runner

    async def run(self, runner: Any, seed: int | None, *, keep_run: bool = False,
                  rebuild: Callable[[], Any] | None = None) -> Outcome:
        """Run one rerun; a failure is an outcome with its exception type, never an exception.

        A failure that may pass (a rate limit, a dropped connection, a server that cut its reply:
        anything marked ``retryable``) is tried again up to ``retries`` times, waiting
        ``retry_wait`` seconds and then twice as long each time, on a runner from ``rebuild``
        (the same one when none is given). Any other failure is final at once.
        """
        extra = {"continue_from": self._continue_from} if self._continue_from is not None else {}
        attempt = 0
        while True:
            attempt += 1
            try:
                async with asyncio.timeout(self.time_limit):  # (wait_for could swallow a cancel on 3.11)
                    result = await self._ran(runner, extra)
                break
            except TimeoutError:  # a rerun that hangs is not tried again: it would hang again
                return Outcome(seed, None, f"rerun took over {self.time_limit:g} s", attempts=attempt)
            except Refusal as refused:  # the runner refused what it was given (the input, continue_from): raised while
                if not self._finished:  # no rerun finished (it would refuse each); later, a rerun that failed
                    raise
                return Outcome(seed, None, f"{type(refused).__name__}", attempts=attempt)
            except Exception as exc:  # one failed rerun must not sink the others; it is reported as failed
                if attempt > self.retries or not transient(exc):
                    return Outcome(seed, None, f"{type(exc).__name__}", attempts=attempt)
            await asyncio.sleep(self.retry_wait * 2 ** (attempt - 1))
            if rebuild is not None:
                try:
                    runner = rebuild()
                except Refusal:
                    raise
                except Exception as exc:  # a factory that fails for one rerun fails that rerun, not the others
                    return Outcome(seed, None, f"factory {type(exc).__name__}", attempts=attempt)
        self._finished += 1
        if getattr(result, "paused", False):  # no answer to compare: never an empty one that reads as changed
            return Outcome(seed, None, "stopped to ask a person instead of answering", attempts=attempt)
        answer = getattr(result, "answer", None)
        masking = self._masking
        if masking is not None:
            # The live answer holds what the policy covers; the rerun's own recording holds it masked,
            # as the original's does, so the two compare like with like and can be shown.
            recorded: Any = getattr(result, "recording", None)
            if getattr(recorded, "redaction", None) is None:
                return Outcome(seed, None, "rerun not recorded under a redaction policy", attempts=attempt)
            masking.learn(recorded)
            live, answer = answer, masking.shown(recorded.answer)
            unsure = masking.unsure(answer, live)
            if unsure is not None:
                return Outcome(seed, None, unsure, attempts=attempt)
            if keep_run:
                result = masking.kept_run(result, recorded)
        kept = keep_run and not isinstance(result, _Answered)  # a foreign agent's rerun leaves an answer, no run
        return Outcome(seed, answer if isinstance(answer, str) else str(answer or ""), None,
                       result if kept else None, attempts=attempt)

    @property
    def function(self) -> str:
        """The explanation this rerunner serves (named in its refusals)."""
        return self._function

    async def _ran(self, runner: Any, extra: dict[str, Any]) -> Any:
        with recalling_as(self._recalled):
            return await self._answered(runner, await runner.run(self._input, identity=self.identity, **extra))

    async def _answered(self, runner: Any, result: Any) -> Any:
        """``result``, resumed with the turn's recorded answers while it stops at the question tool that asked
        them, in order; a rerun that asks something else is left paused (its outcome is that it stopped)."""
        for tool_name, answer in self._answers:
            if not getattr(result, "paused", False):
                break
            asked = (result.recording.meta.get("pause") or {}).get("tool_name")
            if asked != tool_name:
                break
            result = await runner.resume(result.checkpoint, answer)
        return result


def check_time_limit(function: str, limit: Any) -> float | None:
    """``limit`` as seconds (``None``: no limit), or a refusal."""
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int | float) or not 0 < limit <= 86_400:
        raise ExplainConfigError(function, "time_limit", describe_shape(limit),
                                 "must be the seconds one rerun may take, above 0 and at most 86400 (a day), or None "
                                 "for no limit")
    return float(limit)


async def in_time(work: Callable[[], Any], limit: float | None) -> Any:
    """``work()``, called on a thread of its own so that a call that never returns (a factory, a comparator)
    cannot hold the event loop; ``TimeoutError`` after ``limit`` seconds, the thread left to end on its own."""
    if limit is None:
        return work()
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(value)

    def call() -> None:
        value: Any = None
        error: BaseException | None = None
        try:
            value = work()
        except BaseException as exc:  # handed to the awaiting side, raised there
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits for this any more
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=call, name="footprint-lab rerun", daemon=True).start()
    async with asyncio.timeout(limit):
        return await done


def transient(error: BaseException) -> bool:
    """Whether a failure may pass if tried again: marked ``retryable`` (itself or what caused it), or a timeout."""
    seen: BaseException | None = error
    for _ in range(8):  # a bounded walk down the chain of causes
        if seen is None:
            return False
        if getattr(seen, "retryable", False) is True or isinstance(seen, TimeoutError | ConnectionError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class _Awaited:
    """One rerun of a foreign agent: the awaitable a factory returned, answered once."""

    __slots__ = ("_answer", "_function")
    redact = False  # a foreign agent's own redaction is its own business (imported runs carry no policy)

    def __init__(self, answer: Awaitable[Any], function: str) -> None:
        self._answer = answer
        self._function = function

    async def run(self, input: Any = None, **_: Any) -> Any:
        """Await the answer; the rerun's input was bound by the factory that made it."""
        result = await self._answer
        if callable(getattr(result, "run", None)):  # an async factory that built a runner: its answer would be a repr
            raise ExplainConfigError(
                self._function, "rerun", "an async factory that returned a runner",
                "must be a plain function that returns the runner, def factory(exclude=(), seed=None): return "
                "agent.without(exclude); an async factory is for an agent built elsewhere and returns its answer",
            )
        for name in ("answer", "output"):
            if not isinstance(result, str) and hasattr(result, name):
                result = getattr(result, name)
        return _Answered(result if isinstance(result, str) else str(result))

    def __del__(self) -> None:
        # a rerun built but never run (the unchanged run's runner a one-rerun call checks the factory with, an arm
        # a trial stopped before): its coroutine is closed, so Python does not warn that it was never awaited
        if inspect.iscoroutine(self._answer):
            self._answer.close()


class _Answered(NamedTuple):
    answer: str


def check_removable(function: str, recording: Recording, ids: Sequence[str]) -> dict[str, Source]:
    """The removable sources of a recording (members' included); refuse ids that name none of them."""
    known = removable_sources(recording)
    unknown = [name for name in ids if name not in known]
    if unknown:
        raise UnknownSourceError(function, unknown, sorted(known))
    return known


def not_removable_reason(source_kind: str, source_id: str = "") -> str:
    """Why no rerun can remove a piece (its source id tells an earlier turn of a conversation from this one's)."""
    if source_id.startswith(HISTORY):
        return ("an earlier turn of the conversation: a rerun of this turn continues the same conversation, so it "
                "keeps every earlier turn (a new Chat without that turn tests it)")
    return NOT_REMOVABLE.get(source_kind, "a rerun cannot remove it")


def _accepts(function: Callable[..., Any], keyword: str) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any((p.name == keyword and p.kind is not p.POSITIONAL_ONLY) or p.kind is p.VAR_KEYWORD for p in parameters)


def check_progress(function: str, progress: Any) -> Any:
    """``progress`` when a bar can use it (``True``, ``False``, ``None`` or a function ``(done, total)``)."""
    problem = progress_problem(progress)
    if problem is not None:
        raise ExplainConfigError(function, "progress", problem, PROGRESS_FIX)
    return progress
