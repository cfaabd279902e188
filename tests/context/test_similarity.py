"""Retrieval and influence ranking read words and vectors the same way (one tokenizer, one cosine)."""

from __future__ import annotations

import pytest

from footprint_lab.context import BM25Scorer, EmbeddingScorer
from footprint_lab.context.similarity import cosine, words
from footprint_lab.explain import EmbeddingInfluence
from footprint_lab.explain.provenance.influence import tokens


def test_words_fold_plurals_split_identifiers_and_keep_any_script():
    assert words("Refunds for order_id A-1001, process Größen") == [
        "refund", "for", "order", "id", "a", "1001", "process", "größen"]


def test_the_ranking_sees_the_words_the_retriever_matched():
    text = "Refunds take 5 days; the order_id is on the invoices."
    assert tokens(text) <= set(words(text))
    assert tokens(text) == set(words(text)) - {"the", "is", "on"}
    index = BM25Scorer().index(["Refund policy: invoices are final.", "Shipping is free."])
    first, second = index.scores("refunds and invoice")
    assert first > 0 and second == 0


def test_one_cosine_for_embedding_retrieval_and_embedding_influence():
    vectors = {"q": [1.0, 0.0], "a": [2.0, 0.0], "b": [1.0, 1.0], "c": [0.0, 3.0]}

    def embed(texts: list[str]) -> list[list[float]]:
        return [vectors[text] for text in texts]

    retrieved = EmbeddingScorer(embed).index(["a", "b", "c"]).scores("q")
    ranked = EmbeddingInfluence(embed).score("q", ["a", "b", "c"])
    assert retrieved == pytest.approx([1.0, 2 ** -0.5, 0.0])
    assert ranked == pytest.approx(retrieved)
    assert cosine([0.0, 0.0], [1.0, 2.0]) == 0.0
