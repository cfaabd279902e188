"""The argument checks of ``RunSet``'s doors that read more than one value: a runner or its factory, the
inputs, a whole number in range, ``localize``'s settings for a whole set, a localized frame, a ``where=``.

Rule kept here: each is judged before the first run, recording or task, and refused by name
(:class:`~footprint_lab.batch.refusals.BatchConfigError`), what arrived described by its shape.

Role: batch layer; ``RunSet`` calls them first in each door.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import footprint_lab.batch._table as _table
from footprint_lab.base.refusal import describe_shape, did_you_mean
from footprint_lab.batch.refusals import BatchConfigError
from footprint_lab.explain import Trials, localize
from footprint_lab.explain.trials.settings import ProofSettings

if TYPE_CHECKING:
    from footprint_lab.explain.provenance.influence import InfluenceStrategy

#: ``localize`` settings a set cannot pass on: each run has its own input and conversation
_PER_RUN = ("run", "rerun", "progress", "input", "continue_from")

_WHERE_FIX = ("selects runs: a function given each run's summary (r.run_id, r.input, r.answer, r.status, r.run()) "
              "that is true for the ones wanted, or a collection of run ids as frame() shows them, "
              "e.g. frame[frame.answer != frame.expected].run_id")


def _runner_or_factory(function: str, runner: Any) -> Callable[[], Any] | None:
    """The factory (``None`` for a runner instance), refused when it is neither."""
    if isinstance(runner, type):
        raise BatchConfigError(function, "runner", "a class", "must be a runner instance or a factory that builds "
                               "one, e.g. lambda: Agent(...)")
    if callable(getattr(runner, "run", None)):
        return None
    if callable(runner):
        try:
            signature: inspect.Signature | None = inspect.signature(runner)
        except (TypeError, ValueError):
            signature = None  # a signature that cannot be read (a builtin) is given the benefit of the doubt
        try:
            if signature is not None:
                signature.bind()
        except TypeError:
            raise BatchConfigError(function, "runner", "a function that cannot be called without arguments",
                                   "must be a runner or a factory callable as factory() (its other parameters "
                                   "with defaults, e.g. def build(exclude=(), seed=None))") from None
        return cast("Callable[[], Any] | None", runner)
    raise BatchConfigError(function, "runner", describe_shape(runner),
                           "must be a runner (an Agent, an LLMCall, a composition) or a factory that builds one")


def _inputs(function: str, inputs: Any) -> list[tuple[int, Any]]:
    if isinstance(inputs, str | bytes | dict) or not isinstance(inputs, Iterable):
        raise BatchConfigError(function, "inputs", describe_shape(inputs),
                               "must be a list of inputs, each a message or {'message': ...}")
    return list(enumerate(inputs))


def _whole(function: str, setting: str, value: Any, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise BatchConfigError(function, setting, describe_shape(value), f"must be a whole number from {low} to {high}")
    return value


class LocalizeSettings(ProofSettings, total=False):
    """``RunSet.localize``'s settings: those of ``localize`` that mean the same for every run (the trial settings but
    ``progress``, which is the set's own bar), checked by :func:`_check_settings`."""

    trials: Trials | None
    top: int | None
    sources: Sequence[str] | None
    strategy: str | InfluenceStrategy


def _check_settings(function: str, settings: Mapping[str, Any]) -> None:
    """Only ``localize``'s own settings (its keywords and the trial settings), only those that mean the same for
    every run, each one a trial can use: refused before any run is localized."""
    trial = [field.name for field in dataclasses.fields(Trials)]
    own = [name for name, parameter in inspect.signature(localize).parameters.items()
           if parameter.kind is inspect.Parameter.KEYWORD_ONLY and name not in _PER_RUN]
    accepted = own + trial
    for name in settings:
        if name not in accepted:
            per_run = name in _PER_RUN
            near = did_you_mean([name], accepted)
            raise BatchConfigError(
                function, name, "a setting that differs from run to run" if per_run else "no setting of localize",
                "cannot be given for a whole set (each run is rerun on its own recorded input)" if per_run
                else f"is not a setting of localize{f' ({near})' if near else ''}; the settings "
                     f"are {', '.join(accepted)}",
            )
    chosen = {name: value for name, value in settings.items() if name in trial}
    given = settings.get("trials")
    if given is not None and not isinstance(given, Trials):
        raise BatchConfigError(function, "trials", describe_shape(given), "must be a footprint_lab.Trials(...) object")
    if given is None:
        Trials(**chosen)  # each value checked now, refused by name before any run is localized
    else:
        given.replace(**chosen)


def _localizable(function: str, chosen: Sequence[Any]) -> None:
    """Refuse, before any rerun, a selection holding a run ``localize`` cannot rerun as it is: one with no answer
    or no LLM call, or one whose message a policy masked (only its original can be given again, run by run)."""
    unanswered = sum(1 for e in chosen if e.summary.answer is None or e.summary.calls == 0)
    if unanswered:
        raise BatchConfigError(
            function, "where", f"a selection with {unanswered} run(s) that have no answer or made no LLM call",
            "must select runs that answered after calling a model (a failed run has nothing to compare reruns "
            "with): add the status, e.g. where=lambda r: r.status == 'finished' and r.answer != expected[r.input]",
        )
    masked = sum(1 for e in chosen if "[redacted:" in (e.summary.input or "")  # a mask a policy wrote, not one
                 and e.run().recording.redaction is not None)  # typed as text by a user (a log line)
    if masked:
        raise BatchConfigError(
            function, "where", f"a selection with {masked} run(s) whose recorded message a redaction policy masked",
            "must leave those runs out: a rerun of the masked text would answer a different question, and only "
            "the original message can be given again, run by run. Localize each on its own, "
            "localize(runs[run_id], rerun=agent, input=original_message), and the rest here with "
            "where=lambda r: '[redacted:' not in (r.input or '')",
        )


def _localized(function: str, frame: Any) -> dict[str, str]:
    import pandas as pd

    if not isinstance(frame, pd.DataFrame) or not {"run_id", "source_id", "verdict"} <= set(frame.columns):
        raise BatchConfigError(function, "localized", describe_shape(frame) if not isinstance(frame, pd.DataFrame)
                               else "a DataFrame without run_id, source_id and verdict",
                               "must be the DataFrame RunSet.localize returns")
    return _table.culprits_by_run(frame)
