"""Ranking suspects: which of the pieces that reached an output look most like they shaped it.

Rule kept here: a ranking is correlational and says so. Each suspect carries two scores:

- ``structural_score``: how close its path to the output is (1.0 for a piece sent to the
  LLM call that produced the output, less for calls further back along the slice);
- ``content_score``: how much of the output its content accounts for, by the chosen strategy.

In a composed run a piece of an upstream member (one whose answer was passed on as another
member's message) is ranked through the message that carried it: its structural score is that
message's, since the hand-off copies the answer rather than adding a step of reasoning, and
``carried_by`` says whose answer carried it where. The carrying message itself is no source (a
rerun produces it again from those pieces), so it scores 0 and says which members it carried.

With ``reference`` (the answer that was expected), a ranking is contrastive: a piece scores by
how much more it resembles the actual answer than the reference (its content score against the
answer less its score against the reference, never below 0). A piece that is topically central
to both, such as the policy text every refund answer quotes, then drops away, and what pushed
the answer off the expected one rises.

``score = content_score x structural_score``, so a suspect with no content evidence (a routing
decision, a piece sharing nothing with the output) scores 0 and never outranks a piece whose
content matches the output; ties are broken by structure, then by the order the pieces were
sent. Nothing here claims a cause: :func:`footprint_lab.explain.localize` tests the suspects
by removing them and rerunning.

Strategies are pluggable: ``lexical`` (the default: output tokens found in the piece, each
weighted by how rare it is among the pieces; deterministic, free) and ``embedding`` (cosine
similarity from any ``embed(texts) -> vectors`` callable). Pass a registered name, or any
object with ``score(output, contents) -> list[float]`` (values from 0 to 1).

Role: explain layer. Refusal raised here: :class:`InfluenceStrategyError`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard, cast

from footprint_lab.base.refusal import Refusal, call_problem, describe_shape
from footprint_lab.context.similarity import cosine, words
from footprint_lab.explain.arguments import ExplainConfigError, fraction, recording_of, whole_number
from footprint_lab.explain.provenance.custody import Backtrack, backtrack
from footprint_lab.explain.render import shorten

if TYPE_CHECKING:
    import pandas as pd

    from footprint_lab.explain.arguments import RunLike

#: How every ranking labels itself.
CORRELATIONAL = ("Scores are correlational: they rank what the output resembles and how directly each piece "
                 "reached it, not what caused it. Confirm a suspect with localize(), which removes it and reruns.")
SUSPECT_COLUMNS = ["rank", "source_id", "source_kind", "score", "structural_score", "content_score", "evidence",
                   "removal_id", "slot", "read_by", "content", "member", "member_name", "carried_by",
                   "reference_score"]

_MASK = re.compile(r"\[redacted:[^\]]*\]")
_STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did", "do", "does", "for",
    "from", "had", "has", "have", "he", "her", "his", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no",
    "not", "of", "on", "or", "our", "she", "so", "than", "that", "the", "their", "them", "then", "there", "these",
    "they", "this", "to", "too", "under", "up", "us", "was", "we", "were", "what", "when", "which", "who", "will",
    "with", "would", "you", "your",
))


class InfluenceStrategyError(Refusal, ValueError):
    """Raised when ``suspects(strategy=...)`` names no strategy, or a strategy cannot be built or used.

    Carries ``received`` (the shape of what arrived) and ``known`` (the registered strategy names).
    """

    code = "ERR_INFLUENCE_STRATEGY"
    fields = ("received", "known")

    def __init__(self, problem: str, received: str) -> None:
        known = sorted(_STRATEGIES)
        super().__init__(
            f"suspects: {problem} (received {received}). Strategies: {', '.join(known)} "
            "(see list_influence_strategies()), or any object with score(output, contents) -> list of numbers "
            "from 0 to 1; 'embedding' needs embed=fn, where fn(list of texts) returns one vector per text."
        )
        self.received = received
        self.known = known


class InfluenceStrategy(Protocol):
    """What a ranking needs of a strategy."""

    def score(self, output: str, contents: Sequence[str]) -> list[float]:
        """How much of ``output`` each content accounts for, from 0 (nothing) to 1."""
        ...


def tokens(text: str) -> set[str]:
    """The words of a text that can carry evidence: lower-cased, no stopwords, a plural's 's' dropped.

    A redaction mask (``[redacted:email]``) is no evidence: two masks alike may hide different values.
    """
    return {word for word in words(_MASK.sub(" ", text))
            if word not in _STOPWORDS and (len(word) > 1 or word.isdigit())}


class LexicalInfluence:
    """The share of the output's words a piece holds, each word weighted by how rare it is among the pieces."""

    name = "lexical"

    def score(self, output: str, contents: Sequence[str]) -> list[float]:
        wanted = tokens(output)
        held = [tokens(text) & wanted for text in contents]
        frequency: dict[str, int] = {}
        for found in held:
            for word in found:
                frequency[word] = frequency.get(word, 0) + 1
        weight = {word: math.log(1.0 + len(contents) / count) for word, count in frequency.items()}
        total = sum(weight.values())
        if total == 0:
            return [0.0] * len(contents)
        return [sum(weight[word] for word in found) / total for found in held]


