"""How a rerun of a run recorded under a redaction policy is masked and judged beside the original.

Rule kept here: reruns compare like with like and show nothing the policy covers, and a rerun that cannot be
judged without the values the policy masks is a failed rerun that says why, never "unchanged" or "changed".

- A live run knows every value it masked: a rerun's answer is masked with them (a rerun that never met a secret,
  its tool left out, would show it), and masked answers that read the same while the live ones differ (two
  addresses masked alike) cannot be judged.
- A loaded run has lost them. What the message given again (``input=``) holds where the recorded message shows a
  mask is read back (:func:`stood_for`, only when one reading is possible) and taught to a scrubber of the run's
  policy. Masked answers that read the same are the same only where every masked value is one read back; a
  rerun whose answer fits the recorded one with each key's mask standing for some text may hold the same value.
  A pattern's mask stands for itself: the rerun's own policy masks alike.
- The rerun a report keeps is rebuilt from its masked recording, its answer as recorded.

Role: explain layer, used by :class:`~footprint_lab.explain.trials.rerun.Rerunner` for a run under a policy.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from footprint_lab.record.schema import KIND_ASSISTANT, KIND_TOOL_RESULT, KIND_USER
from footprint_lab.redact.policy import BUILTIN_PATTERNS, PLACEHOLDER, policy_from_reports
from footprint_lab.redact.scrubber import RunScrubber

if TYPE_CHECKING:
    from footprint_lab.record.recording import Recording


class Masking:
    """One run's masking of its reruns: the original's live scrubber, or a scrubber taught what was read back."""

    __slots__ = ("_masked", "_masked_pieces", "_original", "_patterns", "_read_back", "_scrubber", "_taught")

    def __init__(self, recording: Recording, run: Any, given: Any) -> None:
        #: what masks a rerun's answer as the original run masked its own, every value it learned included
        masked = getattr(run, "masked", None)
        self._masked: Callable[[str], str] | None = masked if callable(masked) else None
        given_text = given if isinstance(given, str) else given.get("message") if isinstance(given, dict) else None
        recorded_text = recording.input.get("message")
        read_back = stood_for(given_text, recorded_text) if (
            isinstance(given_text, str) and isinstance(recorded_text, str)) else {}
        #: a loaded run's answer masks: which stand for any text (a key's value), which only for themselves (a
        #: pattern the rerun's own policy masks alike), and the values read back, for telling them
        report = recording.redaction or {}
        self._patterns = frozenset(report.get("patterns", ())) - {*report.get("keys", ())}  # a key's name is a key's
        self._read_back = dict(read_back)
        #: the original's declared pieces that hold a mask, by source: what a rerun's own recording of them shows
        #: there is read back too (a secret the rerun met in a fact, never under the key that taught the original).
        #: What a run makes as it goes (the model's turns, tool results, the message) differs from rerun to rerun.
        self._masked_pieces = {(p.slot, p.source_id): p.content for p in recording.context_pieces
                               if "[redacted:" in p.content and p.source_kind not in _MADE_BY_THE_RUN}
        policy = getattr(run, "policy", None) or policy_from_reports([report])
        self._scrubber: Any = policy.for_run() if policy is not None else None
        if self._scrubber is not None:
            self._scrubber.teach(read_back)
        self._taught: Callable[[str], str] | None = self._scrubber.scrub if read_back and self._scrubber else None
        #: the original's answer as recorded (masked) and as its run holds it (live, unmasked for a live run)
        self._original = (recording.answer, getattr(run, "answer", recording.answer))

    def shown(self, text: Any) -> Any:
        """A rerun's recorded text masked as the original run masked its own: with every value the original
        learned (a live run), or each value the message given again holds where the recorded one shows a mask."""
        if not isinstance(text, str):
            return text
        if self._masked is not None:
            text = self._masked(text)
        return self._taught(text) if self._taught is not None else text

    def learn(self, recorded: Any) -> None:
        """Read back, from a rerun's recording of the pieces the original's shows masked, what each mask stands for
        there (a loaded run; a live run knows its values), and mask it from now on."""
        if self._original[0] != self._original[1] or not self._masked_pieces:  # a live run knows its values
            return
        found: dict[str, str] = {}
        for piece in getattr(recorded, "context_pieces", ()):
            masked = self._masked_pieces.get((piece.slot, piece.source_id))
            if masked is not None and "[redacted:" not in piece.content:
                found.update(stood_for(piece.content, masked))
        fresh = {value: mask for value, mask in found.items() if value not in self._read_back}
        if fresh and self._scrubber is not None:
            self._read_back.update(fresh)
            self._scrubber.teach(fresh)
            self._taught = self._scrubber.scrub

    def unsure(self, answer: Any, live: Any) -> str | None:
        """Why a rerun's answer (masked as recorded) cannot be compared with the original's, else ``None``.

        A live run knows its values: masked answers that read the same while the live ones differ (two addresses
        masked alike) cannot be judged without showing them. A loaded run does not: masked answers that read the
        same are the same only where each mask stands for a value read back from the message given again; and a
        rerun's answer that differs only where the original shows a key's mask (a value the rerun never learned
        to mask) may be the same value. A pattern's mask stands for itself: the rerun's own policy masks alike."""
        recorded, original = self._original
        if not (isinstance(answer, str) and isinstance(recorded, str)):
            return None
        alike = words(answer) == words(recorded)  # as the default comparator reads them: no punctuation, no case
        if original != recorded:  # a live run: masking changed its answer, inside base64 too
            differ = isinstance(live, str) and isinstance(original, str) and words(live) != words(original)
            return _MASKED_ONLY if alike and differ else None
        if alike and isinstance(live, str) and live != answer:  # a value masked in the rerun's answer: known?
            known = RunScrubber.of_values(self._read_back).scrub(live)
            return None if words(known) == words(answer) else _MASKED_LOADED
        if "[redacted:" not in recorded:
            return None
        masks = PLACEHOLDER.findall(recorded)
        gaps = [mask for mask in masks if mask[len("[redacted:"):-1] not in self._patterns]
        if not gaps:
            return None
        literals, at = [], 0  # the recorded answer cut at each key's mask; a pattern's mask is kept as text
        for found in PLACEHOLDER.finditer(recorded):
            if found.group() in gaps:
                literals.append(recorded[at:found.start()])
                at = found.end()
        literals.append(recorded[at:])
        return _MASKED_LOADED if _fits(answer, literals) else None

    def kept_run(self, result: Any, recorded: Any) -> Any:
        """The rerun's run, kept for the caller to look at, as its recording holds it (a live run's answer holds what
        the policy covers), masked as :meth:`shown` masks (a rerun that never met a secret the original learned would
        hold it); ``None`` when that cannot be made."""
        from footprint_lab.record.by_field import texts
        from footprint_lab.sealing.seal import masked_again

        data = recorded.model_dump(mode="json")
        report = recorded.redaction or {}
        try:
            again = masked_again(data, lambda value: texts(value, self.shown), keys=report.get("keys", ()),
                                 patterns=report.get("patterns", ()))
        except ValueError:
            return None
        rebuilt = getattr(type(result), "from_recording", None)  # its answer as recorded: the live one holds values
        return rebuilt(again or recorded) if callable(rebuilt) else None


#: the kinds of piece a run makes as it goes: never read back from, since a rerun makes its own
_MADE_BY_THE_RUN = frozenset({KIND_ASSISTANT, KIND_TOOL_RESULT, KIND_USER})
#: why a rerun whose answer cannot be judged without the values its policy masks is a failed rerun
_MASKED_ONLY = ("its answer differs from the original only inside values the redaction policy masks, which cannot "
                "be compared without showing them")
#: and what helps for a loaded run, whose learned values are gone
_MASKED_LOADED = f"{_MASKED_ONLY}: localize the live run, or give the original message again as input="


def words(text: str) -> list[str]:
    """``text``'s words as the default comparator (``TextDifference``) reads them: lower-cased, punctuation and
    spacing left out."""
    return _WORD.findall(text.lower())


_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def _fits(text: str, literals: list[str]) -> bool:
    """Whether ``text`` is ``literals`` in order with at least one character between each two, in one walk (the
    leftmost place of each literal leaves the most room for the rest)."""
    first, last = literals[0], literals[-1]
    if not text.startswith(first):
        return False
    at = len(first)
    for literal in literals[1:-1]:
        found = text.find(literal, at + 1)
        if found == -1:
            return False
        at = found + len(literal)
    return len(text) - len(last) >= at + 1 and text.endswith(last)


def stood_for(text: str, masked: str) -> dict[str, str]:
    """What each mask in ``masked`` stands for in ``text`` (value -> mask), when ``text`` reads as ``masked`` does
    in exactly one way. Empty whenever that is not certain: two masks side by side, a stretch between masks found
    more than once (the split could then fall in more than one place), a value shorter than a policy learns (four
    characters), or a value a built-in pattern's mask stands for that the pattern does not match whole (ordinary
    words are never taken for an address). Nothing is masked then, rather than ordinary words."""
    literals, masks = PLACEHOLDER.split(masked), PLACEHOLDER.findall(masked)
    first, last = literals[0], literals[-1]
    if (not masks or not all(literals[1:-1]) or not (text.startswith(first) and text.endswith(last))
            or len(first) + len(last) >= len(text)):
        return {}
    at, end, found = len(first), len(text) - len(last), {}
    for mask, literal in zip(masks, [*literals[1:-1], None], strict=True):
        stop = end if literal is None else text.find(literal, at + 1, end - 1)
        if literal is not None and (stop == -1 or text.find(literal, stop + 1, end - 1) != -1):
            return {}
        value = text[at:stop]
        pattern = BUILTIN_PATTERNS.get(mask[len("[redacted:"):-1])
        if len(value) < 4 or value.strip() != value or (pattern is not None and not re.fullmatch(pattern, value)):
            return {}
        found[value] = mask
        at = stop + (0 if literal is None else len(literal))
    return found
