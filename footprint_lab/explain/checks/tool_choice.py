"""How close each tool choice was, from the log-probabilities a provider reported.

Defect closed: when a model picks one of two tools that read nearly alike, the recording said
which it picked but not whether it was a near thing. When the provider was asked for
log-probabilities (OpenAI-compatible servers and Ollama return them per generated token, with
the likeliest alternatives at each position), the chosen tool's name can be found in the
generated text; :func:`choice_margins` looks at the token where that name parts from the
other offered names (``get_order_live`` against ``get_order_history`` parts at ``live``) and
records, per tool call, the chosen token's log-probability, the best alternative at that
position (and the offered tool it would have begun, when it begins one) and the margin
between the two, in nats. A margin under ``log 2`` means the runner-up had more than half
the chosen token's probability: the answer view calls that a close call. A provider that
does not report the name's tokens (OpenAI's hosted tool calls carry no log-probabilities)
yields no margin, and the view falls back to the lint's confusable neighbours
(:func:`footprint_lab.explain.checks.tool_lint.twins`).

Role: explain layer, a pure function; core calls it once per LLM call that reported tokens.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate
from typing import Any

#: below this margin (nats) the runner-up had more than half the chosen token's probability
CLOSE_CALL = math.log(2)


def choice_margins(tokens: Sequence[Any], calls: Sequence[dict[str, Any]],
                   offered: Sequence[str]) -> list[dict[str, Any]]:
    """One record per tool call whose name shows in ``tokens`` (``TokenChoice`` items), in call order.

    Each record: ``call_id``, ``tool``, ``logprob`` (of the deciding token), ``runner_up`` (the
    best other token there, or ``None`` when the provider listed none), ``runner_up_tool`` (the
    offered tool that token would have begun, or ``None``), ``runner_up_logprob`` and
    ``margin`` (``logprob - runner_up_logprob``, ``None`` without a runner-up).
    """
    if not tokens or not calls:
        return []
    pieces = [token[0] for token in tokens]
    text = "".join(pieces)
    ends = list(accumulate(len(piece) for piece in pieces))
    margins: list[dict[str, Any]] = []
    cursor = 0
    for call in calls:
        name = call["name"]
        at = text.find(name, cursor)
        if at < 0 or not name:
            continue
        cursor = at + len(name)
        others = [other for other in offered if other != name]
        shared = max((_common(name, other) for other in others), default=0)
        decides = at + min(shared, len(name) - 1)  # the first character no other offered name shares
        k = bisect_right(ends, decides)
        chosen, logprob, top = tokens[k][0], tokens[k][1], tokens[k][2]
        start = ends[k] - len(chosen)
        alternatives = [(alt, value) for alt, value in top if alt != chosen]
        record: dict[str, Any] = {"call_id": call["id"], "tool": name, "logprob": logprob, "runner_up": None,
                                  "runner_up_tool": None, "runner_up_logprob": None, "margin": None}
        if alternatives:
            alt, value = max(alternatives, key=lambda pair: pair[1])
            record.update(runner_up=alt, runner_up_logprob=value, margin=logprob - value,
                          runner_up_tool=_begun(text[:start] + alt, at, text[:at], others))
        margins.append(record)
    return margins


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _begun(written: str, at: int, before: str, others: list[str]) -> str | None:
    """The offered tool whose name ``written`` (the text with an alternative token) would be spelling."""
    if len(written) < at or written[:at] != before:
        return None
    tail = written[at:]
    return next((other for other in others if tail and (other.startswith(tail) or tail.startswith(other))), None)