class EmbeddingInfluence:
    """Cosine similarity between the output and each piece, from a caller's ``embed(texts) -> vectors``."""

    name = "embedding"

    def __init__(self, embed: Callable[[list[str]], Any]) -> None:
        problem = call_problem(embed, 1)
        if problem is not None:
            raise InfluenceStrategyError("the embedding strategy needs embed=fn", problem)
        self.embed = embed

    def score(self, output: str, contents: Sequence[str]) -> list[float]:
        texts = [output, *contents]
        returned = self.embed(texts)
        try:
            vectors = [list(map(float, vector)) for vector in returned]
        except (TypeError, ValueError):
            raise InfluenceStrategyError("embed(texts) must return one vector of numbers per text",
                                         describe_shape(returned)) from None
        if not all(math.isfinite(x) for vector in vectors for x in vector):
            raise InfluenceStrategyError("embed(texts) must return finite numbers", "a vector holding NaN or infinity")
        if len(vectors) != len(texts) or len({len(v) for v in vectors}) > 1:
            raise InfluenceStrategyError("embed(texts) must return one vector of the same length per text",
                                         f"{len(vectors)} vector(s) for {len(texts)} text(s)")
        first, rest = vectors[0], vectors[1:]
        return [max(0.0, cosine(first, vector)) for vector in rest]


@dataclass(frozen=True, slots=True)
class _Registered:
    build: Callable[..., InfluenceStrategy]
    description: str


_STRATEGIES: dict[str, _Registered] = {
    "lexical": _Registered(lambda **_: LexicalInfluence(),
                           "token overlap with the output, weighted by rarity among the pieces; deterministic"),
    "embedding": _Registered(lambda embed=None, **_: EmbeddingInfluence(embed),
                             "cosine similarity from embed=fn, any callable mapping texts to vectors"),
}


def list_influence_strategies() -> dict[str, str]:
    """The registered ranking strategies, by name, with what each measures."""
    return {name: registered.description for name, registered in _STRATEGIES.items()}


def register_influence_strategy(name: str, build: Callable[..., InfluenceStrategy], description: str) -> None:
    """Make a strategy available by name; ``build(**options)`` returns an object with ``score``."""
    if not isinstance(name, str) or not name.isidentifier() or not callable(build) or not isinstance(description, str):
        raise InfluenceStrategyError("a strategy is registered as (identifier name, callable build, description)",
                                     describe_shape(name))
    _STRATEGIES[name] = _Registered(build, description)


def resolve_strategy(strategy: Any, **options: Any) -> InfluenceStrategy:
    """A strategy object from a registered name (built with ``options``) or an object with ``score``."""
    if isinstance(strategy, str):
        registered = _STRATEGIES.get(strategy)
        if registered is None:
            raise InfluenceStrategyError("no strategy has that name", "a string that names no strategy")
        return registered.build(**options)
    if callable(getattr(strategy, "score", None)):
        return cast("InfluenceStrategy", strategy)
    raise InfluenceStrategyError("strategy must be a name or an object with a score method", describe_shape(strategy))


