"""Context engineering with provenance: what an agent may be given, declared and tracked.

Declare pieces of context and hand them to an agent::

    from footprint_lab import Agent
    from footprint_lab.context import define_fact, define_instruction, define_skill, on_tool_return

    agent = Agent(
        provider=...,
        context=[
            define_fact(id="plan", data={"tier": "pro"}),
            define_instruction(id="refunds", template="Refund rules apply to {fact:plan}.",
                               active_when=lambda view: "refund" in view.message),
            define_fact(id="order-help", data="Orders older than 30 days are final.",
                        trigger=on_tool_return("lookup_order")),
            define_skill(id="billing", description="Invoices and charges", body="..."),
        ],
        budgets={"system": 4000},
    )

Every piece is recorded on every iteration, admitted, skipped or dropped, with where it was
declared, why its trigger let it in (or not), the step that landed it and the LLM call that
read it: ``run.context()`` shows one call's context as a table, ``run.context_pieces()`` as
objects. See :mod:`footprint_lab.context._assembly` for exactly what is recorded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.engine._exports import public

if TYPE_CHECKING:
    from footprint_lab.context._assembly import ContextConfigError, DuplicateContextIdError, UnknownFactReferenceError
    from footprint_lab.context._declarations import (
        ContextDeclarationError,
        FactRoleError,
        Injection,
        define_fact,
        define_instruction,
        define_memory,
        define_rag,
        define_skill,
        define_steering,
    )
    from footprint_lab.context._retrieval import BM25Scorer, EmbeddingScorer
    from footprint_lab.context._stores import InMemoryStore, MemoryStore, SQLiteStore
    from footprint_lab.context._triggers import IterationView, always, on_tool_return, rule

__all__, __getattr__, __dir__ = public(__name__)

