"""A seal on what a notebook output displays, and the seal claims an output makes.

Rule kept here: :func:`bind_display` writes into an output's copy of the seal the SHA-256 of what each
MIME type of the output displays, and chains them into the head; :func:`display_verdict` checks an
output against them. The hashed text is normalised the ways a notebook file may change without a
reader seeing it: nbformat's list of lines joined, ``\\n`` line endings, no final line break, base64
without its line breaks, JSON by its content. A MIME type added or removed breaks the seal too.

Claims: an output can show a seal it cannot back. A badge (``data-fl-seal``, or the words
"sealed · verified" in any markup) may sit in an output whose recording was removed or never
sealed; a recording may sit in an output that no longer displays its data (turned into a
``stream``). :func:`unbacked` names such an output, so a forged display is broken wherever it goes.

Role: sealing layer, next to ``sealing.seal``; pure functions of JSON-native data.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import html
import re
from typing import Any

from footprint_lab.base.unicode import invisible_class
from footprint_lab.record.recording import Seal
from footprint_lab.record.saved_json import NestingTooDeep, parse_json
from footprint_lab.record.schema import RECORDING_MIME
from footprint_lab.sealing._canonical import encode
from footprint_lab.sealing.seal import _head
from footprint_lab.sealing.verdict import Verdict


# -- what an output displays ---------------------------------------------------------------------
def display_digests(bundle: dict[str, Any]) -> dict[str, str]:
    """The SHA-256 of what each MIME type of an output's data displays (the recording itself left out)."""
    return {mime: hashlib.sha256(_shown(mime, value)).hexdigest() for mime, value in bundle.items()
            if mime != RECORDING_MIME}


def _shown(mime: str, value: Any) -> bytes:
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        value = "".join(value)
    if isinstance(value, str) and mime.endswith("json"):
        with contextlib.suppress(ValueError, NestingTooDeep):  # text that is no JSON data is held as text
            value = parse_json(value)
    if isinstance(value, str):
        if mime.startswith("image/") and not mime.endswith("+xml"):  # base64: its line breaks do not count
            return "".join(value.split()).encode("ascii", "replace")
        return value.replace("\r\n", "\n").rstrip("\n").encode("utf-8", "surrogatepass")
    return encode([value])  # JSON data: its keys sorted


def bind_display(bundle: dict[str, Any], *, scrubbed: list[str] | None = None,
                 digests: dict[str, str] | None = None) -> dict[str, Any]:
    """``bundle`` (an output's data) with its recording's copy of the seal holding the digests of what the
    bundle displays, chained into the head. ``digests`` gives the ones held before instead, so an edited
    display stays broken; ``scrubbed`` adds names to the seal's (a scrub that masked the display). A
    bundle with no sealed recording comes back as it is."""
    carried = carried_recording(bundle)
    saved = carried.get("seal") if carried is not None else None
    if not isinstance(saved, dict):
        return bundle
    assert carried is not None
    try:
        made = Seal.model_validate(saved)
    except ValueError:  # not a seal this library wrote: left for verify to call broken
        return bundle
    made.display = display_digests(bundle) if digests is None else digests
    made.scrubbed = sorted({*made.scrubbed, *(scrubbed or [])})
    made.head = _head(made, _child_heads(carried))
    return {**bundle, RECORDING_MIME: {**carried, "seal": made.model_dump(mode="json", exclude_defaults=True)}}


def _child_heads(carried: dict[str, Any]) -> list[str]:
    heads = []
    for child in carried.get("children") or []:
        seal = child.get("seal") if isinstance(child, dict) else None
        if isinstance(seal, dict) and isinstance(seal.get("head"), str):
            heads.append(seal["head"])
    return heads


def display_verdict(bundle: dict[str, Any]) -> Verdict | None:
    """``None`` when an output still displays what its recording's copy of the seal holds, or when that
    copy holds no display; otherwise a broken verdict of kind ``display`` naming the MIME type."""
    saved = _seal_copy(bundle)
    held = saved.get("display") if saved is not None else None
    if not isinstance(held, dict) or not held or saved is None:
        return None
    now = display_digests(bundle)
    for mime in sorted({*held, *now}):
        if mime not in now:
            problem = "was removed from the output after the run was sealed"
        elif mime not in held:
            problem = "was added to the output after the run was sealed"
        elif now[mime] != held[mime]:
            problem = "is not what was displayed when the run was sealed"
        else:
            continue
        return Verdict("broken", kind="display", field=mime, problem=problem,
                       scrubbed=tuple(saved.get("scrubbed") or ()))
    return None