def suspects(
    run: RunLike,
    *,
    strategy: str | InfluenceStrategy = "lexical",
    at: str | None = None,
    embed: Callable[[list[str]], Any] | None = None,
    trace: Backtrack | None = None,
    reference: str | None = None,
) -> pd.DataFrame:
    """The candidates of ``backtrack(run, at)`` ranked by how plausibly each shaped the output (correlational).

    One row per source (a declaration, the system prompt, a tool, the user's message, a model
    turn, a tool's result; routing decisions on the path too), in rank order: ``rank``,
    ``source_id``, ``source_kind``, ``score``, ``structural_score``, ``content_score``,
    ``evidence``, ``removal_id`` (what ``localize`` removes; empty when a rerun cannot),
    ``slot``, ``read_by``, a preview of the ``content``, then ``member`` (the member's path in a
    composed run, empty for the run itself), ``member_name`` (its runner's given name),
    ``carried_by`` (for an upstream member's piece: whose answer carried it to the target) and
    ``reference_score`` (how much it resembles ``reference``, when one is given: see the module
    docstring). ``frame.attrs["note"]`` says the scores are correlational and
    ``frame.attrs["confidence"]`` (a :class:`RankingConfidence`) whether the top stands clear.
    """
    from footprint_lab.explain.frame import ShownFrame  # imports pandas

    scorer = resolve_strategy(strategy, **({"embed": embed} if embed is not None else {}))
    if trace is not None and not isinstance(trace, Backtrack):
        raise ExplainConfigError("suspects", "trace", describe_shape(trace),
                                 "must be the Backtrack that backtrack(run) or run.backtrack() returns, or None")
    if reference is not None and (not isinstance(reference, str) or not reference.strip()):
        raise ExplainConfigError("suspects", "reference", describe_shape(reference),
                                 "must be the answer that was expected, as text, or None")
    walked = trace if trace is not None else backtrack(recording_of(run, "suspects"), at)
    rows = _rows(walked, scorer, reference)
    frame = ShownFrame(rows, columns=SUSPECT_COLUMNS)
    frame.attrs["note"] = CORRELATIONAL
    frame.attrs["strategy"] = getattr(scorer, "name", type(scorer).__name__)
    frame.attrs["target"] = walked.target
    frame.attrs["reference"] = reference is not None
    frame.attrs["confidence"] = ranking_confidence(frame)
    return frame


def _scores(scorer: InfluenceStrategy, output: str, contents: list[str]) -> list[float]:
    raw = scorer.score(output, contents) if contents else []
    if len(raw) != len(contents) or not all(isinstance(v, int | float) and math.isfinite(v) for v in raw):
        raise InfluenceStrategyError("a strategy's score() must return one finite number per content",
                                     f"{len(raw)} value(s) for {len(contents)} content(s)")
    return [min(1.0, max(0.0, float(value))) for value in raw]


def _rows(walked: Backtrack, scorer: InfluenceStrategy, reference: str | None) -> list[dict[str, Any]]:
    candidates = walked.candidates
    contents = [c.content for c in candidates]
    raw = _scores(scorer, walked.output, contents)
    against = _scores(scorer, reference, contents) if reference is not None else [None] * len(candidates)
    nearest = min((c.depth for c in candidates), default=0)
    best: dict[tuple[str, str, str], dict[str, Any]] = {}
    for order, (candidate, value, versus) in enumerate(zip(candidates, raw, against, strict=True)):
        content = value if versus is None else max(0.0, value - versus)
        # An upstream piece sits where the message that carried it sits: the hand-off adds no reasoning step.
        placed = candidate.carried[0].carrier if candidate.carried else candidate
        structural = 1.0 / (1 + placed.depth - nearest)
        if versus is None:
            evidence = "content matches the output" if content > 0 else "structural path only"
        else:
            evidence = ("resembles the output more than the reference" if content > 0 else
                        "resembles the reference as much as the output" if value > 0 else "structural path only")
        if candidate.carries:
            whose = ", ".join(member.label() for member in candidate.carries)
            content, evidence = 0.0, f"carrier: the answer of {whose}, ranked through its own pieces"
        member = candidate.member
        row = {
            "source_id": candidate.source_id, "source_kind": candidate.source_kind,
            "score": content * structural, "structural_score": structural, "content_score": content,
            "evidence": evidence, "removal_id": candidate.removal_id, "slot": candidate.slot,
            "read_by": candidate.read_by, "content": shorten(candidate.content, 80), "member": member.path,
            "member_name": member.name, "carried_by": candidate.carried_by, "reference_score": versus,
            "_order": order,
        }
        key = (member.path, candidate.source_kind, candidate.source_id)
        kept = best.get(key)
        if kept is None or (row["score"], row["structural_score"]) > (kept["score"], kept["structural_score"]):
            best[key] = row
    depths = walked.slice.depths if walked.slice is not None else {}
    for decision in walked.decisions:
        if decision.step_id == walked.target:
            continue
        structural = 1.0 / (1 + max(depths.get(decision.step_id, 0) - nearest, 0))
        decider = walked.member_of(decision.step_id)
        best[("", "decision", decision.step_id)] = {
            "source_id": decision.step_id, "source_kind": "decision", "score": 0.0, "structural_score": structural,
            "content_score": 0.0, "evidence": "structural path only", "removal_id": None, "slot": None,
            "read_by": None, "content": f"{decision.rule}: chose {decision.chosen}",
            "member": decider.path if decider is not None else None,
            "member_name": decider.name if decider is not None else None, "carried_by": None,
            "reference_score": None, "_order": len(candidates),
        }
    ranked = sorted(best.values(), key=lambda r: (-r["score"], -r["structural_score"], r["_order"]))
    for rank, row in enumerate(ranked, 1):
        row["rank"] = rank
        del row["_order"]
    return ranked


