"""Confusable tools come as groups, one finding each, found without comparing every pair yet exactly.

Reaches explain.checks._confusable: unit tests of the pair search behind lint_tools, which has no public name.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from footprint_lab import lint_tools
from footprint_lab.context.similarity import cosine, words
from footprint_lab.explain.checks._confusable import Dense, Lexical, groups, pairs
from footprint_lab.explain.checks.tool_lint import twins

ORDER_TOOLS = [
    {"name": "get_order_status", "description": "Returns the live status of an order."},
    {"name": "get_order_state", "description": "Returns the live state of an order."},
    {"name": "fetch_order_status", "description": "Returns the live status of one order."},
    {"name": "escalate", "description": "Hand the case to a person. Use when the customer asks for a manager."},
    {"name": "refund_payment", "description": "Refund a captured payment. Use after a return is received."},
    {"name": "refund_payments", "description": "Refund captured payments. Use after returns are received."},
]


def confusable(frame: Any) -> Any:
    return frame[frame.check == "confusable"].reset_index(drop=True)


def test_tools_that_read_alike_are_one_finding_naming_every_member_with_the_closest_pair() -> None:
    found = confusable(lint_tools(ORDER_TOOLS))
    assert len(found) == 2
    orders, refunds = found.iloc[0], found.iloc[1]
    assert orders.members == ["get_order_status", "get_order_state", "fetch_order_status"]
    assert "the closest pair of 3 tools that read alike" in orders.message
    assert all(f"'{name}'" in orders.message for name in orders.members)
    pairs_ = {frozenset((a, b)): score for a, b, score in
              ((a["name"], b["name"], _cosine(a, b)) for a, b in itertools.combinations(ORDER_TOOLS[:3], 2))}
    closest = max(pairs_.values())
    assert frozenset((orders.tool, orders.other)) == max(pairs_, key=pairs_.__getitem__)
    assert orders.score == round(closest, 4) and orders.margin == round(closest - orders.threshold, 4)
    assert refunds.members == ["refund_payment", "refund_payments"] and (refunds.tool, refunds.other) == tuple(
        refunds.members)
    assert "the closest pair" not in refunds.message and "reads like 'refund_payments'" in refunds.message


def test_thousands_of_near_identical_tools_give_one_finding() -> None:
    catalog = [{"name": f"lookup_record_{n}", "description": f"Returns the customer record {n} from the store."}
               for n in range(1500)]
    found = confusable(lint_tools(catalog))
    assert len(found) == 1
    group = found.iloc[0]
    assert len(group.members) == 1500 and (group.tool, group.other) == ("lookup_record_0", "lookup_record_1")
    assert "the closest pair of 1500 tools" in group.message and "and 1494 more" in group.message


def test_twins_are_still_each_tools_own_neighbours() -> None:
    slot = [{"type": "function", "function": tool} for tool in ORDER_TOOLS]
    near = twins(slot, "get_order_status")
    assert near == [("fetch_order_status", round(_cosine(ORDER_TOOLS[0], ORDER_TOOLS[2]), 4)),
                    ("get_order_state", round(_cosine(ORDER_TOOLS[0], ORDER_TOOLS[1]), 4))]
    # in one group through get_order_status, but not each other's twin: too far apart on their own
    assert [name for name, _ in twins(slot, "fetch_order_status")] == ["get_order_status"]
    assert _cosine(ORDER_TOOLS[1], ORDER_TOOLS[2]) < 0.6
    assert twins(slot, "escalate") == []


def _cosine(left: dict[str, str], right: dict[str, str]) -> float:
    from footprint_lab.explain.checks.tool_lint import name_words

    bags = [words(f"{' '.join(name_words(t['name']))} {t['description']}") for t in (left, right)]
    vocabulary = sorted(set(bags[0]) | set(bags[1]))
    return cosine([bags[0].count(w) for w in vocabulary], [bags[1].count(w) for w in vocabulary])


def brute(vectors: list[list[float]], threshold: float) -> list[tuple[int, int, float]]:
    """Every pair compared, as the lint used to."""
    return [(i, j, cosine(vectors[i], vectors[j])) for i, j in itertools.combinations(range(len(vectors)), 2)
            if cosine(vectors[i], vectors[j]) >= threshold - 1e-12]


def components(count: int, edges: list[tuple[int, int, float]]) -> list[tuple[int, ...]]:
    owner = list(range(count))

    def root(k: int) -> int:
        while owner[k] != k:
            k = owner[k]
        return k

    for i, j, _ in edges:
        owner[max(root(i), root(j))] = min(root(i), root(j))
    found: dict[int, list[int]] = {}
    for k in range(count):
        found.setdefault(root(k), []).append(k)
    return [tuple(members) for members in found.values() if len(members) > 1]


BAGS = st.lists(st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g"]), max_size=7), min_size=0, max_size=30)


@settings(max_examples=150, deadline=None)
@given(bags=BAGS, threshold=st.sampled_from([0.3, 0.5, 0.6, 0.8, 1.0]))
def test_the_candidate_search_finds_exactly_the_pairs_every_pair_comparison_finds(bags: list[list[str]],
                                                                                  threshold: float) -> None:
    vocabulary = sorted({word for bag in bags for word in bag})
    vectors = [[float(bag.count(word)) for word in vocabulary] for bag in bags]
    expected = brute(vectors, threshold)
    found = pairs(Lexical(bags), threshold)
    assert [(i, j) for i, j, _ in found] == [(i, j) for i, j, _ in expected]
    assert np.allclose([s for *_, s in found], [s for *_, s in expected])
    grouped = groups(Lexical(bags), threshold)
    assert [g.members for g in grouped] == components(len(bags), expected)
    for group in grouped:
        inside = [(i, j, s) for i, j, s in expected if i in group.members]
        top = max(s for *_, s in inside)
        assert np.isclose(group.score, top)
        assert group.closest == next((i, j) for i, j, s in inside if np.isclose(s, top))


def test_small_blocks_and_chunks_still_cover_every_pair(monkeypatch: Any) -> None:
    from footprint_lab.explain.checks import _confusable as module

    for name, size in (("BLOCK_ROWS", 7), ("BLOCK_WORDS", 13), ("BLOCK_CANDIDATES", 11)):
        monkeypatch.setattr(module, name, size)
    rng = np.random.default_rng(7)
    bags = [list(rng.choice(list("abcdefgh"), size=int(rng.integers(0, 6)))) for _ in range(150)]
    vocabulary = sorted({word for bag in bags for word in bag})
    vectors = [[float(bag.count(word)) for word in vocabulary] for bag in bags]
    expected = brute(vectors, 0.7)
    assert len(expected) > 500
    assert [(i, j) for i, j, _ in pairs(Lexical(bags), 0.7)] == [(i, j) for i, j, _ in expected]
    assert [(i, j) for i, j, _ in pairs(Dense(np.asarray(vectors)), 0.7)] == [(i, j) for i, j, _ in expected]
    for space in (Lexical(bags), Dense(np.asarray(vectors))):
        assert [g.members for g in groups(space, 0.7)] == components(len(bags), expected)