def held_digests(bundle: dict[str, Any]) -> dict[str, str]:
    """The display digests an output's sealed copy holds (empty when none)."""
    saved = _seal_copy(bundle)
    held = saved.get("display") if saved is not None else None
    return dict(held) if isinstance(held, dict) else {}


def carried_recording(bundle: dict[str, Any]) -> dict[str, Any] | None:
    """The recording an output's data carries, as JSON data, whether the file holds it as data or as
    text (nbformat allows both, and the door reads both), so a copy stored as text is held to its display
    too. ``None`` when there is none or it is not a JSON object."""
    carried = bundle.get(RECORDING_MIME)
    if isinstance(carried, str):
        try:
            carried = parse_json(carried)
        except (ValueError, NestingTooDeep):  # not a recording's text: the recording door names what is wrong
            return None
    return carried if isinstance(carried, dict) else None


def _seal_copy(bundle: dict[str, Any]) -> dict[str, Any] | None:
    carried = carried_recording(bundle)
    saved = carried.get("seal") if carried is not None else None
    return saved if isinstance(saved, dict) else None


def holds_display(bundle: dict[str, Any]) -> bool:
    """Whether an output's sealed copy holds a display (digests to check it against)."""
    return bool(held_digests(bundle))


# -- what an output claims -----------------------------------------------------------------------
#: the output types whose ``data`` a notebook displays (a ``stream`` shows its ``text``, an ``error`` its traceback)
DISPLAYING = ("display_data", "execute_result")
_BADGE = re.compile(r"data-fl-seal\s*=", re.IGNORECASE)
_VERIFIED = re.compile(r"\bsealed\W{0,12}verified\b", re.IGNORECASE)
#: a tag; it never holds a "<", so a scan from each "<" stops at the next one (a text of "<" is read in one pass)
_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)?[^<>]*>")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
#: elements drawn in line with the text around them: ``<b>sea</b>led`` is one word to a reader
_INLINE = frozenset({"a", "abbr", "b", "bdi", "bdo", "cite", "code", "del", "dfn", "em", "font", "i", "ins", "kbd",
                     "mark", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "tt", "u", "var",
                     "wbr"})


@functools.cache
def _unseen() -> re.Pattern[str]:
    return re.compile(f"[{invisible_class()}]+")


def _inline_as_nothing(tag: re.Match[str]) -> str:
    return "" if (tag.group(1) or "").lower() in _INLINE else " "


def _shows_verified(text: str) -> bool:
    """Whether a reader sees "sealed · verified" in ``text``: comments and invisible characters dropped,
    entities read, tags read as a space, and again with inline tags read as nothing."""
    text = _COMMENT.sub("", text)
    return any(_VERIFIED.search(_unseen().sub("", html.unescape(_TAG.sub(gap, text))))
               for gap in (" ", _inline_as_nothing))


def seal_claim(output: dict[str, Any]) -> str | None:
    """Where an output shows a seal (a seal badge, or "sealed · verified" in any markup or spacing): the MIME
    type, or ``text`` for a stream output's text; ``None`` when it shows none. The recording is not looked at."""
    data = output.get("data")
    places: list[tuple[str, Any]] = ([(mime, value) for mime, value in data.items() if mime != RECORDING_MIME]
                                     if isinstance(data, dict) else [])
    places.append(("text", output.get("text")))
    for where, value in places:
        if isinstance(value, list):
            value = "".join(line for line in value if isinstance(line, str))
        if isinstance(value, str) and (_BADGE.search(value) or _shows_verified(value)):
            return where
    return None


def unbacked(output: dict[str, Any]) -> Verdict | None:
    """A broken verdict (kind ``display``) for an output that shows a seal nothing in it backs: a recording
    in an output that does not display its data, or a seal shown with no recording beside it. ``None``
    otherwise (a carried recording is then for its seal to judge)."""
    data = output.get("data")
    if isinstance(data, dict) and RECORDING_MIME in data:
        if output.get("output_type") in DISPLAYING:
            return None
        return Verdict("broken", kind="display", field="output_type",
                       problem="is no longer an output that displays its data (a reader sees other text than the "
                               "sealed run's): it was changed after the run was sealed")
    return _claimed(output, "shows a seal, but the output carries no recording to check it against (removed "
                            "after the run was sealed, or never kept): what it shows cannot be verified")


def unsealed_claim(output: dict[str, Any]) -> Verdict | None:
    """A broken verdict for an output that shows a seal while the recording it carries has none; else ``None``."""
    return _claimed(output, "shows a seal, but the recording it carries is not sealed: the seal was removed after "
                            "the run was shown")


def _claimed(output: dict[str, Any], problem: str) -> Verdict | None:
    claim = seal_claim(output)
    return None if claim is None else Verdict("broken", kind="display", field=claim, problem=problem)
