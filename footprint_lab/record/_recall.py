"""Recall: which delivered events hold a value the policy learned only afterwards.

Rule kept: a value can become covered late (a tool result shows a password, then a tool call puts
it under a covered key). Sent events cannot be taken back, so the listeners are told which ones
held it, each by ``seq`` with its payload as the policy now masks it, never the value.

A value may also span the streamed tokens of one LLM call: the token gate cuts only at whitespace,
and a late value may hold some (a pass phrase). Then the first of those tokens gets the mask where
the value began, and the others lose their part of it.

Role: record layer, used by the recorder only when a policy learned something since it last looked.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

#: one delivered event, as a run's stream keeps it: ``(seq, type, step_id, payload)``
Delivered = tuple[int, str, str, dict[str, Any]]


def recall(delivered: list[Delivered], policy: Any, fresh: list[str]) -> list[dict[str, Any]]:
    """The ``recall`` entries (``{"seq", "payload"}``) for the values ``fresh`` just learned. ``delivered`` is
    updated in place to what each event now says, so a later recall starts from there."""
    changed: dict[int, dict[str, Any]] = {}
    for index, (_, _, _, payload) in enumerate(delivered):
        text = json.dumps(payload, ensure_ascii=False, default=str)
        if any(secret in text for secret in fresh):
            swept = policy.sweep(payload)
            if swept != payload:
                changed[index] = swept
    spaced = [secret for secret in fresh if any(char.isspace() for char in secret)]
    if spaced:
        changed.update(_split_tokens(delivered, changed, spaced, policy.known()))
    for index, payload in changed.items():
        seq, type_, step_id, _ = delivered[index]
        delivered[index] = (seq, type_, step_id, payload)
    return [{"seq": delivered[index][0], "payload": changed[index]} for index in sorted(changed)]


def swept_tokens(types: Sequence[str], steps: Sequence[str], payloads: Sequence[Any],
                 policy: Any) -> dict[int, dict[str, Any]]:
    """A recording's token events (by index) that carry a learned value between them, as they should read:
    a per-event sweep cannot find such a value."""
    known = policy.known()
    spaced = [secret for secret in known if any(char.isspace() for char in secret)]
    if not spaced:
        return {}
    tokens: list[Delivered] = [(index, type_, step_id, payloads[index])
                               for index, (type_, step_id) in enumerate(zip(types, steps, strict=True))
                               if type_ == "token" and isinstance(payloads[index], dict)]
    found = _split_tokens(tokens, {}, spaced, known)
    return {tokens[position][0]: payload for position, payload in found.items()}


def _split_tokens(delivered: list[Delivered], changed: dict[int, dict[str, Any]], spaced: list[str],
                  masks: dict[str, str]) -> dict[int, dict[str, Any]]:
    """Token events of one call that carry a value between them: each with what it should have said."""
    by_call: dict[str, list[int]] = {}
    for index, (_, type_, step_id, _) in enumerate(delivered):
        if type_ == "token":
            by_call.setdefault(step_id, []).append(index)
    found: dict[int, dict[str, Any]] = {}
    for indexes in by_call.values():
        payloads = {index: changed.get(index, delivered[index][3]) for index in indexes}
        chars: list[str] = []
        owners: list[int] = []
        for index in indexes:
            text = str(payloads[index].get("text", ""))
            chars.extend(text)
            owners.extend([index] * len(text))
        joined = "".join(chars)
        if not any(secret in joined for secret in spaced):
            continue
        for secret in spaced:
            mask = masks.get(secret, "[redacted]")
            at = joined.find(secret)
            while at != -1:
                owner = owners[at]  # the event where the value began gets the mask
                chars[at:at + len(secret)] = list(mask)
                owners[at:at + len(secret)] = [owner] * len(mask)
                joined = "".join(chars)
                at = joined.find(secret, at + len(mask))
        texts: dict[int, list[str]] = {index: [] for index in indexes}
        for char, owner in zip(chars, owners, strict=True):
            texts[owner].append(char)
        for index in indexes:
            text = "".join(texts[index])
            if text != payloads[index].get("text", ""):
                found[index] = {**payloads[index], "text": text}
    return found
