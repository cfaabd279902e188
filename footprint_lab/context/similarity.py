"""The one tokenizer and the one cosine that retrieval and influence ranking share.

Rule kept: a word means the same thing to the retriever that chose a chunk and to the ranking
that later asks how much of the answer the chunk accounts for; two tokenizers that drift apart
would make the explanation disagree with the retrieval it explains.

Role: context layer, pure functions (``explain`` sits above and imports them).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    """Lowercase words (letters and digits in any script; ``_`` separates), a plural-looking final 's' folded.

    The folding (``refunds`` -> ``refund``, never ``process``) is the only normalisation: it is
    cheap, the same on both sides of a match, and catches the commonest near miss. ``order_id``
    is the two words ``order`` and ``id``, so a tool's field name matches the prose about it.
    """
    return [_fold(word) for word in _WORD.findall(text.lower())]


def _fold(word: str) -> str:
    return word[:-1] if len(word) > 3 and word[-1] == "s" and word[-2] != "s" else word


def cosine(left: Sequence[float], right: Sequence[float]) -> float:
    """The cosine of the angle between two vectors of one length (0 when either is all zeros)."""
    norm = math.sqrt(sum(x * x for x in left)) * math.sqrt(sum(y * y for y in right))
    return 0.0 if norm == 0 else sum(x * y for x, y in zip(left, right, strict=True)) / norm
