"""Redaction: values a policy covers never enter a record, an event or a view.

Rule kept here: a :class:`Redaction` names what to keep out: values under certain keys, and text
matching named patterns. The recorder applies it to each value *as it enters the capture*, so no
reader (a live listener, the ``Recording``, a DataFrame, a view, an exported notebook) sees it. The
live run keeps the real values, so the model and the tools still get what they need.

- ``keys`` mask the whole value under a matching mapping key, compared folded (:func:`normalize_key`:
  case, width, separators and invisible characters do not count); a key that folds to nothing is
  refused. Each text and number inside a masked value is learned, and masked wherever it shows up again;
  one too short to hunt alone (a CVV's ``737``), only beside its key (``"cvv": "737"``), so other digits stay.
  JSON text (a whole string that is JSON) is read as the data it writes. A record's own field names are not
  keys: a record is masked field by field (``record.by_field``).
- Shape never lets a value through: mapping keys are scrubbed like values (two keys masked alike stay
  two: ``#2``); data captured only as text is read by the policy first (``Recorder.learn``); records
  captured before a secret was learned are swept when the ``Recording`` is built. A live event already
  sent is taken back by a ``recall`` event naming it by ``seq``, with its payload masked (never the value).
- ``patterns`` are named regular expressions: a list is named for its content (``custom-<hash>``), a
  mapping names its own, ``builtins`` picks from :data:`BUILTIN_PATTERNS`. A match becomes
  ``[redacted:<name>]``. A caller's pattern runs under a time limit, past which the text is masked whole.
- Each run gets a :class:`RunScrubber`. Its counts become the ``Recording``'s redaction report and a
  checkpoint's redaction marks, and it masks checkpoints too. What it learned carries into the next leg
  of a conversation (``teach``) and is shared across a composition (``share_learning``).
- Streamed tokens pass the token gate, which releases no text that a match may cross.

A policy travels in a checkpoint as data (:meth:`Redaction.to_data`): keys, and each pattern by name and
fingerprint. A pattern is never compiled from that data: a checkpoint can come from anywhere, and a
pattern built to hang the matcher would run on every value. :func:`policy_from_data` only looks names up
among patterns this side already holds.

Role: redact layer. Knows nothing about agents; the conversation doors turn a :class:`PolicyDataError`
into a refusal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from footprint_lab.base.refusal import describe_shape
from footprint_lab.redact._patterns import (
    _NAME,
    BUILTIN_PATTERNS,
    PATTERN_TIME_LIMIT,
    PLACEHOLDER,
    STANDARD_KEYS,
    PolicyDataError,
    RedactionConfigError,
    _Pattern,
    fingerprint,
    normalize_key,
)
from footprint_lab.redact.scrubber import RunScrubber

__all__ = ["BUILTIN_PATTERNS", "PATTERN_TIME_LIMIT", "PLACEHOLDER", "POLICY_FORMAT", "STANDARD_KEYS",
           "PolicyDataError", "Redaction", "RedactionConfigError", "RunScrubber", "combine_policies", "fingerprint",
           "normalize_key", "policy_from_data", "policy_from_reports"]

#: The marker a policy written into a checkpoint carries, so a reader knows it is ours.
POLICY_FORMAT = "footprint_lab.redaction/1"

class Redaction:
    """What to keep out of every record: values under ``keys``, text matching ``patterns``.

    ``Redaction(keys=["password"], patterns=[r"sk-[A-Za-z0-9]{20,}"])``,
    ``Redaction(patterns={"ticket": r"TCK-\\d{6}"}, builtins=["email"])`` or
    ``Redaction.standard()`` (the common secret keys and every built-in pattern).
    """

    __slots__ = ("_by_name", "_keys", "keys", "patterns")

    def __init__(
        self,
        *,
        keys: Iterable[str] = (),
        patterns: Sequence[str | re.Pattern[str]] | Mapping[str, str | re.Pattern[str]] = (),
        builtins: Iterable[str] = (),
    ) -> None:
        if isinstance(keys, str) or not isinstance(keys, Iterable):
            raise RedactionConfigError("keys", describe_shape(keys), "must be a list of key names")
        key_list = list(keys)
        for key in key_list:
            if not isinstance(key, str) or not key.strip():
                raise RedactionConfigError("keys", describe_shape(key), "must hold non-empty strings")
            if not normalize_key(key):
                raise RedactionConfigError("keys", "a key of only spaces, dashes, underscores, dots or invisible "
                                           "characters", "must hold key names with a letter or digit in each")
        compiled = [_Pattern(name, regex) for name, regex in _named_patterns(patterns)]
        if isinstance(builtins, str) or not isinstance(builtins, Iterable):
            raise RedactionConfigError("builtins", describe_shape(builtins), "must be a list of built-in names")
        for name in builtins:
            if not isinstance(name, str) or name not in BUILTIN_PATTERNS:
                raise RedactionConfigError(
                    "builtins", describe_shape(name),
                    f"must name built-in patterns; the library has: {', '.join(sorted(BUILTIN_PATTERNS))}",
                )
            compiled.append(_Pattern(name, re.compile(BUILTIN_PATTERNS[name]), builtin=True))
        self._setup(key_list, compiled)
        if not self.keys and not self.patterns:
            raise RedactionConfigError(
                "keys", "no keys and no patterns",
                "and 'patterns' are both empty, so the policy would cover nothing; name at least one, "
                "or leave redact out",
            )

    def _setup(self, keys: list[str], patterns: list[_Pattern]) -> None:
        by_name: dict[str, _Pattern] = {}
        for pattern in patterns:
            known = by_name.get(pattern.name)
            if known is not None and known.fingerprint != pattern.fingerprint:
                raise RedactionConfigError(
                    "patterns", "two different patterns under one name",
                    "must give each name one pattern; rename one of them",
                )
            by_name[pattern.name] = pattern
        self.keys: tuple[str, ...] = tuple(dict.fromkeys(keys))
        self._keys = {normalize_key(k): k for k in self.keys}
        self.patterns: tuple[str, ...] = tuple(by_name)
        self._by_name = by_name

    @classmethod
    def standard(cls) -> Redaction:
        """The common secret-bearing keys and every built-in pattern."""
        return cls(keys=STANDARD_KEYS, builtins=BUILTIN_PATTERNS)

    @classmethod
    def _of(cls, keys: Iterable[str], patterns: Iterable[_Pattern]) -> Redaction:
        policy = cls.__new__(cls)
        policy._setup(list(keys), list(patterns))
        return policy

    def union(self, *others: Redaction | None) -> Redaction:
        """A policy covering everything this one and ``others`` cover."""
        keys = list(self.keys)
        patterns = list(self._by_name.values())
        for other in others:
            if other is not None:
                keys.extend(other.keys)
                patterns.extend(other._by_name.values())
        return Redaction._of(keys, patterns)

    def covers(self, other: Redaction) -> bool:
        """``True`` when this policy masks all ``other`` masks: its keys, and its patterns by name and source."""
        return set(other.keys) <= set(self.keys) and all(
            self.find(name, pattern.fingerprint) is not None for name, pattern in other._by_name.items()
        )

    def to_data(self) -> dict[str, Any]:
        """The policy as plain data: keys, and each pattern by name and fingerprint (never its source)."""
        return {
            "format": POLICY_FORMAT,
            "keys": list(self.keys),
            "patterns": [{"name": p.name, "fingerprint": p.fingerprint} for p in self._by_name.values()],
        }

    def find(self, name: str, print_: str) -> _Pattern | None:
        pattern = self._by_name.get(name)
        return pattern if pattern is not None and pattern.fingerprint == print_ else None

    def for_run(self, marks: Mapping[str, Any] | None = None) -> RunScrubber:
        """A scrubber for one run (it counts what matched; ``marks`` carries earlier legs' matches)."""
        return RunScrubber(self, marks)

    def __repr__(self) -> str:
        return f"Redaction(keys={list(self.keys)!r}, patterns={list(self.patterns)!r})"


def combine_policies(*policies: Redaction | None) -> Redaction | None:
    """One policy covering everything each given policy covers; ``None`` when none is given."""
    present = [p for p in policies if p is not None]
    if not present:
        return None
    return present[0] if len(present) == 1 else present[0].union(*present[1:])


def _named_patterns(
    patterns: Sequence[str | re.Pattern[str]] | Mapping[str, str | re.Pattern[str]],
) -> list[tuple[str, re.Pattern[str]]]:
    if isinstance(patterns, str) or not isinstance(patterns, Sequence | Mapping):
        raise RedactionConfigError(
            "patterns", describe_shape(patterns), "must be a list of regular expressions or a dict name -> regex"
        )
    items: list[tuple[str | None, Any]] = (
        list(patterns.items()) if isinstance(patterns, Mapping) else [(None, p) for p in patterns]
    )
    named: list[tuple[str, re.Pattern[str]]] = []
    for name, source in items:
        if name is not None and (not isinstance(name, str) or not _NAME.match(name)):
            raise RedactionConfigError(
                "patterns", describe_shape(name),
                "names must start with a letter and hold up to 64 letters, digits, '_', '.' or '-'",
            )
        if isinstance(source, re.Pattern):
            regex = source
        elif isinstance(source, str) and source:
            try:
                regex = re.compile(source)
            except re.error:
                raise RedactionConfigError(
                    "patterns", "a string that is not a valid regular expression", "must hold valid regular expressions"
                ) from None
        else:
            raise RedactionConfigError(
                "patterns", describe_shape(source), "must hold non-empty regular expression strings"
            )
        if not isinstance(regex.pattern, str):
            raise RedactionConfigError("patterns", "a bytes pattern", "must hold text (str) patterns")
        if regex.search("") is not None:
            raise RedactionConfigError(
                "patterns", "a pattern that matches the empty string", "must hold patterns that need some text to match"
            )
        named.append((name or f"custom-{fingerprint(regex.pattern, regex.flags)[:8]}", regex))
    return named


def policy_from_data(data: Any, *sources: Redaction | None) -> Redaction:
    """Rebuild a carried policy from its data, taking each pattern by name from ``sources`` (the policies
    this side holds: the agent's, one passed to a resume), then from the built-ins. Raises
    :class:`PolicyDataError`: ``unreadable`` (not data this module wrote) or ``unknown-pattern``."""
    if not isinstance(data, dict) or set(data) != {"format", "keys", "patterns"} or data["format"] != POLICY_FORMAT:
        raise PolicyDataError("unreadable")
    keys, refs = data["keys"], data["patterns"]
    if not isinstance(keys, list) or not all(isinstance(k, str) and k.strip() for k in keys):
        raise PolicyDataError("unreadable")
    if not isinstance(refs, list) or (not keys and not refs):
        raise PolicyDataError("unreadable")
    names: set[str] = set()
    for ref in refs:
        if (
            not isinstance(ref, dict) or set(ref) != {"name", "fingerprint"}
            or not isinstance(ref["name"], str) or not isinstance(ref["fingerprint"], str)
            or ref["name"] in names
        ):
            raise PolicyDataError("unreadable")
        names.add(ref["name"])
    library = _library()
    patterns: list[_Pattern] = []
    for ref in refs:
        found = None
        for source in (*sources, library):
            if source is not None and (found := source.find(ref["name"], ref["fingerprint"])) is not None:
                break
        if found is None:
            raise PolicyDataError("unknown-pattern")
        patterns.append(found)
    return Redaction._of(keys, patterns)


def policy_from_reports(reports: Iterable[Any]) -> Redaction | None:
    """The keys and built-in patterns of the policies recordings were made under, from their redaction
    reports (a caller's pattern is reported by name only, so it is lost). ``None`` when there are neither."""
    keys: set[str] = set()
    names: set[str] = set()
    for report in reports:
        if isinstance(report, Mapping):
            keys.update(k for k in report.get("keys") or () if isinstance(k, str) and k.strip())
            names.update(n for n in report.get("patterns") or () if isinstance(n, str) and n in BUILTIN_PATTERNS)
    return Redaction(keys=sorted(keys), builtins=sorted(names)) if keys or names else None


_LIBRARY: list[Redaction] = []


def _library() -> Redaction:
    if not _LIBRARY:
        _LIBRARY.append(Redaction(builtins=BUILTIN_PATTERNS))
    return _LIBRARY[0]
