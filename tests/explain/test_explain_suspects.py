"""Suspects: a correlational ranking where content evidence always beats a bare structural path."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from saved_kit import saved_run

from footprint_lab import Agent, define_tool
from footprint_lab.context import define_fact
from footprint_lab.errors import ExplainConfigError, InfluenceStrategyError
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.explain import (
    CORRELATIONAL,
    EmbeddingInfluence,
    list_influence_strategies,
    ranking_confidence,
    register_influence_strategy,
)
from footprint_lab.explain.provenance.influence import _STRATEGIES, LexicalInfluence
from footprint_lab.providers import mock


@pytest.fixture
def planted_run():
    """The planted-fact run, read from its saved recording (no agent runs for a pure explanation)."""
    return saved_run("planted_fact")


def bag_of_words(texts):
    """A deterministic embedding: counts of each vocabulary word."""
    vocabulary = sorted({w for t in texts for w in re.findall(r"[a-z0-9]+", t.lower())})
    return [[re.findall(r"[a-z0-9]+", t.lower()).count(w) for w in vocabulary] for t in texts]


class Flat:
    """A strategy that finds every piece equally like the output."""

    def score(self, output, contents):
        return [0.5] * len(contents)


async def test_the_planted_fact_ranks_first(planted_run):
    frame = planted_run.suspects()
    assert list(frame.columns[:6]) == ["rank", "source_id", "source_kind", "score", "structural_score",
                                       "content_score"]
    assert frame.iloc[0].source_id == "vip-override"
    assert list(frame["rank"]) == list(range(1, len(frame) + 1))
    assert list(frame["score"]) == sorted(frame["score"], reverse=True)
    assert (frame["score"] == frame["content_score"] * frame["structural_score"]).all()
    assert frame.attrs["note"] == CORRELATIONAL
    assert frame.attrs["strategy"] == "lexical"


async def test_suspects_are_deterministic(planted_run):
    # a second run of the same agent has other run ids and timings; the ranking must not depend on them
    again = await planted_fact_agent().run(REFUND_REQUEST)
    assert again.recording.run_id != planted_run.recording.run_id
    assert again.suspects().equals(planted_run.suspects())


async def test_no_piece_without_content_evidence_outranks_one_with_it(planted_run):
    frame = planted_run.suspects()
    with_evidence = frame[frame.content_score > 0]["rank"]
    without = frame[frame.content_score == 0]["rank"]
    assert len(without) and len(with_evidence)
    assert with_evidence.max() < without.min()
    assert set(frame[frame.content_score == 0].evidence) == {"structural path only"}


async def test_an_earlier_llm_call_with_no_shared_words_ranks_below_matching_content():
    script = [{"tool": "noop", "args": {}}, "Paris is the capital of France."]
    noop = define_tool(name="noop", description="Does nothing.", input_schema={"type": "object"}, fn=lambda: "ok")
    agent = Agent(provider=mock(replies=script), tools=[noop], system="Answer questions.",
                  context=[define_fact(id="geo", data="The capital of France is Paris.")])
    frame = (await agent.run("Where?")).suspects()
    assert frame.iloc[0].source_id == "geo"
    turn = frame[frame.source_kind == "assistant"].iloc[0]
    assert turn.content_score == 0 and turn["rank"] > frame[frame.source_id == "geo"].iloc[0]["rank"]


async def test_embedding_strategy_takes_any_embed_callable(planted_run):
    frame = planted_run.suspects("embedding", embed=bag_of_words)
    assert frame.attrs["strategy"] == "embedding"
    assert frame.iloc[0].source_id == "vip-override"
    assert ((frame.content_score >= 0) & (frame.content_score <= 1)).all()


async def test_strategy_refusals(planted_run):
    with pytest.raises(InfluenceStrategyError) as caught:
        planted_run.suspects("telepathy")
    assert "telepathy" not in caught.value.message and "lexical" in caught.value.known
    with pytest.raises(InfluenceStrategyError):
        planted_run.suspects("embedding")
    with pytest.raises(InfluenceStrategyError):
        planted_run.suspects("embedding", embed=lambda texts: [[1.0]])
    with pytest.raises(InfluenceStrategyError):
        planted_run.suspects(object())


async def test_strategies_are_listed_and_pluggable(planted_run):
    listed = list_influence_strategies()
    assert {"lexical", "embedding"} <= set(listed)
    register_influence_strategy("flat", lambda **_: Flat(), "every piece alike")
    try:
        assert "flat" in list_influence_strategies()
        frame = planted_run.suspects("flat")
        assert set(frame.content_score) == {0.5}
    finally:
        del _STRATEGIES["flat"]
    assert planted_run.suspects(Flat()).iloc[0].content_score == 0.5


def test_lexical_weighs_rare_words_over_common_ones():
    scores = LexicalInfluence().score("the VIP override applies to order 7",
                                      ["order 7 and order 8", "order 9", "a VIP override"])
    assert scores[2] > scores[0] > scores[1] > 0


async def test_ranking_confidence_names_a_clear_winner(planted_run):
    verdict = ranking_confidence(planted_run.suspects())
    assert verdict.clear_winner and verdict.top == "vip-override" and verdict.shortlist == ["vip-override"]
    assert "correlational" in str(verdict)
    assert ranking_confidence(planted_run).top == "vip-override"


async def test_ranking_confidence_returns_a_shortlist_when_too_close(planted_run):
    verdict = ranking_confidence(planted_run.suspects(Flat()), shortlist_size=3)
    assert not verdict.clear_winner
    assert len(verdict.shortlist) == 3
    assert "Too close to call" in str(verdict) and "localize" in str(verdict)


async def test_no_text_claims_a_cause_from_a_score(planted_run):
    texts = [ranking_confidence(planted_run.suspects()).reason,
             ranking_confidence(planted_run.suspects(Flat())).reason, CORRELATIONAL]
    for text in texts:
        assert not re.search(r"\b(caused|causes|is the cause|because of)\b", text.replace("not what caused", ""))


async def test_ranking_confidence_refuses_bad_settings(planted_run):
    with pytest.raises(ExplainConfigError):
        ranking_confidence(planted_run.suspects(), margin=2)
    frame = planted_run.suspects()[["rank"]]
    with pytest.raises(ExplainConfigError):
        ranking_confidence(frame)


def test_embedding_influence_needs_a_callable():
    with pytest.raises(InfluenceStrategyError):
        EmbeddingInfluence("not callable")


def test_embedding_scores_are_the_cosine_of_the_callables_vectors_floored_at_zero():
    table = {"out": [1.0, 0.0], "same": [2.0, 0.0], "diagonal": [1.0, 1.0], "opposite": [-1.0, 0.0],
             "orthogonal": [0.0, 3.0]}
    seen: list[list[str]] = []

    def embed(texts):
        seen.append(list(texts))
        return [table[t] for t in texts]

    scores = EmbeddingInfluence(embed).score("out", ["same", "diagonal", "opposite", "orthogonal"])
    assert scores == pytest.approx([1.0, 2 ** -0.5, 0.0, 0.0])
    assert seen == [["out", "same", "diagonal", "opposite", "orthogonal"]]  # one call for the output and all pieces


async def test_embedding_accepts_an_array_of_vectors_and_ranks_with_it(planted_run):
    import numpy as np

    frame = planted_run.suspects("embedding", embed=lambda texts: np.asarray(bag_of_words(texts), dtype=float))
    assert frame.equals(planted_run.suspects("embedding", embed=bag_of_words))
    backtracked = planted_run.backtrack()
    vectors = bag_of_words([backtracked.output, *(c.content for c in backtracked.candidates)])
    vip = next(i for i, c in enumerate(backtracked.candidates) if c.source_id == "vip-override")
    output, piece = np.asarray(vectors[0]), np.asarray(vectors[vip + 1])
    expected = float(output @ piece / np.linalg.norm(output) / np.linalg.norm(piece))
    assert frame[frame.source_id == "vip-override"].iloc[0].content_score == pytest.approx(expected)


async def test_embedding_refuses_vectors_that_are_not_numbers(planted_run):
    for bad in (lambda texts: [["x", "y"] for _ in texts], lambda texts: [None for _ in texts],
                lambda texts: [[float("nan")] for _ in texts]):
        with pytest.raises(InfluenceStrategyError) as caught:
            planted_run.suspects("embedding", embed=bad)
        assert caught.value.code == "ERR_INFLUENCE_STRATEGY"


async def test_ranking_confidence_margin_boundary(planted_run):
    class Scripted:
        def __init__(self, top, second):
            self.values = (top, second)

        def score(self, output, contents):
            return [self.values[0], self.values[1], *([0.0] * (len(contents) - 2))]

    just_clear = ranking_confidence(planted_run.suspects(Scripted(1.0, 0.69)), margin=0.3)
    assert just_clear.clear_winner and len(just_clear.shortlist) == 1
    just_close = ranking_confidence(planted_run.suspects(Scripted(1.0, 0.71)), margin=0.3)
    assert not just_close.clear_winner and len(just_close.shortlist) == 2
    assert just_close.top == just_close.shortlist[0]
    nothing = ranking_confidence(planted_run.suspects(Scripted(0.0, 0.0)))
    assert not nothing.clear_winner and nothing.shortlist == [] and nothing.top is None


def _composed_recording():
    import asyncio

    from footprint_lab import Conditional

    async def build():
        flow = Conditional([("refunds", lambda text: True, planted_fact_agent())],
                           otherwise=("chat", Agent(provider=mock(reply="unused"))))
        return (await flow.run(REFUND_REQUEST)).recording

    return asyncio.run(build())


COMPOSED = _composed_recording()  # a routing decision, two LLM calls and every kind of piece


class Given:
    """A strategy that returns the scores it is handed (cut or padded to the number of pieces)."""

    def __init__(self, values):
        self.values = values

    def score(self, output, contents):
        return [self.values[i % len(self.values)] for i in range(len(contents))]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.just(0.0), st.floats(min_value=1e-9, max_value=1.0)), min_size=1, max_size=12))
def test_no_bare_structural_row_ever_outranks_a_content_match(values):
    from footprint_lab.explain import suspects

    frame = suspects(COMPOSED, strategy=Given(values))
    matched = frame[frame.content_score > 0]["rank"]
    bare = frame[frame.content_score == 0]["rank"]
    assert (frame[frame.source_kind == "decision"].content_score == 0).all()
    if len(matched) and len(bare):
        assert matched.max() < bare.min()
    assert list(frame["rank"]) == list(range(1, len(frame) + 1))


async def test_a_reference_answer_sinks_a_topical_innocent_and_raises_what_pushed_the_answer_off():
    policy = "Refund policy: refunds for orders are allowed within 30 days of purchase, for orders with a receipt."

    def respond(request):
        if "loyalty tier gold" in request.system:
            return ("APPROVED: refunds for orders are allowed within 30 days of purchase; the gold tier waives the "
                    "limit.")
        return "DECLINED: refunds for orders are allowed within 30 days of purchase; yours is 47 days old."

    agent = Agent(provider=mock(respond=respond), system="You decide refunds.", context=[
        define_fact(id="policy", data=policy),
        define_fact(id="tier", data="Customer loyalty tier gold: waives the limit."),
        define_fact(id="shipping", data="Shipping is free over 50 EUR.")])
    run = await agent.run("Refund order A-1001?")
    plain = run.suspects()
    assert plain.iloc[0].source_id == "policy" and plain.reference_score.isna().all()
    assert plain.attrs["confidence"].clear_winner and plain.attrs["confidence"].top == "policy"
    expected = "DECLINED: refunds for orders are allowed within 30 days of purchase; yours is 47 days old."
    contrast = run.suspects(reference=expected)
    assert contrast.iloc[0].source_id == "tier" and contrast.attrs["reference"]
    by_id = contrast.set_index("source_id")
    assert by_id.loc["policy", "score"] == 0 and by_id.loc["policy", "reference_score"] > 0
    assert by_id.loc["policy", "evidence"] == "resembles the reference as much as the output"
    assert by_id.loc["tier", "evidence"] == "resembles the output more than the reference"
    assert contrast.attrs["confidence"].top == "tier"


@pytest.mark.parametrize("reference", ["", "   ", 3, ["a"]])
async def test_a_reference_that_is_not_text_is_refused(planted_run, reference):
    with pytest.raises(ExplainConfigError) as refused:
        planted_run.suspects(reference=reference)
    assert refused.value.setting == "reference"


async def test_a_flat_ranking_says_it_is_a_shortlist(planted_run):
    frame = planted_run.suspects()
    confidence = frame.attrs["confidence"]
    assert confidence.top == frame.iloc[0].source_id
    assert confidence.clear_winner == (len(confidence.shortlist) == 1)
