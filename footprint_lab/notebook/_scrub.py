"""Safe to share: find and mask what a redaction policy covers anywhere in a notebook.

Rule kept here: after ``scrub(path, redact=policy)``, ``scan(path, redact=policy)`` is empty,
and every recording the notebook carries still loads and explains. Both run the one walk of
``_walk`` over every corner of the notebook (its metadata and widget state, every cell's
source, metadata and attachments, every output's text, error, metadata and data under every
MIME type), and read each string through every layer it may hide text in (JSON text, base64
payloads and PNG text chunks, and what a reader sees: HTML entities, comments, tags, ANSI codes,
characters drawn as nothing, direction overrides); ``scan`` reports what
it would change (cell, output, the part, the field path inside it, the names that matched,
never the values) and ``scrub`` writes the masked copy. The walk runs twice with one scrubber,
so a value first seen under a covered key (``password``) is masked wherever else it appears,
before or after. An output whose sealed recording holds what it displays (``sealing.output_seal``)
and was masked is bound to its masked display again, the policy named in the seal.

An embedded recording is masked as data with its tables read back to records (so a field's name is a key, never
a value a learned word could match; references to messages stay as written), then validated again and packed
back; where a word learned from a masked value renamed a field, it is masked again with the records' field names
kept (a secret that is a key in the run's own data is still masked). Its pieces' content hashes
are recomputed, and its redaction report gains the policy's keys and pattern names (so a
replay masks live requests the same way). Should key masking break the schema, only its
text is masked. A sealed recording is sealed again after masking, its seal naming the policy's
keys and patterns (``seal.scrubbed``), so a reviewer sees the evidence was changed on purpose.
A recording of a newer schema version is masked as plain data and left unsealed by this library
(its format is the newer footprint_lab's to keep). JSON text in the notebook that nests deeper
than ``base.saved_json.MAX_NESTING`` levels is refused (what it holds under a covered key
could not be learned, so a scan that went on would say clean while it is not).

``check_widget_state`` reports saved widget state that GitHub's renderer cannot show (the
``state`` key missing, a displayed widget whose model was not saved) or that bloats the file
(one widget over 1 MB).

Role: lab layer (``footprint_lab.notebook``).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import os
import re
from collections.abc import Callable
from typing import Any, NamedTuple, cast

from footprint_lab.base.refusal import describe_shape
from footprint_lab.base.saved_json import MAX_NESTING, NestingTooDeep, parse_json
from footprint_lab.notebook._png_text import PNG_SIGNATURE, png_texts
from footprint_lab.notebook._unhidden import MARKDOWN, MARKS_KEPT, unhidden
from footprint_lab.notebook._walk import Layer, Spot, holds_recording_text, walk
from footprint_lab.notebook._walk import value as walked
from footprint_lab.notebook.read import (
    MAX_SWEEP_BYTES,
    NotebookFileError,
    SharingConfigError,
    as_path,
    output_path,
    outputs,
    read_notebook,
    widget_state,
    write_notebook,
)
from footprint_lab.record.by_field import by_field
from footprint_lab.record.recording import Recording
from footprint_lab.record.saved_form import packed, unpacked
from footprint_lab.record.schema import READABLE_VERSIONS, SCHEMA_VERSION
from footprint_lab.redact.base64_words import as_text, base64_words, decoded, decoded_words, encoded, whole_word
from footprint_lab.redact.policy import Redaction, RunScrubber, normalize_key
from footprint_lab.sealing.output_seal import bind_display, display_verdict, held_digests, holds_display
from footprint_lab.sealing.seal import masked_again

#: A single widget's saved state over this many bytes is reported by :func:`check_widget_state`.
WIDGET_LIMIT = 1_000_000
_WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"
_LEARNED = "a value first seen under a covered key"


class ScanFinding(NamedTuple):
    """One place a policy still matches: ``cell`` and ``output`` indices (``None`` for notebook metadata),
    ``where`` in it (``source``, ``text``, ``error``, ``data[text/html]``, ``recording``, ``attachments``,
    ``cell metadata``, ``output metadata``, ``metadata``, ``widget <id>``...), ``matched``, the key and
    pattern names that matched there, and ``path``, the field inside that part (keys, list indices,
    and the layers read through, such as ``(base64)`` or ``(JSON text)``; a key is shown only when it
    is a plain name no policy would mask). Never the value."""

    cell: int | None
    output: int | None
    where: str
    matched: tuple[str, ...]
    path: str = ""

    def __str__(self) -> str:
        inside = f" at {self.path}" if self.path else ""
        return f"{_place(self.cell, self.output)}, {self.where}{inside}: {', '.join(self.matched)}"


def _place(cell: int | None, output: int | None) -> str:
    """Where in a notebook, by index only (``cell 3, output 0``, or its metadata)."""
    if cell is None:
        return "notebook metadata"
    return f"cell {cell}" + ("" if output is None else f", output {output}")


class WidgetStateProblem(NamedTuple):
    """Saved widget state that breaks a renderer or bloats the file: ``problem`` is ``missing-state``,
    ``missing-model`` or ``too-large``; ``widget`` the model id (when one is at fault); ``size`` in bytes."""

    problem: str
    widget: str | None = None
    size: int | None = None


def check_policy(function: str, redact: Any) -> Redaction:
    if not isinstance(redact, Redaction):
        raise SharingConfigError(function, "redact", describe_shape(redact),
                                 "must be a Redaction, e.g. Redaction.standard() or Redaction(keys=['password'])")
    return redact


def scan(path: str | os.PathLike[str], *, redact: Redaction) -> list[ScanFinding]:
    """Every place in the notebook at ``path`` that ``redact`` would still mask, in file order."""
    policy = check_policy("scan", redact)
    return sweep(read_notebook(path, limit=MAX_SWEEP_BYTES), policy, write=False, argument="path")


def scrub(path: str | os.PathLike[str], *, redact: Redaction,
          out: str | os.PathLike[str] | None = None) -> list[ScanFinding]:
    """Mask what ``redact`` covers everywhere in the notebook; writes ``out`` (or the file itself, when it changed).

    Returns what was masked (as :func:`scan` would have listed it).
    """
    policy = check_policy("scrub", redact)
    target = output_path(out, "out") if out is not None else None
    notebook = read_notebook(path, limit=MAX_SWEEP_BYTES)
    found = sweep(notebook, policy, write=True, argument="path")
    if found or target is not None:  # a clean notebook is left as it is (a pre-commit hook sees no change)
        write_notebook(notebook, target or as_path(path), "path" if target is None else "out")
    return found


def check_widget_state(path: str | os.PathLike[str]) -> list[WidgetStateProblem]:
    """What in the notebook's saved widget state would break GitHub's renderer or bloat the file."""
    notebook = read_notebook(path)
    problems: list[WidgetStateProblem] = []
    widgets = notebook.get("metadata", {}).get("widgets")
    block = widget_state(notebook)
    if widgets is not None and (block is None or not isinstance(block.get("state"), dict)):
        problems.append(WidgetStateProblem("missing-state"))
    saved = block.get("state") if block is not None else None
    state: dict[str, Any] = saved if isinstance(saved, dict) else {}
    for model_id, model in state.items():
        size = len(json.dumps(model, ensure_ascii=False).encode("utf-8"))
        if size > WIDGET_LIMIT:
            problems.append(WidgetStateProblem("too-large", str(model_id), size))
    for _, _, output in outputs(notebook):
        view = (output.get("data") or {}).get(_WIDGET_VIEW_MIME) if isinstance(output.get("data"), dict) else None
        if isinstance(view, dict) and view.get("model_id") not in state:
            problems.append(WidgetStateProblem("missing-model", str(view.get("model_id"))))
    return problems


# -- the sweep ------------------------------------------------------------------------------
def sweep(notebook: dict[str, Any], policy: Redaction, *, write: bool, argument: str) -> list[ScanFinding]:
    """Every place ``policy`` matches in notebook data; with ``write``, masked in place.

    Two walks with one scrubber: the first only learns the values under covered keys (so the
    second masks them wherever else they appear, before or after). JSON text in the notebook
    nested deeper than ``MAX_NESTING`` levels is refused (a ``NotebookFileError`` for
    ``argument``, naming the place): what it holds under a covered key could not be learned.
    """
    scrubber = _RepeatScrubber(policy)
    walk(notebook, _Pass(scrubber, policy, learn=True, argument=argument))
    found = _Pass(scrubber, policy, learn=False, argument=argument)
    masked = walk(notebook, found)
    if write and found.findings:
        held = _displays_held(notebook)
        notebook.update(masked)
        _bind_again(notebook, held, {(f.cell, f.output) for f in found.findings}, policy)
    return found.findings


def _displays_held(notebook: dict[str, Any]) -> dict[tuple[int, int], tuple[bool, dict[str, str]]]:
    """Per output whose sealed recording holds what it displays: whether it still displays that, and the digests."""
    return {(cell, index): (display_verdict(output["data"]) is None, held_digests(output["data"]))
            for cell, index, output in outputs(notebook)
            if isinstance(output.get("data"), dict) and holds_display(output["data"])}


def _bind_again(notebook: dict[str, Any], held: dict[tuple[int, int], tuple[bool, dict[str, str]]],
                changed: set[tuple[int | None, int | None]], policy: Redaction) -> None:
    """After a scrub, each output that displayed what its seal held and was masked holds its masked
    display, the policy named in the seal (changed on purpose); one edited before keeps the digests
    it held (a recording sealed again by the scrub too), so ``verify`` still calls it broken."""
    names = sorted({*policy.keys, *policy.patterns})
    for cell, index, output in outputs(notebook):
        if (cell, index) not in held or (cell, index) not in changed:
            continue
        intact, digests = held[(cell, index)]
        output["data"] = bind_display(output["data"], scrubbed=names, digests=None if intact else digests)


class _RepeatScrubber(RunScrubber):
    """A scrubber that masks each distinct text once per notebook: a notebook repeats the same
    texts (field names, prompts, tool results) in every recording, event and view.

    A repeat gets the masked text of its first sighting and counts its matches again, so what
    is masked and what is counted are as without the memo; the memo starts over whenever the
    scrubber learns a new value under a covered key (a text masked before may hold it).
    """

    __slots__ = ("_memo", "_memo_learned")

    def __init__(self, policy: Redaction) -> None:
        super().__init__(policy)
        self._memo: dict[str, tuple[str, tuple[tuple[str, int], ...]]] = {}
        self._memo_learned = 0

    def scrub(self, value: Any) -> Any:
        if not isinstance(value, str):
            return super().scrub(value)
        if len(self._learned) != self._memo_learned:
            self._memo.clear()
            self._memo_learned = len(self._learned)
        counts = self.counts
        hit = self._memo.get(value)
        if hit is None:
            before = dict(counts)
            masked = super().scrub(value)
            hit = masked, tuple((n, c - before.get(n, 0)) for n, c in counts.items() if c != before.get(n, 0))
            self._memo[value] = hit
            return masked
        for name, added in hit[1]:
            counts[name] = counts.get(name, 0) + added
        return hit[0]


class _Pass:
    """One walk over a notebook (``_walk.walk``): each value masked, and each place that changed noted."""

    def __init__(self, scrubber: RunScrubber, policy: Redaction, *, learn: bool, argument: str) -> None:
        self.scrubber = scrubber
        self.policy = policy
        self.learn = learn
        self.argument = argument
        self.findings: list[ScanFinding] = []
        self._keys = {normalize_key(key) for key in policy.keys}
        self._encodings: tuple[re.Pattern[str], dict[str, str]] | None = None
        self._encodings_at = 0

    # -- what the walk hands over --
    def covers(self, key: str) -> bool:
        return _folded(key) in self._keys

    def keyed(self, key: str, value: Any, spot: Spot) -> Any:
        # the value alone: the key may be renamed (a learned word), and the walk shows the key itself
        return self._noted(spot, lambda: next(iter(self.scrubber.scrub({key: value}).values())), value)

    def number(self, value: int | float, spot: Spot) -> Any:
        return self._noted(spot, lambda: self.scrubber.scrub(value), value)

    def text(self, value: str, spot: Spot) -> str:
        masked: str = self._noted(spot, lambda: self._text(value, spot), value)
        return masked

    def recording(self, value: Any, spot: Spot) -> Any:
        if self.learn:
            self._learn(value, spot)
            return value
        return self._noted(spot, lambda: self._recording(value), value)

    def keeps(self, text: str) -> bool:
        return bool(self.scrubber.quietly(text) == text)

    # -- inside --
    def _noted(self, spot: Spot, mask: Callable[[], Any], original: Any) -> Any:
        """``mask()``, noted as a finding at ``spot`` when it changed something no finding deeper names."""
        before, noted = dict(self.scrubber.counts), len(self.findings)
        masked = mask()
        if masked == original:
            return original
        if len(self.findings) == noted:
            counts = self.scrubber.counts
            names = tuple(sorted(n for n in counts if counts[n] != before.get(n, 0))) or (_LEARNED,)
            self.findings.append(ScanFinding(spot.cell, spot.output, spot.where, names, self._path(spot.path)))
        return masked

    def _text(self, value: str, spot: Spot) -> str:
        """A string read through every layer it may hide text in: JSON, base64, what a reader sees."""
        if value.lstrip()[:1] in ("{", "["):
            data = self._json(value, spot)
            if data is not None:
                if holds_recording_text(value):  # learned from and masked as a recording, given back as text
                    return cast("str", self.recording(value, spot))
                new = walked(data, spot.through("JSON text"), self)
                return value if new is data else json.dumps(new, ensure_ascii=False)
        raw = decoded(value)
        if raw is not None:
            new_raw = self._payload(raw, spot)
            if new_raw is not None:
                return encoded(new_raw, value)
        # base64 words first, each named as read through base64 (the scrubber reads them too, unnamed)
        value = base64_words(value, lambda payload: self._payload(payload, spot))
        value = unhidden(self.scrubber.scrub(value), self.scrubber.hits, spot.reading)
        if spot.reading == MARKDOWN:  # emphasis marks are drawn where they open nothing (inside a word, alone)
            value = unhidden(value, self.scrubber.hits, MARKS_KEPT)
        encodings = self._learned_encodings()
        return value if encodings is None else encodings[0].sub(lambda found: encodings[1][found.group()], value)

    def _learned_encodings(self) -> tuple[re.Pattern[str], dict[str, str]] | None:
        """What finds, as a whole word, each learned value's own base64 (padded or not), and each one's mask.

        A base64 word is read only from 16 characters on, and without its padding only at a length of a
        multiple of 4 (``redact.base64_words``): a short password's base64, or a longer one's with its padding cut,
        is found here. A form that reads as a plain word (one case of letters: ``VERBOSE``) is left, so that
        ordinary text is never masked for it."""
        if self._encodings_at != self.scrubber.learned_count:
            self._encodings_at = self.scrubber.learned_count
            forms: dict[str, str] = {}
            for secret, mask in self.scrubber.known().items():
                written = base64.b64encode(secret.encode("utf-8", "surrogatepass")).decode("ascii")
                for form in (written, written.rstrip("=")):
                    if not _PLAIN_WORD.fullmatch(form):
                        forms.setdefault(form, mask)
            longest_first = sorted(forms, key=len, reverse=True)
            self._encodings = (whole_word("|".join(map(re.escape, longest_first))), forms) if forms else None
        return self._encodings

    def _payload(self, raw: bytes, spot: Spot) -> bytes | None:
        """Decoded base64, masked: a PNG's text chunks, or bytes that read as text; ``None`` when unchanged."""
        if raw.startswith(PNG_SIGNATURE):
            return png_texts(raw, lambda text, label: self.text(text, spot.through(f"base64, {label}")))
        text = as_text(raw)
        if text is None:
            return None
        new = self.text(text, spot.through("base64"))
        return None if new == text else new.encode("utf-8")

    def _json(self, value: str, spot: Spot) -> Any:
        try:
            data = parse_json(value)
        except NestingTooDeep:
            raise NotebookFileError(self.argument, "too-deep", f"JSON text nested deeper than {MAX_NESTING} "
                                    f"levels, in {_place(spot.cell, spot.output)}") from None
        except ValueError:
            return None
        return data if isinstance(data, dict | list) else None

    def _path(self, path: tuple[Any, ...]) -> str:
        """The field path, each key shown only when it is a plain name no policy would mask."""
        shown = []
        for step in path:
            text = str(step)
            plain = isinstance(step, int | Layer) or (_PLAIN.fullmatch(text) is not None
                                              and self.scrubber.quietly(text) == text)
            shown.append(text if plain else "<key>")
        return ".".join(shown)

    def _learn(self, value: Any, spot: Spot) -> None:
        """Show the scrubber every value under a covered key in a recording (its fields walked by what they hold)."""
        try:
            data = _unpacked(value)
        except NestingTooDeep:
            data = None
        except ValueError:  # not JSON: learned from as text
            data = value
        try:
            if _readable(data):
                by_field(data, lambda item: _learn(item, self.scrubber, self._keys), Recording)
            else:
                _learn(value if data is None else data, self.scrubber, self._keys)
        except NestingTooDeep:
            raise NotebookFileError(self.argument, "too-deep", f"JSON text nested deeper than {MAX_NESTING} "
                                    f"levels, in {_place(spot.cell, spot.output)}") from None

    def _recording(self, value: Any) -> Any:
        """An embedded recording masked as the run masks it (``record.by_field``: what each field holds, never
        a field by its name), still a valid recording (hashes and report updated, sealed again when it was
        sealed). One of a newer schema version, or one that no longer fits its schema once masked, is masked as
        plain data. The scrubber reads its strings through base64 too (an encoded credential in a tool result)."""
        try:
            data = _unpacked(value)
        except (ValueError, NestingTooDeep):
            return self.scrubber.scrub(value)
        if not _may_match(data, self.policy, self.scrubber):
            return value
        if not _readable(data):  # not a recording this library reads: masked as plain data
            masked = self.scrubber.scrub(data)
            return value if masked == data else _as_given(value, masked)
        try:
            recording = masked_again(data, self.scrubber.scrub, keys=self.policy.keys, patterns=self.policy.patterns)
        except ValueError:  # no longer a recording once masked: masked as plain data
            return _as_given(value, self.scrubber.scrub(data))
        if recording is None:
            return value
        # given as JSON text (a widget trait), given back as JSON text
        return recording.model_dump_json() if isinstance(value, str) else packed(recording)


