"""Comparators that know answers: did a rerun reach a different *outcome*, not merely other words?

Rule kept here: a rerun flips only when the thing the analyst cares about changed. Free text
differs on every rerun of a model sampled above temperature 0, so the default
:class:`~footprint_lab.explain.trials.rerun.TextDifference` calls every such rerun a flip and no verdict
can be reached; these read the outcome out of each answer and compare that:

- :class:`Label`: the outcome is one of a few labels (``choices``), or what a regex captures;
- :class:`Number`: the outcome is a number (an amount, a count), equal within ``tolerance``;
- :class:`Mentions`: the outcome is whether the answer mentions some terms;
- :class:`JsonField`: the outcome is a field of a JSON answer (a dotted path);
- :class:`Judge`: an LLM reads both answers and says whether the outcome is the same. Its own
  calls are recorded runs (``judge.runs``), so a judgement can be explained like any answer.

Each is a callable ``(original, rerun) -> bool`` (``Judge``: a coroutine), so ``localize``,
``bisect_culprits``, ``find_dropped_context`` and ``rerun_without`` take any of them as
``comparator=``. An answer with no readable outcome reads as "no outcome", which differs from
any outcome. :func:`suggest` names the one to try for an answer.

Role: explain layer. Refusal raised here: :class:`ComparatorError` (when one is built).
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from footprint_lab.base.refusal import SettingRefusal, describe_shape
from footprint_lab.base.runners import factory

_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:[,_]\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LABEL_LIKE = re.compile(r"\b[A-Z][A-Z_-]{2,}\b")
_WORDS = re.compile(r"[^\W_]+", re.UNICODE)
_JUDGE_SYSTEM = (
    "You compare two answers to the same request and decide whether they reach the same outcome. "
    "Wording, length, tone and order do not matter; only the outcome does{focus}. Reply with exactly one word: "
    "SAME or DIFFERENT."
)


class ComparatorError(SettingRefusal):
    """Raised when a comparator is built with settings it cannot compare by.

    Carries ``comparator`` (its class name), ``setting`` and ``received`` (the setting's shape).
    """

    code = "ERR_COMPARATOR"
    fields = ("comparator", "setting", "received")

    def __init__(self, comparator: str, setting: str, received: str, fix: str) -> None:
        super().__init__(comparator, setting, received, fix)
        self.comparator = comparator


def _strings(comparator: str, setting: str, value: Any, *, least: int) -> list[str]:
    items = [value] if isinstance(value, str) else value
    wrong = [item for item in items if not (isinstance(item, str) and item.strip())] \
        if isinstance(items, list | tuple) else []
    if not isinstance(items, list | tuple) or len(items) < least or wrong:
        received = describe_shape(value) if not wrong else "an empty or blank string" if isinstance(
            wrong[0], str) else f"a term that is {describe_shape(wrong[0])}"
        raise ComparatorError(comparator, setting, received,
                              f"must be {'a non-empty string or ' if least == 1 else ''}a list of at least {least} "
                              "non-empty strings")
    return [item.strip() for item in items]


def _pattern(comparator: str, pattern: Any) -> re.Pattern[str]:
    if not isinstance(pattern, str):
        raise ComparatorError(comparator, "pattern", describe_shape(pattern), "must be a regular expression string")
    try:
        return re.compile(pattern, re.IGNORECASE | re.DOTALL)
    except re.error:
        raise ComparatorError(comparator, "pattern", "a string that is not a valid regular expression",
                              "must compile with Python's re module") from None


class Label:
    """The outcome is a label: the earliest of ``choices`` the answer names, or what ``pattern`` captures.

    ``Label(choices=["APPROVED", "DECLINED"])`` reads "Declined: the order is too old." as DECLINED
    (whole words, any case). ``Label(pattern=r"verdict:\\s*(\\w+)")`` takes the first group (or the
    whole match), compared without regard to case.
    """

    def __init__(self, choices: Sequence[str] | None = None, *, pattern: str | None = None) -> None:
        if (choices is None) == (pattern is None):
            raise ComparatorError("Label", "choices", "both or neither of choices and pattern",
                                  "or pattern= must be given, one of them: Label(choices=['APPROVED', 'DECLINED'])")
        self.choices = _strings("Label", "choices", choices, least=2) if choices is not None else None
        self.pattern = _pattern("Label", pattern) if pattern is not None else None
        if self.choices is not None:
            alternatives = "|".join(re.escape(choice) for choice in sorted(self.choices, key=len, reverse=True))
            self._finder = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)

    def label(self, answer: str) -> str | None:
        """The answer's label (upper-cased), or ``None`` when it names none."""
        if self.pattern is not None:
            match = self.pattern.search(answer)
            if match is None:
                return None
            return (match.group(1) if match.groups() else match.group(0)).strip().upper()
        match = self._finder.search(answer)
        return match.group(0).upper() if match else None

    def __call__(self, original: str, rerun: str) -> bool:
        return self.label(original) != self.label(rerun)

    def __repr__(self) -> str:
        if self.choices is not None:
            return f"Label(choices={self.choices!r})"
        return f"Label(pattern={self.pattern.pattern if self.pattern else ''!r})"


def _parse_number(text: str) -> float:
    return float(text.replace(",", "").replace("_", ""))


class Number:
    """The outcome is a number: the first in the answer (or ``pattern``'s group), equal within ``tolerance``.

    ``relative=True`` makes ``tolerance`` a fraction of the original's size (0.01: within 1%).
    Thousands separators (``1,250``) are read; an answer with no number reads as no outcome.
    """

    def __init__(self, *, pattern: str | None = None, tolerance: float = 0.0, relative: bool = False) -> None:
        if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not tolerance >= 0 \
                or not math.isfinite(tolerance):
            raise ComparatorError("Number", "tolerance", describe_shape(tolerance), "must be a number of at least 0")
        self.pattern = _pattern("Number", pattern) if pattern is not None else None
        self.tolerance = float(tolerance)
        self.relative = bool(relative)

    def number(self, answer: str) -> float | None:
        """The answer's number, or ``None``."""
        if self.pattern is not None:
            match = self.pattern.search(answer)
            if match is None:
                return None
            found = _NUMBER.search(match.group(1) if match.groups() else match.group(0))
        else:
            found = _NUMBER.search(answer)
        return _parse_number(found.group(0)) if found else None

    def __call__(self, original: str, rerun: str) -> bool:
        before, after = self.number(original), self.number(rerun)
        if before is None or after is None:
            return (before is None) != (after is None)
        allowed = self.tolerance * abs(before) if self.relative else self.tolerance
        return abs(before - after) > allowed

    def __repr__(self) -> str:
        pattern = f"pattern={self.pattern.pattern!r}, " if self.pattern is not None else ""
        return f"Number({pattern}tolerance={self.tolerance}{', relative=True' if self.relative else ''})"


class Mentions:
    """The outcome is whether the answer mentions ``terms`` (any of them; ``every=True``: all of them).

    Matching ignores case and takes whole words, so ``Mentions("Lisbon")`` reads "lisbon." but not
    "Lisbonne".
    """

    def __init__(self, *terms: str, every: bool = False) -> None:
        if len(terms) == 1 and isinstance(terms[0], list | tuple):  # Mentions(["Lisbon", "Porto"]) reads as meant
            terms = tuple(terms[0])
        self.terms = _strings("Mentions", "terms", list(terms), least=1)
        self.every = bool(every)
        self._finders = [re.compile(rf"(?<!\w){re.escape(term)}(?!\w)", re.IGNORECASE) for term in self.terms]

    def mentions(self, answer: str) -> bool:
        found = [finder.search(answer) is not None for finder in self._finders]
        return all(found) if self.every else any(found)

    def __call__(self, original: str, rerun: str) -> bool:
        return self.mentions(original) != self.mentions(rerun)

    def __repr__(self) -> str:
        terms = ", ".join(repr(term) for term in self.terms)
        return f"Mentions({terms}{', every=True' if self.every else ''})"


def _json_object(answer: str) -> Any:
    """The answer as JSON, or the first JSON object or array inside it, or ``None``."""
    decoder = json.JSONDecoder()
    text = answer.strip()
    for start in [0, *(k for k, ch in enumerate(text) if ch in "{[" and k)]:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict | list):
            return value
    return None