@dataclass(frozen=True, slots=True)
class RankingConfidence:
    """Whether the top suspect stands clear of the rest, and the shortlist to confirm by ablation."""

    clear_winner: bool
    top: str | None
    shortlist: list[str]
    margin: float
    reason: str

    def __str__(self) -> str:
        return self.reason

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        from footprint_lab.explain.render import display_bundle

        return display_bundle("ranking_confidence", self, "Ranking confidence", self.reason, include, exclude)


def ranking_confidence(ranked: pd.DataFrame | RunLike, *, margin: float = 0.3,
                       shortlist_size: int = 5) -> RankingConfidence:
    """Is the top suspect a clear winner? ``ranked`` is ``suspects(...)``'s frame, or a run to rank.

    The top is clear when the next suspect scores below ``(1 - margin)`` times its score; otherwise
    every suspect within that band (at most ``shortlist_size``) is the shortlist to confirm.
    """
    fraction("ranking_confidence", "margin", margin)
    whole_number("ranking_confidence", "shortlist_size", shortlist_size, 1, 1000)
    frame = ranked if _is_frame(ranked) else suspects(recording_of(ranked, "ranking_confidence", "ranked"))
    if not {"source_id", "score"} <= set(frame.columns):
        raise ExplainConfigError("ranking_confidence", "ranked", "a DataFrame without source_id and score columns",
                                 "must be the frame run.suspects() returns, or the run itself")
    scores = [float(s) for s in frame["score"]]
    names = [str(n) for n in frame["source_id"]]
    if not scores or scores[0] <= 0:
        return RankingConfidence(False, None, [], margin,
                                 "No suspect has content evidence, so no ranking can be trusted; backtrack the run "
                                 "and test candidates with localize(). " + CORRELATIONAL)
    band = scores[0] * (1 - margin)
    close = [name for name, score in zip(names, scores, strict=True) if score >= band][:shortlist_size]
    if len(close) == 1:
        after = (f"the next, '{names[1]}', scores {scores[1]:.2f}, below {1 - margin:.0%} of it"
                 if len(scores) > 1 else "no other suspect")
        reason = (f"Clear winner: '{names[0]}' scores {scores[0]:.2f}; {after}. Confirm it with localize(). "
                  + CORRELATIONAL)
        return RankingConfidence(True, names[0], close, margin, reason)
    reason = (f"Too close to call: {len(close)} suspects score within {margin:.0%} of the top "
              f"({', '.join(repr(n) for n in close)}). Confirm them by ablation: localize(run, rerun=..., "
              f"top={len(close)}). " + CORRELATIONAL)
    return RankingConfidence(False, names[0], close, margin, reason)


def _is_frame(value: object) -> TypeGuard[pd.DataFrame]:
    """A pandas DataFrame, told without importing pandas (a run is ranked without it until asked)."""
    return any(kind.__name__ == "DataFrame" for kind in type(value).__mro__) and hasattr(value, "columns")

