"""Rebuilding an agent's declared context for a rerun: declarations removed, or forced in.

Rule kept here: a rerun changes exactly what it was asked to change. Explanations rerun an
agent without a suspect (ablation) or with a left-out piece forced back in (restoration),
and both are built from the agent's own declarations:

- **removed**: the declaration is gone; an instruction that cites a removed fact
  (``{fact:id}``) cites nothing in its place, so the fact's text leaves the prompt entirely.
- **forced in**: the declaration is admitted on every iteration (its trigger becomes
  ``always``; a RAG source keeps every chunk it retrieves, whatever the threshold), and when
  its slot has a budget it goes first in that slot with the budget raised by exactly what it
  needs, so every other declaration meets the same remaining budget as before and keeps its
  fate. A memory or RAG source's size is known only at run time, so forcing one lifts its
  slot's budget instead. A skill forced in is loaded from the first iteration: its body
  and its tools alike (``context.assembly`` offers the tools of a skill whose trigger is ``always``).

A rebuilt agent never writes to a memory store (``write_back`` is off on every memory
declaration): a rerun is an experiment, and a dozen ablation reruns must not leave a dozen
invented turns in a person's memory. It recalls what the original recalled, item for item
(:func:`recalling_as`): the original wrote its own answer back after recalling, and a rerun
that recalled the store's latest items would be sent that answer, which the original never saw.

Role: context layer; pure functions of declarations.
"""

from __future__ import annotations

import contextvars
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from footprint_lab.context._stores import MemoryStore
from footprint_lab.context._triggers import Always, always
from footprint_lab.context.declarations import FACT_REF, Injection, Instruction, Memory, Rag
from footprint_lab.redact.policy import PLACEHOLDER

if TYPE_CHECKING:
    from footprint_lab.record.recording import Recording

@dataclass(frozen=True, slots=True)
class Recalled:
    """What a recorded run recalled: per member (its mount path, ``""`` for the run itself) and memory declaration
    id, each item it was sent as its key and the text it was sent, in order (none: it recalled nothing); and the ids
    of the runs of its tree, whose own write-backs came after what they recalled."""

    items: Mapping[tuple[str, str], tuple[tuple[str, str], ...]]
    runs: frozenset[str]


#: what the explained run recalled, while its reruns run (:func:`recalling_as`)
_RECALLED: contextvars.ContextVar[Recalled | None] = contextvars.ContextVar("recalled", default=None)
#: how many of a namespace's latest items a rerun looks through for those a recorded run recalled
RECALL_REACH = 100_000


def item_text(item: Mapping[str, Any]) -> str:
    """A recalled memory item as the model is sent it (one piece each)."""
    return f"{item['role']}: {item['content']}"


def recalled_items(recording: Recording) -> Recalled:
    """What ``recording`` (its members and passes each apart) recalled from memory: see :class:`Recalled`. Each
    iteration lands the same recall again: the first iteration's pieces are the items (two alike are two)."""
    found: dict[tuple[str, str], list[tuple[Any, str, str]]] = {}
    runs: set[str] = set()
    pending = [recording]
    while pending:
        current = pending.pop()
        pending.extend(current.children)
        runs.add(current.run_id)
        for piece in current.context_pieces:
            if piece.source_kind == "memory" and ("item" in piece.detail or "recalled" in piece.detail):
                entries = found.setdefault((current.path, piece.source_id), [])  # a recall made: its items, or none
                if "item" in piece.detail:
                    entries.append((piece.iteration, str(piece.detail.get("item")), piece.content))
    items = {}
    for place, entries in found.items():
        first = entries[0][0] if entries else None  # pieces land in iteration order
        items[place] = tuple((key, text) for iteration, key, text in entries if iteration == first)
    return Recalled(items, frozenset(runs))


@contextmanager
def recalling_as(recalled: Recalled) -> Iterator[None]:
    """Inside, each memory declaration recalls as the recorded run did (:func:`recall`)."""
    token = _RECALLED.set(recalled)
    try:
        yield
    finally:
        _RECALLED.reset(token)


