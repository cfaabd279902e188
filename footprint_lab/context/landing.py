"""One run's context, landed iteration by iteration: every declaration of the plan evaluated and recorded.

Rule kept here: every declared piece is accounted for on every iteration (the module docstring of
:mod:`footprint_lab.context.assembly` says what each piece records). A :class:`TurnContext` is
made by ``ContextPlan.start`` for one run and never kept on the agent: it evaluates each
declaration's trigger, lands what is admitted within the slot budgets, records one piece per
outcome, offers the ``read_skill`` tool of that run and writes the run back to memory after
its answer.

Role: context layer.
"""

from __future__ import annotations

from typing import Any, cast

from footprint_lab.context._retrieval import retrieve
from footprint_lab.context._triggers import Always, IterationView, TriggerVerdict
from footprint_lab.context.assembly import (
    INJECTED_PATH,
    SKILLS_PATH,
    ContextPlan,
    Outcome,
    _shapes,
)
from footprint_lab.context.declarations import Injection, Memory, Rag
from footprint_lab.context.rebuild import item_text, recall
from footprint_lab.record.captured import (
    ALLOWED_BY,
    OVER_BUDGET,
    SOURCE_KIND,
    Evidence,
    PieceVerdict,
    captured_piece,
    evidence_of,
)
from footprint_lab.record.recorder import Recorder
from footprint_lab.record.schema import KIND_REGISTRY, KIND_TOOL_RESULT, READ_SKILL


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

        Each piece is appended to the capture as one flat tuple (``record.captured``): the parts a
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
        items = recall(memory, self.namespace, self.rec.path)
        if not items:
            return [("", {"recalled": 0}, "nothing recalled: this identity's memory is empty")]
        return [
            (item_text(item),
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
