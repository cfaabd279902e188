"""The scrubber of one run: each value masked as it enters the capture, and each masked value remembered.

Rule kept here: a :class:`RunScrubber` (from ``Redaction.for_run``) masks what the policy covers and
counts the matches. It learns each value it masked, to mask it wherever it shows up again, and sweeps
records captured before a value was learned. A value is learned in one place (``_hold``), which hunts it
in every form the library writes it in (``written_forms``: raw, JSON-escaped, ``repr``-escaped), so each
reader of what was learned (the masking, the sweep, a recall, a notebook's scan) finds it escaped too. A
value too short to hunt alone is held as the pair its key and it make where the library writes them
(``written_pairs``: ``"cvv": "737"``), so the same reader finds it there and nowhere else. JSON text is read
for covered keys as data is (``_read_json``). What is hunted is found in one pass of an
automaton, so a long run's thousands of learned forms cost a text a few passes (``redact.hunt_index``).
The whole policy is described in ``redact.policy``.

Role: redact layer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from footprint_lab.redact._patterns import (
    _BREAK,
    _LEARN_MIN,
    BUILTIN_PATTERNS,
    _Pattern,
    normalize_key,
    written_forms,
    written_pairs,
)
from footprint_lab.redact.base64_words import as_text, base64_words
from footprint_lab.redact.hunt_index import HuntIndex
from footprint_lab.redact.json_text import decoded, json_documents, keyed_spans, may_hold_json
from footprint_lab.redact.masking import WrittenMasks, masked, showing, standing, untouched
from footprint_lab.redact.token_gate import TokenGate

if TYPE_CHECKING:
    from footprint_lab.redact.policy import Redaction


#: Quicker screens for built-ins whose own form makes a search crawl; each matches wherever its pattern
#: does (an email holds ``@domain.tld``; a bearer token starts with the word).
_QUICKER = {
    BUILTIN_PATTERNS["email"]: r"@[A-Za-z0-9.-]+\.[A-Za-z]{2,}",
    BUILTIN_PATTERNS["bearer_token"]: r"(?i:bearer\s+[A-Za-z0-9._~+/-]{16,})",
}


def _screens(patterns: Sequence[_Pattern]) -> tuple[re.Pattern[str] | None, ...]:
    """A quick test per built-in, true wherever it matches, so most text skips the substitutions. A leading
    ``\\b`` is dropped (that only widens a match) so the engine scans for the literal after it. A caller's
    pattern gets ``None``: it is always tried, under its time limit."""
    screens: list[re.Pattern[str] | None] = []
    for pattern in patterns:
        if pattern.bounded:
            screens.append(None)
            continue
        source = _QUICKER.get(pattern.regex.pattern, pattern.regex.pattern)
        screens.append(re.compile(source[2:] if source.startswith("\\b") else source, pattern.regex.flags))
    return tuple(screens)


class RunScrubber:
    """One run's view of a policy: masks values and counts what matched (``Recorder(policy=...)``)."""

    __slots__ = ("_index", "_keys", "_learned", "_masks", "_paired", "_patterns", "_read", "_screens", "_stalled",
                 "_values", "counts", "policy", "prior")

    def __init__(self, policy: Redaction, marks: Mapping[str, Any] | None = None) -> None:
        self.policy = policy
        self._keys = policy._keys
        self._patterns = tuple(policy._by_name.values())
        self._screens = _screens(self._patterns)
        #: each value learned, as it was (value -> mask), and each form of it hunted for (form -> mask)
        self._values: dict[str, str] = {}
        self._learned: dict[str, str] = {}
        self._index = HuntIndex(self._learned)
        self._masks = WrittenMasks([*self._keys.values(), *(pattern.name for pattern in self._patterns)])
        #: each short value learned beside its key, as ``(key, mask, repr, compact)``: its pairs are written once
        self._paired: set[tuple[str, str, str, bool]] = set()
        #: JSON texts read lately (``_read_json``), each with the covered keys it holds (a text is scrubbed often)
        self._read: dict[str, tuple[str, ...]] = {}
        #: each caller's pattern that ran out of its time limit: how often, and on how short a text at the shortest
        self._stalled: dict[str, tuple[int, int]] = {}
        self.counts: dict[str, int] = {}
        self.prior: tuple[str, ...] = tuple((marks or {}).get("matched", ()))

    def scrub(self, value: Any) -> Any:
        """``value`` with every covered part masked; the original is never changed. Mapping keys are
        scrubbed like values (a secret can be a key); a learned value is masked as text or as a number."""
        if isinstance(value, str):
            return self._text(value)
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int | float):
            return self._learned.get(str(value), value) if self._learned else value
        if isinstance(value, dict):
            out: dict[Any, Any] = {}
            for key, item in value.items():
                declared = self._keys.get(normalize_key(key)) if isinstance(key, str) else None
                shown = self._key(key, out)
                if declared is None or item is None:
                    out[shown] = self.scrub(item)
                else:
                    out[shown] = self._mask_key(declared, item, key)
            return out
        if isinstance(value, list | tuple):
            return [self.scrub(item) for item in value]
        if hasattr(value, "model_dump"):
            return self.scrub(value.model_dump(mode="json"))
        # anything else is recorded by its repr (as the Recording would), so scrub that
        return self._text(repr(value))

    def quietly(self, value: Any) -> Any:
        """:meth:`scrub`, counting nothing: for a second surface of records already counted (a checkpoint)."""
        counts = dict(self.counts)
        try:
            return self.scrub(value)
        finally:
            self.counts = counts

    def _key(self, key: Any, taken: dict[Any, Any]) -> Any:
        """A mapping key as it may be recorded (scrubbed like a value)."""
        shown = self.scrub(key) if isinstance(key, str | int | float) and not isinstance(key, bool) else key
        return _distinct(shown, taken)

    def _mask_key(self, declared: str, value: Any, key: str) -> str:
        self._count(f"key:{declared}")
        mask = f"[redacted:{declared}]"
        self._learn(value, mask, key)
        return mask

    def _count(self, name: str, hits: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + hits

    def _learn(self, value: Any, mask: str, key: Any = None, compact: bool = False) -> None:
        """Remember every text and number inside a masked value, to mask it wherever it shows up again; one too
        short to hunt alone (a CVV's ``737``), beside the ``key`` it stands under (``"cvv": "737"``; ``compact``:
        also as compact JSON writes it, ``"cvv":"737"``, for a value read from such JSON text)."""
        if isinstance(value, bool) or value is None:
            return
        if isinstance(value, str | int | float):
            text = str(value)
            if len(text) >= _LEARN_MIN:
                self._hold(text, mask)
            elif text and isinstance(key, str):
                self._pair(key, value, mask, compact)
        elif isinstance(value, dict):
            for inner, item in value.items():
                if not (isinstance(inner, str) and normalize_key(inner) in self._keys):  # a covered key's name: a word
                    self._learn(inner, mask)
                self._learn(item, mask, inner, compact)
        elif isinstance(value, list | tuple | set | frozenset):
            if isinstance(key, str) and isinstance(value, list | tuple) and _short_items(value):
                self._pair(key, value, mask, compact)
            for item in value:
                self._learn(item, mask)
        elif isinstance(value, bytes | bytearray):  # as a reader of it would see it
            self._learn(value.decode("utf-8", "replace"), mask, key, compact)
        elif hasattr(value, "model_dump"):
            self._learn(value.model_dump(mode="json"), mask)

    def _pair(self, key: str, value: Any, mask: str, compact: bool) -> None:
        """Learn ``value``, too short to hunt alone, beside ``key`` as the library writes them (``written_pairs``)."""
        seen = (key, mask, repr(value), compact)
        if seen not in self._paired:
            self._paired.add(seen)
            for pair, shown in written_pairs(key, value, mask, compact=compact).items():
                self._hold(pair, shown, web=False)

    def _hold(self, value: str, mask: str, *, web: bool = True) -> None:
        """Learn ``value``: the one place a value becomes what this scrubber hunts, in each form it may be written
        in (``written_forms``), with its mask written alike. Shorter than ``_LEARN_MIN`` it is not hunted: a CVV's
        ``737`` hunted everywhere would mask every other ``737`` (``_learn`` holds it beside its key instead, as
        ``written_pairs`` writes them). A mask this scrubber writes is no value (text only shaped like one is).
        ``web``: also as a web page and a URL write it (a value's, not a pair's)."""
        if len(value) < _LEARN_MIN or value in self._values or self._masks.written(value):
            return
        self._values[value] = mask
        self._masks.add(mask)
        for form, shown in written_forms(value, mask, web=web).items():
            self._learned.setdefault(form, shown)  # a form of a value learned before keeps its first mask

    @classmethod
    def of_values(cls, secrets: Mapping[str, str]) -> RunScrubber:
        """A scrubber that masks ``secrets`` (value -> mask) alone, as text and inside base64: no key, no pattern.
        What a loaded run can say of a text: which of its values are ones it knows."""
        made = cls.__new__(cls)
        made._keys, made._patterns, made._screens, made.counts, made.prior = {}, (), (), {}, ()
        made._values, made._learned = {}, {}
        made._index, made._paired, made._read, made._stalled = HuntIndex(made._learned), set(), {}, {}
        made._masks = WrittenMasks(())
        made.teach(secrets)
        return made

    def teach(self, secrets: Mapping[str, str]) -> None:
        """Mask ``secrets`` (value -> mask) from the start: what an earlier leg of the conversation learned."""
        for secret, mask in secrets.items():
            self._hold(secret, mask)

    @property
    def learned_count(self) -> int:
        """How many texts this scrubber hunts for (each learned value's forms; it only ever learns more)."""
        return len(self._learned)

    def learned_since(self, count: int) -> list[str]:
        """The texts hunted for after the first ``count``: each value learned since, in each of its forms."""
        return list(self._learned)[count:]

    def share_learning(self, other: RunScrubber) -> None:
        """Share ``other``'s learned values from now on, adding this one's: one run, one set of them."""
        for value, mask in self._values.items():
            other._hold(value, mask)
        for name in self._masks.names:
            other._masks.add(f"[redacted:{name}]")
        self._values, self._learned, self._index = other._values, other._learned, other._index
        self._masks = other._masks

    def known(self) -> dict[str, str]:
        """What this scrubber has learned so far (value -> mask), each value as it was (``teach`` hunts its forms
        again), for the leg that continues its conversation."""
        return dict(self._values)

    @property
    def learned(self) -> bool:
        """Whether any value under a covered key has been seen (and is hunted for elsewhere)."""
        return bool(self._learned)

    def sweep(self, value: Any) -> Any:
        """``value`` with every secret learned so far masked again, counting nothing. The ``Recording`` sweeps
        records captured before a secret was learned, so saved evidence does not depend on the order of events."""
        if not self._learned:
            return value
        if isinstance(value, str):
            return base64_words(self._swept(value), lambda raw: _through(raw, self.sweep), self.knows_any)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return self._learned.get(str(value), value)
        if isinstance(value, dict):
            out: dict[Any, Any] = {}
            for key, item in value.items():
                out[_distinct(self.sweep(key), out)] = self.sweep(item)
            return out
        if isinstance(value, list | tuple):
            return [self.sweep(item) for item in value]
        return value

    def _swept(self, text: str) -> str:
        """``text`` with every value learned so far replaced by its mask (base64 is not read here). A mask already
        written is kept whole and a learned word never nests inside one (``[redacted:args]`` stays when ``args``
        was learned), unless a learned value would be left showing (one that cuts into a mask)."""
        learned, written = self._learned, self._masks.pattern()
        places = standing(text, self._index.spans(text), learned)
        if not places:
            return text
        swept = masked(text, untouched(places, text, written) if "[redacted:" in text else places)
        for _ in range(_SWEEPS):  # a mask can end what a number pair stood against (``"pin": 42`` before ``1234abcd``)
            left = showing(standing(swept, self._index.spans(swept), learned), swept, written)
            if not left:
                break
            swept = masked(swept, left)
        return swept

    def _read_json(self, text: str) -> None:
        """Learn what JSON text holds under a covered key (a tool's result given as JSON text, an argument that is
        JSON text) as if it were given as data, counted as a match each time; the masking then finds it in the text.
        A text read lately is not parsed again."""
        matched = self._read.get(text)
        if matched is None:
            matched = self._json_keys(text)
            if len(text) <= _READ_LONGEST:
                if len(self._read) >= _READ_KEPT:
                    self._read.clear()
                self._read[text] = matched
        for declared in matched:
            self._count(f"key:{declared}")

    def _json_keys(self, text: str) -> tuple[str, ...]:
        """Learn the values under covered keys in JSON text (``json_documents``: lines of JSON, JSON encoded twice,
        objects inside a longer text), and inside JSON text a string of it holds; the keys found (as the policy names
        them), each learned where the text spells it (``_spelled``). Text that holds no JSON holds none (the
        patterns still read it)."""
        keys = self._keys
        found: list[str] = []
        for source, document in json_documents(text):
            stack, covered = [document], document is None
            while stack:
                item = stack.pop()
                if isinstance(item, dict):
                    for key, inner in item.items():
                        declared = keys.get(normalize_key(key))
                        covered = covered or declared is not None
                        if declared is None or inner is None:
                            stack.append(inner)
                        elif not (isinstance(inner, str) and self._masks.written(inner)):  # a mask is no match
                            found.append(declared)  # learned where the text spells it (``_spelled``)
                elif isinstance(item, list):
                    stack.extend(item)
                elif isinstance(item, str) and may_hold_json(item):
                    found.extend(self._json_keys(item))  # each level escapes the quotes of the one inside: a few
            if covered:
                self._spelled(source, _COMPACT.search(source) is not None)
        return tuple(found)

    def _spelled(self, source: str, compact: bool) -> None:
        """Learn each covered key's value in JSON ``source`` as the text spells it (``keyed_spans``), each time the key
        is written: the value as data (a key written twice keeps only its last value once parsed), beside its key
        with the text's own spacing (``{"cvv" : "737"}``, ``1e3``), and each string it holds that an escape spells
        otherwise than ``json.dumps`` would (``\\/``, ``\\u0026``, upper-case hex), on its own (with its quotes when
        it is short: ``"1\\/2"`` is no part of ``"01\\/25\\/2026"``)."""
        named: dict[str, str | None] = {}  # each key as spelled: the name the policy covers it by, or None

        def covered(spelled: str) -> bool:
            if spelled not in named:
                key = decoded(spelled)
                named[spelled] = self._keys.get(normalize_key(key)) if isinstance(key, str) else None
            return named[spelled] is not None

        for span in keyed_spans(source, covered):
            key, mask = decoded(span.key), f"[redacted:{named[span.key]}]"
            literal = source[span.value:span.end]
            if span.strings is None:  # too deep to read: the rest of the text is masked whole (fail closed)
                self._count(f"key:{named[span.key]}")
                self._hold(literal, mask, web=False)
                continue
            value = decoded(literal)
            if value is None or (isinstance(value, str) and self._masks.written(value)):  # nothing, or a mask
                continue
            self._learn(value, mask, key, compact)
            if span.end - span.value <= _SPELLED_LONGEST:
                self._hold(source[span.start:span.end], source[span.start:span.value] + json.dumps(mask), web=False)
            for string in span.strings:
                if "\\" not in string:
                    continue
                if len(str(decoded(string))) >= _LEARN_MIN:
                    self._hold(string[1:-1], json.dumps(mask)[1:-1], web=False)
                else:  # a short one with its quotes: a string of its own, never part of a longer one
                    self._hold(string, json.dumps(mask), web=False)

    def _text(self, text: str) -> str:
        if self._keys and may_hold_json(text):
            self._read_json(text)
        text = self._swept(text) if self._learned else text
        if self.may_match(text):
            for pattern in self._patterns:
                text, hits = self._sub(pattern, text)
                if hits:
                    self._count(f"pattern:{pattern.name}", hits)
        if not (self._patterns or self._learned):
            return text
        # a match may be encoded: a base64 word that reads as text is masked as text and encoded again
        return base64_words(text, lambda raw: _through(raw, self._text), self._covers)

    def _sub(self, pattern: _Pattern, text: str) -> tuple[str, int]:
        """``pattern.sub(text)``, but for a caller's pattern that ran out of its time limit :data:`_STALLS` times in
        this run: a text at least as long as the shortest it ran out on is masked whole untried (fail closed), so a
        pattern that backtracks for ever costs a run a few time limits, not one per text."""
        stalls, shortest = self._stalled.get(pattern.name, (0, 0))
        if stalls >= _STALLS and len(text) >= shortest:
            return pattern.mask, 1
        masked, hits = pattern.sub(text)
        if hits >= 0:
            return masked, hits
        self._stalled[pattern.name] = (stalls + 1, min(shortest, len(text)) if stalls else len(text))
        return masked, 1

    def _covers(self, text: str) -> bool:
        """A quick test, never wrong the safe way: whether a learned value or a pattern may match ``text``."""
        return self.knows_any(text) or self.may_match(text)

    def hits(self, text: str) -> list[tuple[int, int, str]]:
        """Where a pattern or a learned value matches in ``text``: sorted ``(start, end, mask)``, pattern matches
        counted as :meth:`scrub` counts them. For a reader that masks a text mapped from another (``notebook``'s
        reading of HTML entities)."""
        found = standing(text, self._index.spans(text), self._learned)
        if self.may_match(text):
            for pattern in self._patterns:
                spans = pattern.matches(text)
                if spans:
                    self._count(f"pattern:{pattern.name}", len(spans))
                    found.extend((start, end, pattern.mask) for start, end in spans)
        return sorted(found)

    def may_match(self, text: str) -> bool:
        """``False`` only when no pattern of the policy can match ``text`` (a quick test)."""
        return any(screen is None or screen.search(text) for screen in self._screens)

    def knows_any(self, text: str) -> bool:
        """``True`` when ``text`` holds a value this scrubber has masked under a key."""
        return bool(self._index.present(text))

    def _present(self, text: str) -> list[str]:
        """The learned forms ``text`` holds."""
        return self._index.present(text)

    def token_gate(self, emit: Callable[[str], None]) -> tuple[Callable[[str], None], Callable[[], None]]:
        """``(feed, flush)`` for a streamed reply: text reaches ``emit`` scrubbed, cut only where no match can
        straddle (see ``TokenGate``)."""
        gate = TokenGate(self, emit)
        return gate.feed, gate.flush

    def safe_cut(self, text: str) -> int:
        """The longest prefix of ``text`` that ends at a whitespace break, is followed by a whole word, and is
        crossed by no covered match (0 when there is none)."""
        breaks = [m.start() for m in _BREAK.finditer(text)][:-1]
        if not breaks:
            return 0
        found = {p: p.spans(text) for p in self._patterns if p.spans_breaks}
        spans = [span for hits in found.values() for span in hits]
        # a caller's pattern that matches here may read around its match (see _cuts_alike); one that
        # matches nothing whole can only mask more once cut
        reading = [p for p, hits in found.items() if p.bounded and hits]
        for secret in self._present(text):
            if not any(char.isspace() for char in secret):
                continue  # a value without whitespace cannot straddle a cut at whitespace
            at = text.find(secret)
            while at != -1:
                spans.append((at, at + len(secret)))
                at = text.find(secret, at + 1)
        # the start of a value may be what the text ends with: the rest may be on its way
        arriving = self._index.arriving(text)
        if arriving:
            spans.append((len(text) - arriving, len(text)))
        for cut in reversed(breaks):
            if cut and all(not start < cut < end for start, end in spans) and _cuts_alike(reading, text, cut):
                return cut
        return 0

    def matched(self) -> list[str]:
        """Every key and pattern that matched, in this leg or an earlier one of its conversation."""
        return sorted({*self.prior, *self.counts})

    def marks(self) -> dict[str, list[str]]:
        """What the policy covered: the keys and pattern names in force, and the names that matched."""
        return {"keys": list(self.policy.keys), "patterns": list(self.policy.patterns), "matched": self.matched()}

    def report(self) -> dict[str, Any]:
        """The redaction report a ``Recording`` carries: what was in force and what matched, with counts."""
        return {**self.marks(), "counts": dict(sorted(self.counts.items()))}


def _short_items(items: list[Any] | tuple[Any, ...]) -> bool:
    """Whether ``items`` are texts and numbers, one too short to hunt alone (not empty: that shows nothing): the
    list is written whole beside its key (``"pins": [12, 34]``)."""
    return all(item is None or isinstance(item, str | int | float) for item in items) and any(
        0 < len(str(item)) < _LEARN_MIN for item in items if item is not None and not isinstance(item, bool))


#: JSON text read (``_read_json``) is remembered up to this many texts, each up to this long
_READ_KEPT, _READ_LONGEST = 128, 16_384
#: how many times a swept text is looked at again for a learned value its masks left standing
_SWEEPS = 3
#: how often a caller's pattern may run out of its time limit in a run before it is not tried on as long a text
_STALLS = 3
#: the longest value a key's spelled pair is learned with: a longer one is hunted by its own texts
_SPELLED_LONGEST = 200
#: a key written as compact JSON writes it: no space after its colon
_COMPACT = re.compile(r'":[^ ]')


def _through(raw: bytes, mask: Any) -> bytes | None:
    """Decoded base64 that reads as text, masked by ``mask``; ``None`` when it is binary or nothing changed."""
    text = as_text(raw)
    if text is None:
        return None
    masked = mask(text)
    return None if masked == text else masked.encode("utf-8")


def _cuts_alike(patterns: list[_Pattern], text: str, cut: int) -> bool:
    r"""Whether a caller's patterns mask ``text`` cut at ``cut`` as they mask it whole: a look-around may read
    across the cut (``(?<=pin: )\d+``) though no match crosses it. Built-ins' look-arounds read one character
    beside a match, never whitespace, so they always do."""
    head, tail = text[:cut], text[cut:]
    return all(p.sub(head)[0] + p.sub(tail)[0] == p.sub(text)[0] for p in patterns)


def _distinct(key: Any, taken: dict[Any, Any]) -> Any:
    """``key``, or ``key#2``, ``key#3``...: two keys masked alike must stay two entries."""
    if key not in taken:
        return key
    n = 2
    while f"{key}#{n}" in taken:
        n += 1
    return f"{key}#{n}"