#: base64 that reads as an ordinary word (letters of one case), which a learned value's base64 may happen to spell
_PLAIN_WORD = re.compile(r"[A-Z]+|[a-z]+")
#: a key shown in a finding's path as it is: a short plain name
_PLAIN = re.compile(r"[A-Za-z0-9_./:+@ -]{1,60}")


#: a notebook repeats a few dozen keys thousands of times: fold each once
_folded = functools.lru_cache(maxsize=4096)(normalize_key)


def _may_match(data: Any, policy: Redaction, scrubber: RunScrubber) -> bool:
    """A cheap, never-wrong-way check on a recording's data: ``False`` only when nothing in it can match."""
    texts: list[str] = []
    keys: set[str] = set()
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, dict):
            keys.update(_folded(k) for k in value if isinstance(k, str))
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    if any(normalize_key(key) in keys for key in policy.keys):
        return True
    text = "\n".join(texts)  # a match across two joined strings only costs a full pass, never a miss
    if scrubber.knows_any(text) or scrubber.may_match(text):
        return True
    inside = decoded_words(text)  # what its base64 words hold, screened alike
    return bool(inside) and (scrubber.knows_any(inside) or scrubber.may_match(inside))


def _as_given(given: Any, masked: Any) -> Any:
    """Masked data in the form it was given in: JSON text for text (an output's text stays text)."""
    return json.dumps(masked, ensure_ascii=False) if isinstance(given, str) else masked


def _unpacked(value: Any) -> Any:
    """A recording's data (given as data or as JSON text) with its tables and references read back."""
    return unpacked(parse_json(value) if isinstance(value, str) else value)


def _readable(data: Any) -> bool:
    """Whether ``data`` is a recording of a schema version this library reads (and so masks field by field)."""
    return isinstance(data, dict) and data.get("schema_version", SCHEMA_VERSION) in READABLE_VERSIONS


def _learn(value: Any, scrubber: RunScrubber, keys: set[str]) -> Any:
    """Show the scrubber every value under a covered key, inside JSON text too (a tool result is stored
    as its JSON), so the masking pass finds those values wherever else they appear."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item[:1] in ("{", "["):
                with contextlib.suppress(ValueError):  # not JSON: text; too deep: raised for the caller
                    stack.append(parse_json(item))
        elif isinstance(item, dict):
            for name, inner in item.items():
                if isinstance(name, str) and _folded(name) in keys and inner is not None:
                    scrubber.scrub({name: inner})  # a number or a nested value is learned too, every text inside it
                stack.append(inner)
        elif isinstance(item, list):
            stack.extend(item)
    return value
