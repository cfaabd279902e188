"""Slot assembly: an agent's declarations checked once at build, then evaluated and landed every iteration.

Rule kept here: every declared piece is accounted for on every iteration. Each ``assemble``
step evaluates every declaration's trigger and records one context piece per outcome:

- ``admitted``: it landed in a slot, at a position, in that step (``landed_by``);
- ``skipped``: its trigger said no (the reason says why: ``rule did not match``,
  ``rule raised: KeyError``, ``waiting for tool 'x' to return``, ``not loaded...``), or it
  had nothing to give (no memory recalled, a RAG chunk below its threshold);
- ``dropped``: its trigger said yes but the slot's character budget was spent; the piece
  records its ``size``, the ``budget`` and what was ``used``.

So "this was available but never reached the model" is always answerable from the recording.
Skipped and dropped pieces have ``position == -1`` and ``landed_by is None``.

What each piece records (a flat tuple of plain values in ``Recorder.pieces``, see
``record.captured``; its keys that are not ``ContextPiece`` fields become its ``detail`` in
the recording):

- BORN: ``source_kind`` (fact, steering, instruction, skill, memory, rag, or ``registry``
  for the ``read_skill`` tool), ``source_id`` (the declaration id), ``trigger`` (the
  trigger's kind), ``declared_at`` (``file:line`` of the declaration), ``cache`` (the hint);
  ``detail["condition"]`` spells out a rule or tool trigger (``rule(is_refund)``,
  ``on_tool_return('lookup')``).
- ALLOWED: ``verdict``, ``reason`` and ``allowed_by`` (the assemble step that evaluated it);
  for ``on_tool_return`` and skills, ``detail["activated_by"]`` is the tool step whose
  result let it in.
- LANDED: ``landed_by`` (the assemble step; its one commit holds the system text and tool
  names), ``slot``, ``position`` (index in the system pieces, in the request's messages, or
  in the tools list); the content hash is computed when the ``Recording`` is built.
- READ: the ``LLMExchange`` of the next call lists the piece in ``system_pieces``,
  ``message_pieces`` or ``tool_pieces`` and holds each slot's exact text as sent.

Kind-specific detail: memory pieces carry ``item`` (the store's key), ``role`` and
``from_run`` (the run that wrote it); RAG pieces carry ``chunk``, ``document``, ``score``,
``rank`` (1 = best), ``threshold`` and ``scorer``; a skill's tools carry ``tool``.

Placement: system pieces follow the agent's own system prompt in declaration order and are
joined with a blank line; messages-slot facts follow the conversation; the tools slot is the
agent's tools, then ``read_skill`` (when any skill is declared), then the tools of loaded
skills. Budgets count characters of content (plus the blank-line separators in the system
slot, so the system text sent never exceeds its budget); the agent's own pieces (its system
prompt, the conversation, its tools) are never dropped, but they count.

Cost: a declaration's pieces share most of what they record, so that is worked out once when
the agent is built (:class:`_Declared`); an ``always`` trigger is not called, declarations
waiting on the same tool share one verdict per iteration, memory is recalled and RAG chunks
retrieved once per run, and each piece is one tuple appended to the capture
(bench/bench_context.py: 200 declarations over 10 iterations record 2,268 pieces).

The plan (built once, with the agent) is here; the landing of one run's pieces, iteration by
iteration, is :class:`footprint_lab.context.landing.TurnContext` (``TurnContext(plan, ...)``).

Role: context layer. Refusals raised here, when the agent is built: :class:`ContextConfigError`,
:class:`DuplicateContextIdError` (two sources of one id: declarations, the agent's tools and the pieces the
runner names itself share one space of source ids), :class:`UnknownFactReferenceError`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from footprint_lab.base.refusal import Refusal, SettingRefusal, describe_shape
from footprint_lab.context._triggers import OnToolReturn, Rule, Trigger
from footprint_lab.context.declarations import Injection, Instruction, Memory, Rag, Skill
from footprint_lab.context.source_ids import RESERVED_IDS
from footprint_lab.record.captured import (
    Cache,
    Slot,
    piece_keys,
)
from footprint_lab.record.schema import INJECTED_MESSAGES, READ_SKILL, SLOTS

#: tracked state: the skills the model has loaded this turn (written by the tool step that loaded them)
SKILLS_PATH = ("context", "skills")
#: tracked state: the messages-slot injections of the last assemble step
INJECTED_PATH = INJECTED_MESSAGES


class ContextConfigError(SettingRefusal):
    """Raised when an agent's ``context=`` or ``budgets=`` is not something a run could use.

    Carries ``setting`` (``context`` or ``budgets``) and ``received`` (its shape).
    """

    code = "ERR_CONTEXT_CONFIG"


class DuplicateContextIdError(Refusal, ValueError):
    """Raised when two sources of one agent's context would share an id: two declarations, a declaration and
    one of the agent's tools, or a tool and a piece the runner names itself (``system-prompt``, ``user-message``).

    Carries ``context_id`` (a declared id or a tool's name, both checked to be safe to show) and ``kinds``
    (what the two sources are: ``fact``, ``tool``, ``the agent's system prompt``...).
    """

    code = "ERR_DUPLICATE_CONTEXT_ID"
    fields = ("context_id", "kinds")

    def __init__(self, runner: str, context_id: str, kinds: tuple[str, str]) -> None:
        if "tool" not in kinds:
            fix = "rename one of them (its id=...)"
        elif kinds[0] in RESERVED_IDS.values():
            fix = f"rename the tool (define_tool(name=...) or @tool(name=...)): '{context_id}' is reserved"
        else:
            fix = "rename the declaration (its id=...) or the tool (define_tool(name=...) or @tool(name=...))"
        super().__init__(
            f"{runner}: two sources of context are named '{context_id}' ({_a(kinds[0])} and {_a(kinds[1])}). "
            "The recording cites every piece of context by its source id, and a rerun removes a source by it "
            f"(agent.without, localize), so ids must be unique within an agent: {fix}."
        )
        self.context_id = context_id
        self.kinds = kinds


def _a(kind: str) -> str:
    """A kind of source with its article: ``a fact``, ``an instruction``, ``the agent's system prompt``."""
    return kind if kind.startswith("the ") else f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind}"


class UnknownFactReferenceError(Refusal, ValueError):
    """Raised when an instruction's template cites ``{fact:id}`` and the agent declares no such fact.

    Carries ``instruction_id`` and ``fact_id`` (both declared names, never the fact's data).
    """

    code = "ERR_UNKNOWN_FACT_REF"
    fields = ("instruction_id", "fact_id")

    def __init__(self, runner: str, instruction_id: str, fact_id: str) -> None:
        super().__init__(
            f"{runner}: instruction '{instruction_id}' cites {{fact:{fact_id}}}, but no fact of this agent has "
            f"that id. Add define_fact(id='{fact_id}', data=...) to the same context=[...] list, or correct the "
            "reference in the template."
        )
        self.instruction_id = instruction_id
        self.fact_id = fact_id


def _described(injection: Injection) -> str | None:
    trigger = injection.trigger
    return trigger.describe() if isinstance(trigger, Rule | OnToolReturn) else None


def _check_budgets(budgets: Any, runner: str) -> dict[str, int]:
    if budgets is None:
        return {}
    fix = ("must map slot names ('system', 'messages', 'tools') to a character budget, a whole number "
           "from 0 up, e.g. budgets={'system': 4000}")
    if not isinstance(budgets, Mapping):
        raise ContextConfigError(runner, "budgets", describe_shape(budgets), fix)
    checked: dict[str, int] = {}
    for slot, limit in budgets.items():
        if slot not in SLOTS or not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
            raise ContextConfigError(runner, "budgets", describe_shape(budgets, SLOTS), fix)
        checked[slot] = limit
    return checked


class ContextPlan:
    """An agent's context declarations, checked and prepared once, when the agent is built."""

    __slots__ = ("budgets", "declared", "entries", "memories", "read_skill_schema", "skill_tools", "skills",
                 "structured", "writes_messages")

    def __init__(self, entries: list[tuple[Injection, str, str | None]], budgets: dict[str, int]) -> None:
        #: (declaration, the text it lands when admitted, its trigger spelled out or None)
        self.entries = entries
        #: the same, with what every piece of each declaration records alike worked out once
        self.declared = [_declared(injection, text, described, budgets) for injection, text, described in entries]
        self.budgets = budgets
        #: the structured data of facts, which a redaction policy reads before their text
        self.structured = [injection.data for injection, _, _ in entries if injection.data is not None]
        self.skills: dict[str, Skill] = {i.id: i for i, _, _ in entries if isinstance(i, Skill)}
        self.memories = [i for i, _, _ in entries if isinstance(i, Memory) and i.write_back]
        self.writes_messages = any(i.slot == "messages" for i, _, _ in entries)
        #: name -> (skill id, tool, schema) for every skill's tools
        self.skill_tools: dict[str, tuple[str, Any, dict[str, Any]]] = {
            tool.name: (skill.id, tool, tool.schema()) for skill in self.skills.values() for tool in skill.tools
        }
        self.read_skill_schema = self._read_skill_schema() if self.skills else None

    @classmethod
    def build(cls, context: Any, budgets: Any, *, runner: str, tools: Sequence[str] = ()) -> ContextPlan | None:
        """Check ``context=`` and ``budgets=``; ``None`` when nothing is declared.

        ``tools`` are the names of the agent's own tools: with the ids the runner gives its own pieces, they
        share one space of source ids with the declarations, so each id names one source.
        """
        checked = _check_budgets(budgets, runner)
        fix = ("must be a list of declarations built with define_fact, define_steering, define_instruction, "
               "define_skill, define_memory or define_rag")
        if not isinstance(context, list | tuple):
            raise ContextConfigError(runner, "context", describe_shape(context), fix)
        seen = dict(RESERVED_IDS)
        for name in tools:
            if name in seen and name != READ_SKILL:  # a tool named read_skill clashes only with skills (Agent)
                raise DuplicateContextIdError(runner, name, (seen[name], "tool"))
            seen[name] = "tool"
        for item in context:
            if not isinstance(item, Injection):
                raise ContextConfigError(runner, "context", f"an entry that is {describe_shape(item)}", fix)
            if item.id in seen:
                raise DuplicateContextIdError(runner, item.id, (seen[item.id], item.kind))
            seen[item.id] = item.kind
        facts = {item.id: item.text for item in context if item.kind == "fact"}
        for item in context:
            if isinstance(item, Instruction):
                for fact_id in item.fact_refs:
                    if fact_id not in facts:
                        raise UnknownFactReferenceError(runner, item.id, fact_id)
        if not context:
            return None
        entries = [
            (item, item.render(facts) if isinstance(item, Instruction) else item.text, _described(item))
            for item in context
        ]
        return cls(entries, checked)

    def _read_skill_schema(self) -> dict[str, Any]:
        listing = "\n".join(f"- {skill.id}: {skill.description}" for skill in self.skills.values())
        return {
            "name": READ_SKILL,
            "description": "Load a skill's instructions (and its tools, if it has any) into your context; they "
                           f"are there from your next step until this turn ends. Skills:\n{listing}",
            "input_schema": {
                "type": "object",
                "properties": {"skill": {"type": "string", "enum": list(self.skills)}},
                "required": ["skill"],
                "additionalProperties": False,
            },
        }



#: Evidence a dropped piece carries: its size, the slot's budget, and what was used before it.
DROPPED = ("size", "budget", "used")


@functools.lru_cache(maxsize=256)
def _shapes(evidence: tuple[str, ...], described: bool) -> tuple[tuple[str, ...], ...]:
    """The keys of a declaration's pieces that carry ``evidence`` (and ``condition`` when its trigger is
    spelled out), indexed by ``2 * dropped + activated``: ``activated_by`` and the budget's three
    numbers follow when the piece has them."""
    base = evidence + (("condition",) if described else ())
    return tuple(piece_keys(base + (("activated_by",) if activated else ()) + (DROPPED if dropped else ()))
                 for dropped in (False, True) for activated in (False, True))


#: an outcome of an admitted declaration: (content, evidence values, skip reason or None, piece keys by shape)
Outcome = tuple[str, tuple[Any, ...], str | None, tuple[tuple[str, ...], ...]]


class _Declared(NamedTuple):
    """One declaration as assembly uses it: what all its pieces record alike, worked out when the agent is built.

    A tuple, so that the assemble loop unpacks it into locals in one go.
    """

    injection: Injection
    #: the text it lands when admitted (empty for memory and RAG, whose pieces come from the run)
    text: str
    slot: Slot
    kind: str
    source_id: str
    role: str | None
    trigger: Trigger
    trigger_kind: str
    cache: Cache
    where: str | None
    #: its trigger spelled out (a rule, a tool trigger), or None
    described: str | None
    #: what it gives depends on the run (recalled memory, retrieved chunks), not on its text alone
    gives: bool
    #: its trigger admits it on every iteration, with nothing to evaluate
    plain: bool
    #: an on_tool_return trigger's target: one verdict per target and iteration, however many declare it
    on_tool: Any
    #: its slot's character budget, or None
    limit: int | None
    #: the evidence values every piece of it ends with, before ``activated_by`` and a budget's numbers
    tail: tuple[Any, ...]
    #: its pieces' keys by shape (see :func:`_shapes`)
    shapes: tuple[tuple[str, ...], ...]
    #: what it gives when admitted, unless it ``gives`` per run: its text, as the one outcome
    single: tuple[Outcome, ...]


def _declared(injection: Injection, text: str, described: str | None, budgets: dict[str, int]) -> _Declared:
    trigger = injection.trigger
    gives = isinstance(injection, Memory | Rag)
    shapes = _shapes((), described is not None)
    return _Declared(
        injection, text, injection.slot, injection.kind, injection.id, injection.role, trigger, trigger.kind,
        injection.cache, injection.declared_at, described, gives, trigger.kind == "always" and not gives,
        trigger.target if isinstance(trigger, OnToolReturn) else None, budgets.get(injection.slot),
        (described,) if described is not None else (), shapes, ((text, (), None, shapes),),
    )
