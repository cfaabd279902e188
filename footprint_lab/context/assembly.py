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
``engine.captured``; its keys that are not ``ContextPiece`` fields become its ``detail`` in
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

Role: context layer. Refusals raised here, when the agent is built: :class:`ContextConfigError`,
:class:`DuplicateContextIdError`, :class:`UnknownFactReferenceError`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, NamedTuple, cast

from footprint_lab.context.declarations import Injection, Instruction, Memory, Rag, Skill
from footprint_lab.context.retrieval import retrieve
from footprint_lab.context.triggers import Always, IterationView, OnToolReturn, Rule, Trigger, TriggerVerdict
from footprint_lab.engine.captured import (
    ALLOWED_BY,
    OVER_BUDGET,
    SOURCE_KIND,
    Cache,
    Evidence,
    PieceVerdict,
    Slot,
    captured_piece,
    evidence_of,
    piece_keys,
)
from footprint_lab.engine.recorder import Recorder
from footprint_lab.engine.refusal import Refusal, SettingRefusal, describe_shape
from footprint_lab.engine.schema import INJECTED_MESSAGES, KIND_REGISTRY, KIND_TOOL_RESULT, READ_SKILL, SLOTS

#: tracked state: the skills the model has loaded this turn (written by the tool step that loaded them)
SKILLS_PATH = ("context", "skills")
#: tracked state: the messages-slot injections of the last assemble step
INJECTED_PATH = INJECTED_MESSAGES


class ContextConfigError(SettingRefusal):
    """Raised when an agent's ``context=`` or ``budgets=`` is not something a run could use.

    Carries ``setting`` (``context`` or ``budgets``) and ``received`` (its shape).
    """

    code = "ERR_CONTEXT_CONFIG"


class DuplicateContextIdError(Refusal):
    """Raised when two context declarations of one agent share an id.

    Carries ``context_id`` and ``kinds`` (the kinds of the two declarations).
    """

    code = "ERR_DUPLICATE_CONTEXT_ID"
    fields = ("context_id", "kinds")

    def __init__(self, runner: str, context_id: str, kinds: tuple[str, str]) -> None:
        super().__init__(
            f"{runner}: two context declarations are named '{context_id}' (a {kinds[0]} and a {kinds[1]}). "
            "The recording cites every piece of context by its declaration id, so ids must be unique "
            "within an agent: rename one of them."
        )
        self.context_id = context_id
        self.kinds = kinds


class UnknownFactReferenceError(Refusal):
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
            raise ContextConfigError(runner, "budgets", describe_shape(budgets), fix)
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
    def build(cls, context: Any, budgets: Any, *, runner: str) -> ContextPlan | None:
        """Check ``context=`` and ``budgets=``; ``None`` when nothing is declared."""
        checked = _check_budgets(budgets, runner)
        fix = ("must be a list of declarations built with define_fact, define_steering, define_instruction, "
               "define_skill, define_memory or define_rag")
        if not isinstance(context, list | tuple):
            raise ContextConfigError(runner, "context", describe_shape(context), fix)
        seen: dict[str, str] = {}
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

    def start(self, rec: Recorder, message: str, history: list[dict[str, Any]], namespace: str) -> TurnContext:
        """The context state of one run (never kept on the agent)."""
        return TurnContext(self, rec, message, history, namespace)


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


class _ReadSkill:
    """The ``read_skill`` tool of one run: loading a skill changes only that run's context."""

    __slots__ = ("turn",)
    name = READ_SKILL

    def __init__(self, turn: TurnContext) -> None:
        self.turn = turn

    def check_args(self, args: Any) -> str | None:
        skill = args.get("skill") if isinstance(args, dict) else None
        if isinstance(skill, str) and skill in self.turn.plan.skills and len(args) == 1:
            return None
        names = ", ".join(self.turn.plan.skills)
        return (f"Invalid arguments for tool '{READ_SKILL}': give {{\"skill\": name}} with one of these names: "
                f"{names}. The tool was not run.")

    async def invoke(self, args: dict[str, Any], ctx: Any) -> str:
        return self.turn.load_skill(args["skill"])