class JsonField:
    """The outcome is a field of a JSON answer, by dotted path (``"decision"``, ``"refund.amount"``, ``"items.0"``).

    The answer may wrap its JSON in prose or a code fence; the first object in it is read.
    """

    _MISSING = object()

    def __init__(self, path: str) -> None:
        if not isinstance(path, str) or not path.strip() or any(not part for part in path.split(".")):
            raise ComparatorError("JsonField", "path", describe_shape(path),
                                  "must be a dotted path to the field, such as 'decision' or 'refund.amount'")
        self.path = path

    def field(self, answer: str) -> Any:
        """The field's value, or a marker for "absent" that equals nothing but itself."""
        value = _json_object(answer)
        for part in self.path.split("."):
            if isinstance(value, dict) and part in value:
                value = value[part]
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                value = value[int(part)]
            else:
                return self._MISSING
        return value

    def __call__(self, original: str, rerun: str) -> bool:
        return bool(self.field(original) != self.field(rerun))

    def __repr__(self) -> str:
        return f"JsonField({self.path!r})"


class Judge:
    """An LLM reads the original answer and a rerun's and says whether the outcome is the same.

    ``provider`` is any provider (``openai("gpt-4o-mini")``, a local server, ``mock``); ``question``
    says what the outcome is ("Is the refund approved?"), which makes the judge far steadier. Each
    judgement is an ``LLMCall`` run, recorded and kept in :attr:`runs`; identical answers are not
    judged, and a pair already judged is not judged again. A reply that is neither SAME nor
    DIFFERENT makes that rerun count as failed (a ``RuntimeError`` the trial reports), never as a flip.
    ``runner_factory`` builds the call (default: ``LLMCall``); ``concurrency`` caps calls in flight.
    """

    def __init__(self, provider: Any, *, question: str | None = None, model: str | None = None,
                 runner_factory: Callable[..., Any] | None = None, concurrency: int = 4) -> None:
        if provider is None:
            raise ComparatorError("Judge", "provider", "None", "must be the provider the judge runs on, "
                                  "e.g. footprint_lab.providers.openai('gpt-4o-mini')")
        if question is not None and (not isinstance(question, str) or not question.strip()):
            raise ComparatorError("Judge", "question", describe_shape(question),
                                  "must say what the outcome is, e.g. 'Is the refund approved?'")
        if runner_factory is not None and not callable(runner_factory):
            raise ComparatorError("Judge", "runner_factory", describe_shape(runner_factory),
                                  "must be a callable that builds a runner from provider=, system= and model=")
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ComparatorError("Judge", "concurrency", describe_shape(concurrency),
                                  "must be a whole number of at least 1")
        self.provider = provider
        self.question = question
        self.model = model
        self.runs: list[Any] = []
        self._factory = runner_factory
        self._gate: asyncio.Semaphore | None = None
        self._concurrency = concurrency
        self._seen: dict[tuple[str, str], bool] = {}

    def _runner(self) -> Any:
        focus = f" (the outcome in question: {self.question.strip()})" if self.question else ""
        build = self._factory or factory("llm_call")
        settings: dict[str, Any] = {"provider": self.provider, "system": _JUDGE_SYSTEM.format(focus=focus),
                                    "name": "judge"}
        if self.model is not None:
            settings["model"] = self.model
        return build(**settings)

    async def __call__(self, original: str, rerun: str) -> bool:
        if _WORDS.findall(original.lower()) == _WORDS.findall(rerun.lower()):
            return False
        key = (original, rerun)
        if key in self._seen:
            return self._seen[key]
        if self._gate is None:
            self._gate = asyncio.Semaphore(self._concurrency)
        async with self._gate:
            run = await self._runner().run(f"Answer A:\n<<<\n{original}\n>>>\n\nAnswer B:\n<<<\n{rerun}\n>>>")
        self.runs.append(run)
        words = set(_WORDS.findall(str(getattr(run, "answer", "") or "").upper()))
        if ("DIFFERENT" in words) == ("SAME" in words):
            raise RuntimeError("the judge replied with neither SAME nor DIFFERENT")
        self._seen[key] = "DIFFERENT" in words
        return self._seen[key]

    def __repr__(self) -> str:
        name = getattr(self.provider, "name", type(self.provider).__name__)
        question = f", question={self.question!r}" if self.question else ""
        return f"Judge({name}{question})"


def suggest(answer: str) -> str:
    """A comparator to try for runs that answer like ``answer`` (a sentence that names it, and the others)."""
    found = _json_object(answer)
    first_word = answer.strip().split(maxsplit=1)[0].strip(":.,;!-") if answer.strip() else ""
    if isinstance(found, dict) and found and isinstance(next(iter(found)), str) and \
            re.fullmatch(r"[A-Za-z_][\w-]{0,40}", next(iter(found))):
        pick = f"JsonField({next(iter(found))!r}) to compare that field"
    elif _LABEL_LIKE.fullmatch(first_word):
        pick = f"Label(choices=[{first_word!r}, ...]) listing every outcome the answer can open with"
    elif _NUMBER.search(answer) and len(answer.split()) <= 8:
        pick = "Number() to compare the number it gives"
    else:
        pick = ("Mentions('...') for a term the outcome hinges on, or Judge(provider, question='...') to have a "
                "model judge the outcome")
    return (f"Compare outcomes instead: comparator={pick} (footprint_lab.explain.compare has Label, Number, "
            "Mentions, JsonField and Judge).")


__all__ = ["ComparatorError", "JsonField", "Judge", "Label", "Mentions", "Number", "suggest"]
