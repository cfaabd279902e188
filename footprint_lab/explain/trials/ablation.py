"""Proof by ablation: remove a suspect, rerun the same input, and test whether the outcome flips more than noise.

Rule kept here: a suspect is called a cause only when an exact test says its removal flips the
outcome more often than unchanged reruns do, at a false-confirmation rate the caller sets
(``alpha``, 5% by default: the chance that one call confirms any suspect that has no effect).
``localize``

1. takes every piece that reached the answer and that a rerun can remove, in the order of the
   correlational ranking (the ranking orders the work, it never decides what is skipped); ``top``
   keeps only the ranking's first ``top`` and ``sources`` names exactly what to test;
2. screens them cheaply, one at a time or, when there are many, by removing halves together (a
   group test), and on a model that strays, or when nothing flips alone, by a search of removals
   together that weighs every screening rerun (one suspect, a pair that acts only together, or two
   suspects that are each a cause),
   to choose the candidates;
3. confirms the candidates on fresh reruns against a fresh baseline, seeded ``0, 1, 2 ...``
   alike: Boschloo's exact test, ``alpha`` shared by Wiens' fallback procedure, at up to three
   looks of ``samples``, twice and four times as many reruns (see
   :mod:`~footprint_lab.explain.trials.trial` for why the rate holds);
4. stops at ``budget`` reruns in all, and gives each tested piece a verdict: ``confirmed``,
   ``not_confirmed`` (no sign of an effect beyond noise) or ``undecided`` (a sign of one, not yet
   enough to conclude, or no measure at all: every rerun that removed it failed), with its flips,
   the noise it was judged against, the p-value and the reruns it cost.

Nothing is skipped quietly: a piece left untested (no rerun can remove it, ``top`` left it out, the
budget ran out before any rerun removed it) is counted on the report's first line and named, with
why, in its "Not tested" section; it has no verdict, since it was neither shown to matter nor not to.

A deterministic model needs few reruns: a suspect that flips 3 of 3 against a baseline that
held 3 of 3 is confirmed (p = 0.016). A noisy one gets as many as the budget allows where they
can decide something. A rerun that fails for a passing reason is tried again; one that still
fails is counted as failed, never as a flip or as noise, and the summary says how many and why.
``rerun_without`` reruns without named sources: once, to see what changed, or ``samples`` times
beside as many unchanged reruns, to test it the same way.

The report of ``localize`` (``Localization``, a ``LocalizedSuspect`` per tested piece, its "Not
tested" section and notes) is :mod:`footprint_lab.explain.trials._localization`'s, imported from here.

Role: explain layer; it reruns whatever runner it is handed (see :mod:`footprint_lab.explain.trials.rerun`).
Refusal raised here: :class:`NothingToLocalizeError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Unpack

from footprint_lab.base.progress import INTERRUPTS
from footprint_lab.base.refusal import Refusal
from footprint_lab.explain.arguments import ExplainConfigError, id_list, recording_of, whole_number
from footprint_lab.explain.provenance.custody import backtrack
from footprint_lab.explain.provenance.influence import suspects as rank_suspects
from footprint_lab.explain.provenance.members import Source
from footprint_lab.explain.provenance.slice import MOST_DEPTH, MOST_STEPS
from footprint_lab.explain.provenance.sources import describe_source
from footprint_lab.explain.render import display_bundle, shorten
from footprint_lab.explain.trials._budget import BUDGET_PER_SAMPLE, default_budget
from footprint_lab.explain.trials._localization import LOCALIZATION_COLUMNS as LOCALIZATION_COLUMNS
from footprint_lab.explain.trials._localization import Localization as Localization
from footprint_lab.explain.trials._localization import LocalizedSuspect as LocalizedSuspect
from footprint_lab.explain.trials._localization import budget_note, noise_note, replay_note, wording_note
from footprint_lab.explain.trials._localization import untested_count as untested_count
from footprint_lab.explain.trials._localization import untested_lines as untested_lines
from footprint_lab.explain.trials._recorded_call import RecordedCall, recorded_call
from footprint_lab.explain.trials._rerun_pool import Draws
from footprint_lab.explain.trials._stopping import NOT_RUN, Partial, partial_line, run_trial, stopped
from footprint_lab.explain.trials.arms import VERDICT_LABELS, Arm, ArmVerdict
from footprint_lab.explain.trials.replay import CallReplayer, ReplayPieceError, check_provider, replay_policy
from footprint_lab.explain.trials.rerun import (
    Outcome,
    Progress,
    Rerunner,
    TextDifference,
    check_comparator,
    check_removable,
    not_removable_reason,
)
from footprint_lab.explain.trials.settings import Trials, TrialSettings, settings_for

if TYPE_CHECKING:
    from footprint_lab.core.conversation import CheckpointInput
    from footprint_lab.core.door import RunInput
    from footprint_lab.core.run import Run
    from footprint_lab.explain.arguments import RunLike
    from footprint_lab.explain.provenance.influence import InfluenceStrategy
    from footprint_lab.explain.trials.rerun import Rerun
    from footprint_lab.providers.types import Provider
    from footprint_lab.record.recording import Recording
    from footprint_lab.redact.policy import Redaction


class NothingToLocalizeError(Refusal):
    """Raised by ``localize`` / ``rerun_without`` on a run with no LLM call or no answer to compare reruns with.

    Carries ``reason`` (``no_llm_call`` or ``no_answer``) and ``status`` (the run's status).
    """

    code = "ERR_NOTHING_TO_LOCALIZE"
    fields = ("reason", "status")

    def __init__(self, function: str, reason: str, status: str) -> None:
        if reason == "no_llm_call":
            why = ("made no LLM call, so no context reached a model and there is nothing to remove. Localize a run "
                   "that called a model; run.steps shows whether it did")
        elif status == "finished":  # an imported run whose last call asked for a tool, or replied with no text
            why = ("finished without an answer: its last LLM call gave no text (it asked for a tool, or replied "
                   "empty), so there is nothing to compare reruns with. Localize a run that answered; "
                   "backtrack(at='call-llm#N') shows what its calls were sent")
        else:
            why = (f"has no answer to compare reruns with (its status is {status}). Localize a finished run; "
                   "for a failed one, backtrack(at='call-llm#N') shows what its calls were sent")
        super().__init__(f"{function}: this run {why}.")
        self.reason = reason
        self.status = status


def original_answer(function: str, recording: Recording) -> str:
    """The answer reruns are compared with, or a refusal: no answer first (a run whose first call failed made no
    exchange, yet it is its status that explains it), then no LLM call (an answer no model gave)."""
    if recording.answer is None:
        raise NothingToLocalizeError(function, "no_answer", recording.status)
    if not recording.exchanges and not any(child.exchanges for child in recording.children):
        raise NothingToLocalizeError(function, "no_llm_call", recording.status)
    return recording.answer


async def localize(
    run: RunLike,
    *,
    rerun: Rerun | None = None,
    replay: Provider | None = None,
    redact: Redaction | None = None,
    top: int | None = None,
    sources: Sequence[str] | None = None,
    strategy: str | InfluenceStrategy = "lexical",
    input: RunInput = None,
    continue_from: CheckpointInput | None = None,
    trials: Trials | None = None,
    **settings: Unpack[TrialSettings],
) -> Localization:
    """Test which suspects of a run cause its answer by removing them and rerunning; see the module docstring.

    ``rerun`` is the agent itself (rebuilt without each suspect) or a factory called as
    ``factory(exclude=[...])``. Or, with no agent to rebuild (an imported run, or a cheap first step),
    ``replay`` is a provider: the answering call's recorded request is sent again through it without
    each piece it holds (:func:`~footprint_lab.explain.replay`); that proves what a piece did to that
    call, and the report names the pieces it cannot test (those the call was not sent) and those also
    sent to earlier calls; ``redact`` is the policy the run was recorded under, which a replay needs when its
    report cannot rebuild it (patterns of its own). ``samples`` is the reruns a side of the confirmation's first look;
    ``budget`` caps every rerun of the call (default ``16 x samples`` plus the screening's own
    reruns: 60 for ten pieces, 72 for forty); ``alpha`` is the
    false-confirmation rate. By default every removable piece that reached the answer is tested
    (one removal each while the budget allows, removals in groups when it does not); ``top`` tests
    only the ranking's first ``top`` (the report names what it left out); ``sources`` tests exactly
    these removal ids.
    ``comparator`` says whether a rerun's answer flipped the outcome (``footprint_lab.explain.compare``
    has ones that know answers; it may be a coroutine function). ``input`` replaces the recorded message
    (needed when it was redacted); ``continue_from`` is the checkpoint a follow-up run continued.
    ``retries`` is how many more tries a rerun that fails for a passing reason gets. ``time_limit`` is the
    seconds one rerun may take (its factory call, its run, its comparison, each; ``None``: no limit): one
    that takes longer fails as such and the others go on. ``progress`` shows a
    bar in a notebook (``None``: only inside a kernel), or is a function ``(done, total)``.
    """
    recording = recording_of(run, "localize")
    original = original_answer("localize", recording)
    chosen_trials = settings_for("localize", trials, settings).for_call("localize")
    samples, alpha, budget, concurrency = (chosen_trials.samples or 3, chosen_trials.alpha, chosen_trials.budget,
                                           chosen_trials.concurrency)
    if top is not None:
        whole_number("localize", "top", top, 1, 100_000)
    compare = check_comparator("localize", chosen_trials.comparator)
    call = None
    if redact is not None and replay is None:
        raise ExplainConfigError("localize", "redact", "a policy without replay=",
                                 "is for a replay (localize(run, replay=provider, redact=policy)); a rerun records "
                                 "under the agent's own policy: build the agent with it")
    if replay is not None:
        if rerun is not None:
            raise ExplainConfigError("localize", "replay", "a provider beside rerun=",
                                     "is one way to test the pieces; rerun= is the other: pass one of them (replay= "
                                     "re-sends the answering call, rerun= reruns the whole agent)")
        call = recorded_call("localize", recording)
        rerun = CallReplayer(call, check_provider("localize", replay, "replay"),
                             replay_policy("localize", recording, redact))
    rerunner = Rerunner("localize", rerun, recording, input, continue_from, retries=chosen_trials.retries,
                         time_limit=chosen_trials.time_limit, run=run)
    turns = {name: Source(kind, []) for name, kind in call.turns().items()} if call is not None else {}
    chosen, untested = choose_suspects(recording, run, sources, strategy, top, turns)
    if call is not None:
        chosen, untested = _in_call(call, chosen, untested, sources, top, turns)
    arms = [Arm(name, (name,), score=score) for _, name, _, score in chosen]
    limit = budget if budget is not None else default_budget(samples, len(arms))
    bar = Progress(limit, "localize", chosen_trials.progress, unit="reruns")
    draws = Draws(rerunner, compare, original, concurrency=concurrency, bar=bar)
    trial, stop = await run_trial("localize", draws, bar, arms, samples=samples, alpha=alpha, budget=limit,
                                  screen=sources is None, prepare=draws.prepare)
    trial.notes += noise_note(trial, compare, original)
    trial.notes += budget_note(trial, budget, default_budget(samples, len(arms)))
    if call is not None:
        trial.notes += replay_note(call, [name for _, name, _, _ in chosen])
    by_key = {verdict.arm.key: verdict for verdict in trial.arms}
    tested = [LocalizedSuspect(rank, name, source.kind, score, by_key[name], source.member, source.member_name)
              for rank, name, source, score in chosen]
    untested += [(s.source_id, s.reason.removeprefix("was not tested: ")) for s in tested if s.trial.untested]
    report = Localization(original, [s for s in tested if not s.trial.untested], untested, repr(compare), trial, stop,
                          by="rerun" if call is None else "replay", wording=wording_note(trial, compare, original))
    if stop is not None:
        raise stopped("localize", bar, report)
    return report


def _in_call(call: RecordedCall, chosen: list[tuple[int, str, Source, float]], untested: list[tuple[str, str]],
             sources: Sequence[str] | None, top: int | None,
             turns: dict[str, Source]) -> tuple[list[tuple[int, str, Source, float]], list[tuple[str, str]]]:
    """For a replay: the chosen pieces the answering call was sent; the others named as untested, with why. An earlier
    turn of the conversation (``history#i``), which no rerun removes, is tested too: a replay edits the request."""
    sent = set(call.removable())
    if sources is None:
        taken = {name for _, name, _, _ in chosen}
        left = {name: source for name, source in turns.items() if name not in taken}
        untested = [(name, why) for name, why in untested if name not in left]
        for name, source in left.items():
            if top is not None and len(chosen) >= top:
                untested.append((name, f"left out by top={top}: an earlier turn, tested after the ranked pieces"))
            else:
                chosen.append((len(chosen) + 1, name, source, 0.0))
    outside = [name for _, name, _, _ in chosen if name not in sent]
    if sources is not None and outside:
        raise ReplayPieceError("localize", "sources", len(outside), call.removable(),
                               "name pieces the answering call was not sent, so a replay of it cannot remove them "
                               "(rerun= reruns the agent without them)")
    whole = call.sent_whole()
    rebuilt = ("localize(run, rerun=...) with the agent, or a factory that builds it elsewhere without the piece, "
               "tests it")
    why = ("not sent to the answering call: it could act only through an earlier call, which a replay does not redo; "
           f"{rebuilt}")
    inside = ("sent to the answering call inside a text a replay sends whole (a system prompt the runner formats, or "
              f"a turn that holds it), so a replay cannot remove it alone; {rebuilt}")
    return [c for c in chosen if c[1] in sent], [*untested, *((name, inside if name in whole else why)
                                                              for name in outside)]


def choose_suspects(recording: Recording, run: Any, sources: Sequence[str] | None, strategy: Any, top: int | None,
                    turns: dict[str, Source] | None = None
                    ) -> tuple[list[tuple[int, str, Source, float]], list[tuple[str, str]]]:
    """``(rank, removal id, source, score)`` of each piece to test, and ``(id, why)`` of each piece left untested.

    With neither ``sources`` nor ``top`` every piece a rerun can remove is tested: the ranking
    only orders the work. ``top`` keeps the ranking's first ``top`` and names the rest as left out
    by it; pieces no rerun can remove are named with why.
    """
    if sources is not None:
        named = id_list("localize", "sources", sources, needed="to test (leave sources out to test every piece)")
        turns = turns or {}  # a replay's earlier turns of the conversation, which no rerun removes
        known = {**check_removable("localize", recording, [name for name in named if name not in turns]), **turns}
        return [(position, name, known[name], 0.0) for position, name in enumerate(named, 1)], []
    known = check_removable("localize", recording, [])
    # the whole run is walked (a backtrack's display limits would leave a piece of an early pass untested, unnamed)
    walked = backtrack(recording, max_depth=MOST_DEPTH, max_steps=MOST_STEPS)
    frame = rank_suspects(run, strategy=strategy, trace=walked)
    chosen: list[tuple[int, str, Source, float]] = []
    untested: list[tuple[str, str]] = []
    seen: set[str] = set()
    for row in frame.to_dict("records"):
        name = row["removal_id"]
        if not isinstance(name, str):
            if row["source_kind"] != "decision":
                untested.append((str(row["source_id"]), not_removable_reason(str(row["source_kind"]),
                                                                                 str(row["source_id"]))))
            continue
        if name in seen:
            continue
        seen.add(name)
        if top is not None and len(chosen) >= top:
            untested.append((name, f"left out by top={top}: ranked {int(row['rank'])}"))
            continue
        source = known.get(name) or Source(str(row["source_kind"]), [])
        chosen.append((int(row["rank"]), name, source, float(row["score"])))
    return chosen, list(dict.fromkeys(untested))  # each member's user message is one line, not one per member


@dataclass(slots=True)
class RerunReport(Partial):
    """What changed when the same input was run again without some sources.

    ``after``, ``changed``, ``gone`` and ``appeared`` describe the first rerun. With
    ``samples`` of 2 or more, ``trial`` holds the test of all of them against as many unchanged
    reruns: its ``verdict``, flips, noise and p-value, as ``localize`` gives for one suspect.
    """

    removed: list[str]
    before: str
    after: str | None
    changed: bool
    error: str | None
    run: Run | None
    gone: list[str]
    appeared: list[str]
    difference: float | None
    trial: ArmVerdict | None = None
    #: ``(reruns done, reruns planned)`` when the call was stopped (its trial then holds what finished)
    stopped: tuple[int, int] | None = None

    @property
    def verdict(self) -> str | None:
        """``confirmed`` / ``not_confirmed`` / ``undecided`` when tested over several reruns, else ``None``."""
        return self.trial.verdict if self.trial is not None else None

    def summary(self) -> str:
        return partial_line(self.stopped) + self._summary()

    def _summary(self) -> str:
        names = ", ".join(f"'{n}'" for n in self.removed)
        if self.trial is not None:
            return f"Rerun without {names}: {VERDICT_LABELS[self.trial.verdict]}: removing them {self.trial.reason}."
        if self.error is not None:
            return f"Rerun without {names}: the rerun failed ({self.error}): nothing is known of the outcome."
        measured = f" (text difference {self.difference:.2f})" if self.difference is not None else ""
        state = "changed" if self.changed else "did not change"
        return f"Rerun without {names}: the outcome {state}{measured}."

    def __str__(self) -> str:
        lines = [self.summary(), f"  before: \"{shorten(self.before)}\""]
        if self.after is not None:
            lines.append(f"  after:  \"{shorten(self.after)}\"")
        lines.append(f"  no longer sent: {', '.join(self.gone) or 'nothing'}")
        lines.append(f"  newly sent:     {', '.join(self.appeared) or 'nothing'}")
        if self.trial is None:
            lines.append("One rerun is an observation, not a proof: samples=3 tests it against as many unchanged "
                         "reruns, and localize() tests every suspect.")
        return "\n".join(lines)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return display_bundle("rerun_report", self, self.summary(), str(self), include, exclude)


async def rerun_without(
    run: RunLike,
    ignore: Sequence[str] | str,
    *,
    rerun: Rerun | None = None,
    input: RunInput = None,
    continue_from: CheckpointInput | None = None,
    trials: Trials | None = None,
    **settings: Unpack[TrialSettings],
) -> RerunReport:
    """Run the same input again without the named sources, and report what changed.

    ``ignore`` names sources by their removal id (``run.suspects()`` shows it): declaration
    ids, tool names, ``system-prompt``. With ``samples=1`` (the default) it is one rerun, an
    observation; with more, the removal is tested against as many unchanged reruns (and more
    looks while undecided, within ``budget``) at false-confirmation rate ``alpha``. The trial
    settings (``trials=`` or keywords) are as for ``localize``; ``samples`` is 1 unless given.
    """
    recording = recording_of(run, "rerun_without")
    names = id_list("rerun_without", "ignore", ignore, needed="to remove")
    check_removable("rerun_without", recording, names)
    original = original_answer("rerun_without", recording)
    chosen_trials = settings_for("rerun_without", trials, settings).for_call("rerun_without")
    samples, alpha, concurrency = chosen_trials.samples or 1, chosen_trials.alpha, chosen_trials.concurrency
    limit = chosen_trials.budget if chosen_trials.budget is not None else BUDGET_PER_SAMPLE * samples
    compare = check_comparator("rerun_without", chosen_trials.comparator)
    rerunner = Rerunner("rerun_without", rerun, recording, input, continue_from, retries=chosen_trials.retries,
                         time_limit=chosen_trials.time_limit, run=run)
    arm = Arm(" + ".join(names), tuple(names))
    bar = Progress(1 if samples == 1 else limit, "rerun_without", chosen_trials.progress, unit="reruns")
    draws = Draws(rerunner, compare, original, concurrency=concurrency, bar=bar, keep_runs=True)
    trial: ArmVerdict | None = None
    stop: tuple[int, int] | None = None
    if samples == 1:
        try:
            await draws.prepare([arm])
            (outcome,) = await draws([(arm, 0)])
        except INTERRUPTS:  # one rerun: stopped, nothing finished
            raise stopped("rerun_without", bar, None) from None
        bar.close()
    else:
        result, stop = await run_trial("rerun_without", draws, bar, [arm], samples=samples, alpha=alpha,
                                       budget=limit, screen=False, prepare=draws.prepare)
        trial = result.arms[0]
        outcome = next((o for o in trial.confirmation if o.error is None),
                       trial.confirmation[0] if trial.confirmation else Outcome(None, None, NOT_RUN))
    if outcome.answer is None:
        report = RerunReport(names, original, None, False, outcome.error, None, [], [], None, trial, stop)
        if stop is not None:
            raise stopped("rerun_without", bar, report)
        return report
    # what the rerun was sent, against what the original was: unknown for a rerun that left no recording
    # (a foreign agent's answers only), so nothing is said to be gone or to have appeared
    before = _sent_sources(recording) if outcome.run is not None else []
    after = _sent_sources(outcome.run.recording) if outcome.run is not None else []
    difference = TextDifference.difference(original, outcome.answer) if isinstance(compare, TextDifference) else None
    # a rerun that answered but could not be judged (its comparator failed) is a failed rerun, never "no change"
    report = RerunReport(
        names, original, outcome.answer, outcome.flipped and outcome.error is None, outcome.error, outcome.run,
        [s for s in before if s not in after], [s for s in after if s not in before], difference, trial, stop,
    )
    if stop is not None:
        raise stopped("rerun_without", bar, report)
    return report


def _sent_sources(recording: Recording) -> list[str]:
    """The sources that reached the answer (members' included), as ``kind 'id'``, in the order they were sent."""
    return list(dict.fromkeys(
        describe_source(c.piece) + (f" of member '{c.member.path}'" if c.member.path else "")
        for c in backtrack(recording).candidates))