class TurnContext:
    """One run's context state: loaded skills, recalled memory, retrieved chunks, the last injections."""

    __slots__ = ("_landed_tools", "_outcomes", "active_skills", "history", "injected", "injected_ids", "message",
                 "namespace", "plan", "rec", "returned")

    def __init__(self, plan: ContextPlan, rec: Recorder, message: str, history: list[dict[str, Any]],
                 namespace: str) -> None:
        self.plan = plan
        self.rec = rec
        self.message = message
        self.history = history
        self.namespace = namespace
        #: skill id -> the tool step that loaded it
        self.active_skills: dict[str, str] = {}
        #: (tool name, tool step) of the tool results since the last assistant turn
        self.returned: list[tuple[str, str]] = []
        self.injected: tuple[dict[str, Any], ...] = ()
        self.injected_ids: tuple[int, ...] = ()
        self._landed_tools: frozenset[str] = frozenset()
        #: a memory's recalled items, a RAG's retrieved chunks: worked out once per run, landed every iteration
        self._outcomes: dict[str, list[Outcome]] = {}
        if rec.policy is not None:
            for data in plan.structured:  # structured data: the policy sees its keys before its text
                rec.learn(data)

    # -- the assemble step ----------------------------------------------------------------
    def land(
        self, step_id: str, iteration: int, *, parts: list[str], system_ids: list[int],
        schemas: list[dict[str, Any]], tool_ids: list[int], withhold_tools: bool, history_chars: int,
    ) -> list[dict[str, Any]]:
        """Evaluate every declaration and land the admitted pieces; returns the tools slot's schemas.

        ``parts`` / ``system_ids`` / ``tool_ids`` hold the agent's own pieces and are extended in
        place; the messages-slot injections are left in ``injected`` / ``injected_ids``.

        Each piece is appended to the capture as one flat tuple (``engine.captured``): the parts a
        declaration's pieces share were worked out when the agent was built, an ``always`` trigger
        is not called, and declarations waiting on the same tool share one verdict.
        """
        rec = self.rec
        pieces = rec.pieces
        append = pieces.append
        self._scan_returned()
        results = self.history[len(self.history) - len(self.returned):] if self.returned else []
        view = IterationView(iteration, self.message, self.history, results)
        plan = self.plan
        if plan.skills:
            rec.read(SKILLS_PATH)
        used: dict[str, int] = {}
        if plan.budgets:
            used = {"system": sum(map(len, parts)) + 2 * max(len(parts) - 1, 0), "messages": history_chars,
                    "tools": sum(len(s.get("description") or "") for s in schemas)}
        injected: list[dict[str, Any]] = []
        injected_ids: list[int] = []
        history_length = len(self.history)
        # what the last call was sent, so an unchanged injection lands as the same message object
        earlier = {(m["role"], m["content"]): m for m in self.injected}
        on_tool_verdicts: dict[Any, TriggerVerdict] = {}
        for (injection, text, slot, kind, source_id, role, trigger, trigger_kind, cache, where, described, gives, plain,
             on_tool, limit, tail, shapes, single) in plan.declared:
            if plain:
                admitted, reason, evidence = True, "always", None
            elif on_tool is not None:
                verdict = on_tool_verdicts.get(on_tool)
                if verdict is None:
                    verdict = on_tool_verdicts[on_tool] = trigger.check(source_id, view, self)
                admitted, reason, evidence = verdict
            else:
                admitted, reason, evidence = trigger.check(source_id, view, self)
            activated = 0
            if evidence is not None:
                tail = (*tail, evidence)
                activated = 1
            if not admitted:
                append((shapes[activated], slot, -1, kind, source_id, text, trigger_kind, "skipped", reason, step_id,
                        None, iteration, cache, where, *tail))
                continue
            for content, values, skip, keys in self._admitted(injection, described) if gives else single:
                if skip is not None:
                    append((keys[activated], slot, -1, kind, source_id, content, trigger_kind, "skipped", skip,
                            step_id, None, iteration, cache, where, *values, *tail))
                    continue
                if limit is not None:
                    cost = len(content) + 2 if slot == "system" and parts else len(content)
                    before = used[slot]
                    if before + cost > limit:
                        append((keys[2 + activated], slot, -1, kind, source_id, content, trigger_kind, "dropped",
                                OVER_BUDGET, step_id, None, iteration, cache, where, *values, *tail, cost, limit,
                                before))
                        continue
                    used[slot] = before + cost
                if slot == "system":
                    system_ids.append(len(pieces))
                    position = len(parts)
                    parts.append(content)
                else:
                    injected_ids.append(len(pieces))
                    position = history_length + len(injected)
                    injected.append(earlier.get((role, content)) or {"role": role, "content": content})
                append((keys[activated], slot, position, kind, source_id, content, trigger_kind, "admitted", reason,
                        step_id, step_id, iteration, cache, where, *values, *tail))
        # Unchanged injections are kept as the same objects: a long run that injects the same
        # messages on every call then holds one copy, not one per call for the garbage collector
        # to walk (each call's pieces still record their own positions).
        if len(injected) != len(self.injected) or any(new is not old for new, old in zip(injected, self.injected,
                                                                                          strict=False)):
            self.injected = tuple(injected)
        self.injected_ids = tuple(injected_ids)
        if plan.writes_messages:
            rec.write(INJECTED_PATH, "set", self.injected)
        if withhold_tools or not plan.skills:
            self._landed_tools = frozenset()
            return schemas
        return self._land_tools(step_id, iteration, schemas, tool_ids, plan.budgets, used)

    def _land_tools(self, step_id: str, iteration: int, schemas: list[dict[str, Any]], tool_ids: list[int],
                    limits: dict[str, int], used: dict[str, int]) -> list[dict[str, Any]]:
        """``read_skill``, then the tools of every loaded skill, in declaration order."""
        plan = self.plan
        offered: list[tuple[str, str, str, str, dict[str, Any], Evidence]] = []
        assert plan.read_skill_schema is not None
        offered.append((KIND_REGISTRY, READ_SKILL, "always", "skills declared", plan.read_skill_schema,
                        Evidence(tool=READ_SKILL, skills=tuple(plan.skills))))
        for name, (skill_id, _, schema) in plan.skill_tools.items():
            loaded_by = self.active_skills.get(skill_id)
            if loaded_by is not None:
                offered.append(("skill", skill_id, "llm_activated", f"read_skill('{skill_id}')", schema,
                                Evidence(tool=name, activated_by=loaded_by)))
            elif isinstance(plan.skills[skill_id].trigger, Always):
                # A skill forced in (context.rebuild) is loaded from the start: its body and its tools alike.
                offered.append(("skill", skill_id, "always", "forced in: loaded from the first iteration", schema,
                                Evidence(tool=name)))
        landed = [*schemas]
        names = set()
        pieces = self.rec.pieces
        limit = limits.get("tools")
        for source_kind, source_id, trigger, reason, schema, detail in offered:
            content = schema.get("description") or ""
            verdict: PieceVerdict = "admitted"
            if limit is not None:
                before = used["tools"]
                if before + len(content) <= limit:
                    used["tools"] = before + len(content)
                else:
                    detail.update(Evidence(size=len(content), budget=limit, used=before))
                    verdict = "dropped"
            if verdict == "admitted":
                tool_ids.append(len(pieces))
                landed.append(schema)
                names.add(schema["name"])
            skill = plan.skills[source_id] if source_kind == "skill" else None
            pieces.append(captured_piece(
                "tools", source_kind, source_id, content, step=step_id, iteration=iteration,
                position=len(landed) - 1, verdict=verdict, reason=OVER_BUDGET if verdict == "dropped" else reason,
                trigger=trigger, cache="while_active" if skill else "always",
                declared_at=skill.declared_at if skill else None, **detail,
            ))
        self._landed_tools = frozenset(names)
        return landed

    def _admitted(self, injection: Injection, described: str | None) -> list[Outcome]:
        """What an admitted memory or RAG declaration gives, one outcome per piece (worked out once per run)."""
        outcomes = self._outcomes.get(injection.id)
        if outcomes is None:
            found = self._memory_outcomes(injection) if isinstance(injection, Memory) \
                else self._rag_outcomes(cast(Rag, injection))
            outcomes = self._outcomes[injection.id] = [
                (content, tuple(evidence.values()), skip, _shapes(tuple(evidence), described is not None))
                for content, evidence, skip in found
            ]
        return outcomes

    def _memory_outcomes(self, memory: Memory) -> list[tuple[str, Evidence, str | None]]:
        """The memory recalled for this run (once: the same items land on every iteration)."""
        items = memory.store.recall(self.namespace, limit=memory.limit)
        if not items:
            return [("", {"recalled": 0}, "nothing recalled: this identity's memory is empty")]
        return [
            (f"{item['role']}: {item['content']}",
             {"item": str(item.get("key")), "role": item["role"], "from_run": item.get("run_id")}, None)
            for item in items
        ]

    def _rag_outcomes(self, rag: Rag) -> list[tuple[str, Evidence, str | None]]:
        """The chunks retrieved for the user's message (once per run)."""
        hits = retrieve(rag.index, self.message, rag.top_k)
        if not hits:
            return [("", {"threshold": rag.threshold, "scorer": rag.scorer},
                      "nothing retrieved: no chunk scored above 0 for the message")]
        outcomes: list[tuple[str, Evidence, str | None]] = []
        for rank, (position, score) in enumerate(hits, 1):
            chunk = rag.chunks[position]
            detail = Evidence(chunk=chunk.chunk_id, document=chunk.document_id, score=score, rank=rank,
                              threshold=rag.threshold, scorer=rag.scorer)
            below = None if score >= rag.threshold else f"score {score:.4g} is below the threshold {rag.threshold:g}"
            outcomes.append((chunk.text, detail, below))
        return outcomes

    def _scan_returned(self) -> None:
        """The tool results since the last assistant turn, with the steps that produced them."""
        rec = self.rec
        pieces = rec.pieces
        returned: list[tuple[str, str]] = []
        for index in reversed(rec.message_pieces):
            piece = pieces[index]
            if piece[SOURCE_KIND] != KIND_TOOL_RESULT:
                break
            # a turn is admitted and landed at once
            returned.append((evidence_of(piece, "tool", ""), piece[ALLOWED_BY]))
        returned.reverse()
        self.returned = returned

    # -- the call, tool and final steps -----------------------------------------------------
    def injected_messages(self) -> tuple[tuple[dict[str, Any], ...], tuple[int, ...]]:
        """The messages-slot injections for the LLM call being made (read in its step)."""
        if self.plan.writes_messages:
            self.rec.read(INJECTED_PATH)
        return self.injected, self.injected_ids

    def tool(self, name: str) -> Any:
        """A tool this run's context offered in its last assemble step (``read_skill``, a loaded skill's)."""
        if name not in self._landed_tools:
            return None
        if name == READ_SKILL:  # made when asked for: kept here, it would hold this run in a reference cycle
            return _ReadSkill(self)
        return self.plan.skill_tools[name][1]

    def load_skill(self, skill_id: str) -> str:
        """Load a skill for the rest of the turn (called from the ``read_skill`` tool step)."""
        skill = self.plan.skills[skill_id]
        if skill_id in self.active_skills:
            return f"Skill '{skill_id}' is already loaded."
        self.active_skills[skill_id] = self.rec.current
        self.rec.write(SKILLS_PATH, "append", skill_id)
        what = "instructions and tools are" if skill.tools else "instructions are"
        return f"Skill '{skill_id}' loaded: its {what} in your context from your next step until this turn ends."

    def after_answer(self, answer: str) -> None:
        """Write the turn back to every writing memory (in the final step, after the answer)."""
        run_id = self.rec.run_id
        items = [{"role": "user", "content": self.message, "run_id": run_id}]
        if answer:
            items.append({"role": "assistant", "content": answer, "run_id": run_id})
        for memory in self.plan.memories:
            memory.store.remember(self.namespace, items)
            self.rec.write(("memory", memory.id), "set", items)
