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
objects. See :mod:`footprint_lab.context.assembly` for exactly what is recorded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.base.exports import public

if TYPE_CHECKING:
    from footprint_lab.context._retrieval import BM25Scorer as BM25Scorer
    from footprint_lab.context._retrieval import EmbeddingScorer as EmbeddingScorer
    from footprint_lab.context._stores import InMemoryStore as InMemoryStore
    from footprint_lab.context._stores import MemoryStore as MemoryStore
    from footprint_lab.context._stores import SQLiteStore as SQLiteStore
    from footprint_lab.context._triggers import IterationView as IterationView
    from footprint_lab.context._triggers import always as always
    from footprint_lab.context._triggers import on_tool_return as on_tool_return
    from footprint_lab.context._triggers import rule as rule
    from footprint_lab.context.assembly import ContextConfigError as ContextConfigError
    from footprint_lab.context.assembly import DuplicateContextIdError as DuplicateContextIdError
    from footprint_lab.context.assembly import UnknownFactReferenceError as UnknownFactReferenceError
    from footprint_lab.context.declarations import FactRoleError as FactRoleError
    from footprint_lab.context.declarations import Injection as Injection
    from footprint_lab.context.declarations import define_fact as define_fact
    from footprint_lab.context.declarations import define_instruction as define_instruction
    from footprint_lab.context.declarations import define_memory as define_memory
    from footprint_lab.context.declarations import define_rag as define_rag
    from footprint_lab.context.declarations import define_skill as define_skill
    from footprint_lab.context.declarations import define_steering as define_steering
    from footprint_lab.context.refusals import ContextDeclarationError as ContextDeclarationError

__all__ = [
    "BM25Scorer", "ContextConfigError", "ContextDeclarationError", "DuplicateContextIdError", "EmbeddingScorer",
    "FactRoleError", "InMemoryStore", "Injection", "IterationView", "MemoryStore", "SQLiteStore",
    "UnknownFactReferenceError", "always", "define_fact", "define_instruction", "define_memory", "define_rag",
    "define_skill", "define_steering", "on_tool_return", "rule",
]
__getattr__, __dir__ = public(__name__)

