"""A seal on what a notebook output displays.

Rule kept here: :func:`bind_display` writes into an output's copy of the seal the SHA-256 of what each
MIME type of the output displays, and chains them into the head; :func:`display_verdict` checks an
output against them. The hashed text is normalised the ways a notebook file may change without a
reader seeing it: nbformat's list of lines joined, ``\\n`` line endings, no final line break, base64
without its line breaks, JSON by its content. A MIME type added or removed breaks the seal too.
The seal claims an output makes are read by ``notebook.seal_claims``.

Role: sealing layer, next to ``sealing.seal``; pure functions of JSON-native data.
"""

from __future__ import annotations

import contextlib
import hashlib
from typing import Any

from footprint_lab.base.saved_json import NestingTooDeep, parse_json
from footprint_lab.record.recording import Seal
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
