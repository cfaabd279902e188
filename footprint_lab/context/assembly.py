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

What each piece records (a flat dict of plain values in ``Recorder.pieces``, whose keys that
are not ``ContextPiece`` fields become its ``detail`` in the recording):

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

Role: context layer. Refusals raised here, when the agent is built: :class:`ContextConfigError`,
:class:`DuplicateContextIdError`, :class:`UnknownFactReferenceError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from footprint_lab.context.declarations import Injection, Instruction, Memory, Rag, Skill
from footprint_lab.context.retrieval import retrieve
from footprint_lab.context.triggers import Always, IterationView, OnToolReturn, Rule
from footprint_lab.engine.captured import Evidence, Slot, Verdict, captured_piece
from footprint_lab.engine.recorder import Recorder
from footprint_lab.engine.refusal import Refusal, SettingRefusal, describe_shape

READ_SKILL = "read_skill"
SLOTS = ("system", "messages", "tools")
#: tracked state: the skills the model has loaded this turn (written by the tool step that loaded them)
SKILLS_PATH = ("context", "skills")
#: tracked state: the messages-slot injections of the last assemble step
INJECTED_PATH = ("slots", "injected_messages")


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

    __slots__ = ("budgets", "entries", "memories", "read_skill_schema", "skill_tools", "skills", "writes_messages")

    def __init__(self, entries: list[tuple[Injection, str, str | None]], budgets: dict[str, int]) -> None:
        #: (declaration, the text it lands when admitted, its trigger spelled out or None)
        self.entries = entries
        self.budgets = budgets
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


class _Budget:
    """What is left of each slot's character budget during one assemble step."""

    __slots__ = ("limits", "used")

    def __init__(self, limits: dict[str, int], used: dict[str, int]) -> None:
        self.limits = limits
        self.used = used

    def take(self, slot: str, cost: int, detail: Evidence) -> str | None:
        """``None`` when ``cost`` fits (and is taken), else the reason it was dropped."""
        limit = self.limits.get(slot)
        if limit is None:
            return None
        used = self.used[slot]
        if used + cost <= limit:
            self.used[slot] = used + cost
            return None
        detail.update(Evidence(size=cost, budget=limit, used=used))
        return f"over the {slot} budget of {limit} characters: {used} used, this piece needs {cost}"


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

    __slots__ = ("_landed_tools", "_recalled", "_retrieved", "active_skills", "history", "injected",
                 "injected_ids", "message", "namespace", "plan", "read_skill", "rec", "returned")

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
        self.read_skill = _ReadSkill(self)
        self._landed_tools: frozenset[str] = frozenset()
        self._recalled: dict[str, list[dict[str, Any]]] = {}
        self._retrieved: dict[str, list[tuple[int, float]]] = {}
        for injection, _, _ in plan.entries:
            if injection.data is not None:  # structured data: the policy sees its keys before its text
                rec.learn(injection.data)

    # -- the assemble step ----------------------------------------------------------------
    def land(
        self, step_id: str, iteration: int, *, parts: list[str], system_ids: list[int],
        schemas: list[dict[str, Any]], tool_ids: list[int], withhold_tools: bool, history_chars: int,
    ) -> list[dict[str, Any]]:
        """Evaluate every declaration and land the admitted pieces; returns the tools slot's schemas.

        ``parts`` / ``system_ids`` / ``tool_ids`` hold the agent's own pieces and are extended in
        place; the messages-slot injections are left in ``injected`` / ``injected_ids``.
        """
        rec = self.rec
        pieces = rec.pieces
        self._scan_returned()
        results = self.history[len(self.history) - len(self.returned):] if self.returned else []
        view = IterationView(iteration, self.message, self.history, results)
        if self.plan.skills:
            rec.read(SKILLS_PATH)
        budget = None
        if self.plan.budgets:
            system_used = sum(map(len, parts)) + 2 * max(len(parts) - 1, 0)
            tools_used = sum(len(s.get("description") or "") for s in schemas)
            budget = _Budget(self.plan.budgets, {"system": system_used, "messages": history_chars,
                                                 "tools": tools_used})
        injected: list[dict[str, Any]] = []
        injected_ids: list[int] = []
        history_length = len(self.history)
        # what the last call was sent, so an unchanged injection lands as the same message object
        earlier = {(m["role"], m["content"]): m for m in self.injected}
        for injection, text, described in self.plan.entries:
            admitted, reason, evidence = injection.trigger.check(injection.id, view, self)
            outcomes = self._outcomes(injection, text) if admitted else [(text, Evidence(), reason)]
            for content, detail, skip in outcomes:
                if described is not None:
                    detail["condition"] = described
                if evidence is not None:
                    detail["activated_by"] = evidence
                if skip is not None:
                    self._record(injection, injection.slot, content, "skipped", skip, step_id, iteration, -1, detail)
                    continue
                slot = injection.slot
                cost = len(content) + (2 if slot == "system" and parts else 0)
                dropped = budget.take(slot, cost, detail) if budget is not None else None
                if dropped is not None:
                    self._record(injection, slot, content, "dropped", dropped, step_id, iteration, -1, detail)
                elif slot == "system":
                    system_ids.append(len(pieces))
                    parts.append(content)
                    self._record(injection, slot, content, "admitted", reason, step_id, iteration, len(parts) - 1,
                                 detail)
                else:
                    injected_ids.append(len(pieces))
                    injected.append(earlier.get((injection.role, content))
                                    or {"role": injection.role, "content": content})
                    self._record(injection, slot, content, "admitted", reason, step_id, iteration,
                                 history_length + len(injected) - 1, detail)
        # Unchanged injections are kept as the same objects: a long run that injects the same
        # messages on every call then holds one copy, not one per call for the garbage collector
        # to walk (each call's pieces still record their own positions).
        if len(injected) != len(self.injected) or any(new is not old for new, old in zip(injected, self.injected,
                                                                                          strict=False)):
            self.injected = tuple(injected)
        self.injected_ids = tuple(injected_ids)
        if self.plan.writes_messages:
            rec.write(INJECTED_PATH, "set", self.injected)
        if withhold_tools or not self.plan.skills:
            self._landed_tools = frozenset()
            return schemas
        return self._land_tools(step_id, iteration, schemas, tool_ids, budget)

    def _land_tools(self, step_id: str, iteration: int, schemas: list[dict[str, Any]], tool_ids: list[int],
                    budget: _Budget | None) -> list[dict[str, Any]]:
        """``read_skill``, then the tools of every loaded skill, in declaration order."""
        plan = self.plan
        offered: list[tuple[str, str, str, str, dict[str, Any], Evidence]] = []
        assert plan.read_skill_schema is not None
        offered.append(("registry", READ_SKILL, "always", "skills declared", plan.read_skill_schema,
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
        for source_kind, source_id, trigger, reason, schema, detail in offered:
            content = schema.get("description") or ""
            dropped = budget.take("tools", len(content), detail) if budget is not None else None
            verdict: Verdict = "dropped" if dropped is not None else "admitted"
            if dropped is None:
                tool_ids.append(len(pieces))
                landed.append(schema)
                names.add(schema["name"])
            skill = plan.skills[source_id] if source_kind == "skill" else None
            pieces.append(captured_piece(
                "tools", source_kind, source_id, content, step=step_id, iteration=iteration,
                position=len(landed) - 1, verdict=verdict, reason=dropped or reason, trigger=trigger,
                cache="while_active" if skill else "always", declared_at=skill.declared_at if skill else None,
                **detail,
            ))
        self._landed_tools = frozenset(names)
        return landed

    def _record(self, injection: Injection, slot: Slot, content: str, verdict: Verdict, reason: str, step_id: str,
                iteration: int, position: int, detail: Evidence) -> None:
        self.rec.pieces.append(captured_piece(
            slot, injection.kind, injection.id, content, step=step_id, iteration=iteration, position=position,
            verdict=verdict, reason=reason, trigger=injection.trigger.kind, cache=injection.cache,
            declared_at=injection.declared_at, **detail,
        ))

    def _outcomes(self, injection: Injection, text: str) -> list[tuple[str, Evidence, str | None]]:
        """What an admitted declaration gives: ``(content, detail, skip reason or None)`` per piece."""
        if isinstance(injection, Memory):
            return self._memory_outcomes(injection)
        if isinstance(injection, Rag):
            return self._rag_outcomes(injection)
        return [(text, {}, None)]

    def _memory_outcomes(self, memory: Memory) -> list[tuple[str, Evidence, str | None]]:
        items = self._recalled.get(memory.id)
        if items is None:  # recalled once per run; the same items land on every iteration
            items = self._recalled[memory.id] = memory.store.recall(self.namespace, limit=memory.limit)
        if not items:
            return [("", {"recalled": 0}, "nothing recalled: this identity's memory is empty")]
        return [
            (f"{item['role']}: {item['content']}",
             {"item": str(item.get("key")), "role": item["role"], "from_run": item.get("run_id")}, None)
            for item in items
        ]

    def _rag_outcomes(self, rag: Rag) -> list[tuple[str, Evidence, str | None]]:
        hits = self._retrieved.get(rag.id)
        if hits is None:  # retrieved once per run, for the user's message
            hits = self._retrieved[rag.id] = retrieve(rag.index, self.message, rag.top_k)
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
            if piece["source_kind"] != "tool_result":
                break
            returned.append((piece.get("tool", ""), piece["allowed_by"]))  # a turn is admitted and landed at once
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
        if name == READ_SKILL:
            return self.read_skill
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