def recall(memory: Memory, namespace: str, path: str = "") -> list[dict[str, Any]]:
    """What ``memory`` recalls in ``namespace`` for the run mounted at ``path``: its store's latest items; inside
    :func:`recalling_as`, the very items the recorded run (that member, that pass) was sent, each found by its text
    (its key first, for two alike). Where they cannot all be found (a memory the run never recalled, another store
    behind the same path, texts a redaction masked, items deleted since), what the store held when the run ran: the
    latest items before the first one the run's tree wrote back (every item, without one), none of the tree's own."""
    recalled = _RECALLED.get()
    store: MemoryStore = memory.store
    if recalled is None:
        return store.recall(namespace, limit=memory.limit)
    items = store.recall(namespace, limit=RECALL_REACH)
    pinned = recalled.items.get((path, memory.id))
    if pinned is not None:
        found = _found(items, pinned)
        if found is not None:
            return found
    own = next((at for at, item in enumerate(items) if item.get("run_id") in recalled.runs), len(items))
    return [item for item in items[:own] if item.get("run_id") not in recalled.runs][-memory.limit:]


def _found(items: list[dict[str, Any]], pinned: tuple[tuple[str, str], ...]) -> list[dict[str, Any]] | None:
    """The items ``pinned`` names, each once and in order: by the text it was sent (the one with the pinned key first),
    or by its key alone where a redaction masked the text. One no longer in the store is left out, not made up;
    ``None`` when none of them is there."""
    left = list(items)
    found = []
    for key, text in pinned:
        alike = [item for item in left if item_text(item) == text]
        if not alike and PLACEHOLDER.search(text):
            alike = [item for item in left if str(item.get("key")) == key]
        if alike:
            chosen = next((item for item in alike if str(item.get("key")) == key), alike[-1])
            left.remove(chosen)
            found.append(chosen)
    return found if found or not pinned else None


def without_declarations(declarations: Sequence[Injection], removed: Collection[str]) -> list[Injection]:
    """The declarations minus ``removed``; instructions citing a removed fact no longer cite it.

    Memory declarations come back with ``write_back`` off: a rerun reads memory, never writes it.
    """
    kept: list[Injection] = []
    for declaration in declarations:
        if declaration.id in removed:
            continue
        if isinstance(declaration, Memory) and declaration.write_back:
            declaration = replace(declaration, write_back=False)
        if isinstance(declaration, Instruction) and declaration.template is not None \
                and any(ref in removed for ref in declaration.fact_refs):
            template = FACT_REF.sub(lambda match: "" if match.group(1) in removed else match.group(0),
                                    declaration.template)
            declaration = replace(declaration, template=template,
                                  fact_refs=tuple(ref for ref in declaration.fact_refs if ref not in removed))
        kept.append(declaration)
    return kept


def forced_declarations(
    declarations: Sequence[Injection], budgets: Mapping[str, int], forced: Collection[str], *, system_prompt: bool
) -> tuple[list[Injection], dict[str, int]]:
    """The declarations with ``forced`` ones admitted every iteration and past their slot's budget.

    ``system_prompt`` says whether the agent has its own system prompt, which the first system
    piece is joined to with a blank line (two characters of budget).
    """
    limits = dict(budgets)
    joined = system_prompt
    facts = {d.id: d.text for d in declarations if d.kind == "fact"}
    first: list[Injection] = []
    rest: list[Injection] = []
    for declaration in declarations:
        if declaration.id not in forced:
            rest.append(declaration)
            continue
        changed = declaration
        if not isinstance(declaration.trigger, Always):
            changed = replace(changed, trigger=always())
        if isinstance(changed, Rag):
            changed = replace(changed, threshold=min(changed.threshold, 0.0))
        slot = declaration.slot
        if slot not in limits:
            rest.append(changed)
            continue
        if isinstance(declaration, Memory | Rag):
            del limits[slot]
        else:
            text = declaration.render(facts) if isinstance(declaration, Instruction) else declaration.text
            separator = 2 if slot == "system" and joined else 0
            joined = joined or slot == "system"
            limits[slot] += len(text) + separator
        first.append(changed)
    return [*first, *rest], limits
