"""Declared context in runs: triggers, skills, memory, RAG, budgets, and the provenance recorded for each."""

from __future__ import annotations

import gc
import re

import pytest

from footprint_lab import Agent, Identity, Recording, Run, define_tool
from footprint_lab.context import (
    EmbeddingScorer,
    InMemoryStore,
    SQLiteStore,
    define_fact,
    define_instruction,
    define_memory,
    define_rag,
    define_skill,
    define_steering,
    on_tool_return,
)
from footprint_lab.core.agent import turn_text
from footprint_lab.errors import CallNotFoundError
from footprint_lab.providers import LLMRequest, MessagesView, mock


class Script:
    """A scripted mock that also keeps every request it answered."""

    def __init__(self, replies):
        self.replies = replies
        self.requests: list[LLMRequest] = []
        self.provider = mock(respond=self.respond)

    def respond(self, request: LLMRequest):
        self.requests.append(request)
        return self.replies[request.call_index]


def make_tool(name, result="ok"):
    return define_tool(name=name, description=f"The {name} tool.", input_schema={"type": "object"},
                       fn=lambda: result)


def pieces_of(run: Run, source_id: str):
    return [p for p in run.recording.context_pieces if p.source_id == source_id]


def verdicts(run: Run, source_id: str) -> dict[int, str]:
    return {p.iteration: p.verdict for p in pieces_of(run, source_id)}


def calls_with(script: Script, text: str) -> list[int]:
    return [r.call_index for r in script.requests if text in r.system]


def assert_pieces_add_up(recording: Recording) -> None:
    """Each slot's admitted pieces are exactly what the call sent."""
    pieces = recording.context_pieces
    for exchange in recording.exchanges:
        slots = recording.exchange_pieces(exchange)
        assert "\n\n".join(pieces[i].content for i in slots["system"]) == exchange.system
        messages = recording.request_messages(exchange)
        assert [pieces[i].content for i in slots["messages"]] == [turn_text(m) for m in messages]
        assert [pieces[i].position for i in slots["messages"]] == list(range(len(messages)))
        names = [pieces[i].detail.get("tool", pieces[i].source_id) for i in slots["tools"]]
        assert names == [t["name"] for t in exchange.tools]
        assert [pieces[i].content for i in slots["tools"]] == [t["description"] for t in exchange.tools]
        assert [pieces[i].position for i in slots["tools"]] == list(range(len(exchange.tools)))
        assert [pieces[i].position for i in slots["system"]] == list(range(len(slots["system"])))
        for indices in slots.values():
            assert all(pieces[i].verdict == "admitted" for i in indices)
        # LANDED -> READ: the step that landed the system pieces committed exactly the text this call read
        landed = {pieces[i].landed_by for i in slots["system"] + slots["tools"]}
        if landed:
            [step] = landed
            commit = next(c for c in recording.commits if c.step_id == step)
            assert [e.value for e in commit.entries if e.path == ["slots", "system"]] == [exchange.system]
            read = next(r for r in recording.reads if r.step_id == exchange.step_id and r.path == ["slots", "system"])
            assert read.writer == step


# -- always, rule, and what a rule sees ---------------------------------------------------------
async def test_steering_and_facts_land_every_iteration_after_the_system_prompt():
    script = Script([{"tool": "noop", "args": {}}, "done"])
    agent = Agent(provider=script.provider, system="Base.", tools=[make_tool("noop")], context=[
        define_steering(id="tone", prompt="Be brief."),
        define_fact(id="plan", data={"tier": "pro"}),
    ])
    run = await agent.run("go")
    assert [r.system for r in script.requests] == ['Base.\n\nBe brief.\n\n{"tier": "pro"}'] * 2
    for piece in pieces_of(run, "tone"):
        assert (piece.source_kind, piece.trigger, piece.reason) == ("steering", "always", "always")
        assert piece.cache == "always"
        assert piece.landed_by == piece.allowed_by and piece.landed_by.startswith("assemble#")
        assert piece.declared_at.rsplit(":", 1)[0].endswith("test_context_runs.py")
    assert [p.position for p in pieces_of(run, "plan")] == [2, 2]


async def test_a_rule_admits_only_while_it_matches_and_sees_a_read_only_view():
    seen = []

    def after_first(view):
        seen.append((view.iteration, view.message, len(view.history), [m["name"] for m in view.last_tool_results]))
        return view.iteration > 1

    script = Script([{"tool": "lookup", "args": {}}, "done"])
    agent = Agent(provider=script.provider, tools=[make_tool("lookup")], context=[
        define_instruction(id="second-look", prompt="Double-check the order.", active_when=after_first),
    ])
    run = await agent.run("Where is my order?")
    assert seen == [(1, "Where is my order?", 1, []), (2, "Where is my order?", 3, ["lookup"])]
    assert calls_with(script, "Double-check") == [1]
    reasons = {p.iteration: (p.verdict, p.reason, p.detail["condition"]) for p in pieces_of(run, "second-look")}
    assert reasons[1] == ("skipped", "rule did not match", "rule(test_a_rule_admits_only_while_it_matches_and_"
                                                           "sees_a_read_only_view.<locals>.after_first)")
    assert reasons[2][:2] == ("admitted", "rule matched")


async def test_a_rule_that_raises_is_skipped_with_its_type_and_the_run_goes_on():
    def broken(view):
        raise KeyError(f"customer {view.message}")

    def vandal(view):
        view.history[0]["content"] = "changed"  # the view is read-only: this raises, so the rule is skipped

    script = Script(["fine"])
    agent = Agent(provider=script.provider, context=[
        define_fact(id="fragile", data="x", active_when=broken),
        define_fact(id="vandal", data="y", active_when=vandal),
    ])
    run = await agent.run("private question")
    assert run.answer == "fine" and run.status == "finished"
    assert [(p.verdict, p.reason) for p in pieces_of(run, "fragile")] == [("skipped", "rule raised: KeyError")]
    assert [(p.verdict, p.reason) for p in pieces_of(run, "vandal")] == [("skipped", "rule raised: TypeError")]
    assert script.requests[0].messages[0]["content"] == "private question"
    assert "customer private question" not in run.recording.model_dump_json()


# -- on_tool_return ---------------------------------------------------------------------------
async def test_an_on_tool_return_fact_appears_only_after_that_tool():
    script = Script([{"tool": "search", "args": {}}, {"tool": "lookup", "args": {}}, {"tool": "search", "args": {}},
                     "done"])
    agent = Agent(provider=script.provider, tools=[make_tool("search"), make_tool("lookup")], context=[
        define_fact(id="age-rule", data="Order ages are in days.", trigger=on_tool_return("lookup")),
        define_fact(id="any-s", data="A search ran.", trigger=on_tool_return(re.compile("sea.*"))),
    ])
    run = await agent.run("go")
    assert calls_with(script, "Order ages") == [2]
    assert calls_with(script, "A search ran.") == [1, 3]
    admitted = [p for p in pieces_of(run, "age-rule") if p.verdict == "admitted"]
    assert len(admitted) == 1 and admitted[0].reason == "tool 'lookup' returned"
    lookup_step = next(p.landed_by for p in run.recording.context_pieces
                       if p.source_kind == "tool_result" and p.detail["tool"] == "lookup")
    assert admitted[0].detail["activated_by"] == lookup_step
    assert verdicts(run, "age-rule") == {1: "skipped", 2: "skipped", 3: "admitted", 4: "skipped"}
    assert pieces_of(run, "age-rule")[0].reason == "waiting for tool 'lookup' to return"


# -- skills -----------------------------------------------------------------------------------
async def test_read_skill_loads_body_and_tools_from_the_next_iteration_for_the_rest_of_the_turn():
    refunds = []
    refund = define_tool(name="refund", description="Refund an order.", input_schema={"type": "object"},
                         fn=lambda: refunds.append(1) or "refunded")
    skill = define_skill(id="billing", description="Refunds and invoices", body="BILLING PLAYBOOK", tools=[refund])
    other = define_skill(id="shipping", description="Parcels", body="SHIPPING PLAYBOOK")
    script = Script([
        {"tool": "refund", "args": {}},                          # not loaded yet: unknown to the model
        {"tool": "read_skill", "args": {"skill": "billing"}},
        {"tool": "refund", "args": {}},
        {"tool": "noop", "args": {}},
        "done",
    ])
    agent = Agent(provider=script.provider, tools=[make_tool("noop")], context=[skill, other])
    run = await agent.run("refund please")
    assert calls_with(script, "BILLING PLAYBOOK") == [2, 3, 4]
    assert calls_with(script, "SHIPPING PLAYBOOK") == []
    assert [[t["name"] for t in r.tools] for r in script.requests] == (
        [["noop", "read_skill"]] * 2 + [["noop", "read_skill", "refund"]] * 3)
    read_skill = script.requests[0].tools[1]
    assert "billing: Refunds and invoices" in read_skill["description"]
    assert read_skill["input_schema"]["properties"]["skill"]["enum"] == ["billing", "shipping"]
    assert script.requests[1].messages[-1]["content"] == "Unknown tool: refund"
    assert refunds == [1]
    assert_pieces_add_up(run.recording)
    loaded_at = next(s.step_id for s in run.recording.steps if s.stage == "tool" and s.iteration == 2)
    for piece in pieces_of(run, "billing"):
        if piece.verdict == "admitted":
            assert piece.reason == "read_skill('billing')"
            assert piece.detail["activated_by"] == loaded_at
    # the assemble step reads the loaded skills, stamped with the tool step that loaded them
    assert any(r.path == ["context", "skills"] and r.writer == loaded_at for r in run.recording.reads)
    # a new turn starts with nothing loaded
    again = Script(["hi"])
    agent.provider = again.provider
    await agent.run("hello")
    assert "BILLING PLAYBOOK" not in again.requests[0].system


async def test_a_finished_run_with_skills_and_memory_is_freed_without_the_garbage_collector():
    """A notebook drops runs all the time: their capture must go when the last reference does.

    (The read_skill tool once held the run's context state in a reference cycle, so a run's whole
    capture waited for a full collection.)"""
    from footprint_lab.record.recorder import Recorder

    skill = define_skill(id="billing", description="Refunds", body="BILLING", tools=[make_tool("refund")])
    memory = define_memory(id="notes", store=InMemoryStore())
    script = Script([{"tool": "read_skill", "args": {"skill": "billing"}}, {"tool": "refund", "args": {}}, "done"])
    agent = Agent(provider=script.provider, tools=[make_tool("noop")], context=[skill, memory])
    gc.collect()
    gc.disable()
    try:
        run = await agent.run("refund please")
        run_id = run.run_id
        assert any(isinstance(o, Recorder) and o.run_id == run_id for o in gc.get_objects())
        del run
        agent.last_run = None
        assert not any(isinstance(o, Recorder) and o.run_id == run_id for o in gc.get_objects())
    finally:
        gc.enable()


async def test_read_skill_with_an_unknown_name_teaches_the_model():
    script = Script([{"tool": "read_skill", "args": {"skill": "nope"}}, "ok"])
    agent = Agent(provider=script.provider, context=[define_skill(id="billing", description="d", body="B")])
    run = await agent.run("go")
    result = script.requests[1].messages[-1]
    assert result["is_error"] is True and "billing" in result["content"]
    assert all(p.verdict == "skipped" for p in pieces_of(run, "billing"))


# -- memory -----------------------------------------------------------------------------------
def memory_agent(store, reply="noted"):
    script = Script([reply] * 5)
    return script, Agent(provider=script.provider, context=[define_memory(id="history", store=store)])


@pytest.fixture(params=["memory", "sqlite"])
def store(request, tmp_path):
    if request.param == "memory":
        yield InMemoryStore()
    else:
        sqlite = SQLiteStore(tmp_path / "memory.db")
        yield sqlite
        sqlite.close()


async def test_memory_is_recalled_only_for_the_same_identity(store):
    ana = {"tenant": "acme", "principal": "ana"}
    script, agent = memory_agent(store)
    first = await agent.run("My favourite colour is teal.", identity=ana)
    assert [p.reason for p in pieces_of(first, "history")] == ["nothing recalled: this identity's memory is empty"]
    await agent.run("I am bob.", identity={"tenant": "acme", "principal": "bob"})
    await agent.run("Other tenant, same name.", identity={"tenant": "globex", "principal": "ana"})
    # bob (same tenant) and ana of another tenant recall nothing of ana's
    assert [r.system for r in script.requests[1:]] == ["", ""]
    script.requests.clear()
    later = await agent.run("What is my colour?", identity=Identity(tenant="acme", principal="ana"))
    system = script.requests[0].system
    assert system == "user: My favourite colour is teal.\n\nassistant: noted"
    recalled = pieces_of(later, "history")
    assert [p.detail["role"] for p in recalled] == ["user", "assistant"]
    assert all(p.detail["from_run"] == first.run_id and p.source_kind == "memory" for p in recalled)
    assert len({p.detail["item"] for p in recalled}) == 2


async def test_a_run_without_identity_remembers_only_its_own_conversation(store):
    script, agent = memory_agent(store)
    await agent.run("one")
    run = await agent.run("two")
    assert script.requests[-1].system == ""
    assert pieces_of(run, "history")[0].verdict == "skipped"


async def test_namespaces_are_injective_so_crafted_fields_never_collide(store):
    script, agent = memory_agent(store)
    await agent.run("secret of a|b", identity={"tenant": "a|b", "principal": "c"})
    script.requests.clear()
    await agent.run("probe", identity={"tenant": "a", "principal": "b|c"})
    assert "secret" not in script.requests[0].system


async def test_turns_are_written_back_in_the_final_step_after_the_answer():
    store = InMemoryStore()
    _, agent = memory_agent(store, reply="the answer")
    run = await agent.run("the question", identity={"principal": "ana"})
    final = next(c for c in run.recording.commits if c.step_id.startswith("final#"))
    written = next(e for e in final.entries if e.path == ["memory", "history"])
    assert [(i["role"], i["content"], i["run_id"]) for i in written.value] == [
        ("user", "the question", run.run_id), ("assistant", "the answer", run.run_id)]
    assert [i["content"] for i in store.recall(Identity(principal="ana").namespace(), limit=5)] == [
        "the question", "the answer"]


async def test_sqlite_memory_outlives_its_store_object(tmp_path):
    path = tmp_path / "shared.db"
    first = SQLiteStore(path)
    _, agent = memory_agent(first)
    await agent.run("remember the blue door", identity={"tenant": "t", "conversation_id": "c1"})
    first.close()
    second = SQLiteStore(str(path))
    script, agent = memory_agent(second)
    await agent.run("what door?", identity={"tenant": "t", "conversation_id": "c1"})
    await agent.run("what door?", identity={"tenant": "t", "conversation_id": "c2"})
    second.close()
    assert "blue door" in script.requests[0].system
    assert "blue door" not in script.requests[1].system


# -- RAG --------------------------------------------------------------------------------------
CORPUS = {
    "refunds": "Refund requests are accepted within 30 days of purchase. A refund goes back to the card.",
    "shipping": "Shipping takes five days. Express shipping takes one day.",
    "warranty": "The warranty covers defects for two years. Refund of a defective item follows the warranty.",
}


async def test_rag_records_score_rank_and_threshold_for_every_candidate():
    script = Script(["ok"])
    rag = define_rag(id="docs", corpus=CORPUS, top_k=3, threshold=0.5)
    run = await Agent(provider=script.provider, context=[rag]).run("Can I get a refund on my card?")
    candidates = pieces_of(run, "docs")
    assert [p.detail["document"] for p in candidates] == ["refunds", "warranty"]
    assert [p.detail["rank"] for p in candidates] == [1, 2]
    scores = [p.detail["score"] for p in candidates]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[1] > 0
    assert all(p.detail["threshold"] == 0.5 and p.detail["scorer"] == "bm25" for p in candidates)
    assert all(p.detail["chunk"] == f"{p.detail['document']}#1" for p in candidates)
    assert script.requests[0].system.startswith(CORPUS["refunds"])
    strict = define_rag(id="docs", corpus=CORPUS, top_k=3, threshold=(scores[0] + scores[1]) / 2)
    run = await Agent(provider=mock(reply="ok"), context=[strict]).run("Can I get a refund on my card?")
    assert [(p.verdict, p.detail["rank"]) for p in pieces_of(run, "docs")] == [("admitted", 1), ("skipped", 2)]
    assert "below the threshold" in pieces_of(run, "docs")[1].reason


async def test_the_lexical_scorer_ranks_by_relevance_and_folds_plurals():
    rag = define_rag(id="docs", corpus=CORPUS, top_k=1)
    run = await Agent(provider=mock(reply="ok"), context=[rag]).run("How many days does express shipping take?")
    assert [p.detail["document"] for p in pieces_of(run, "docs")] == ["shipping"]
    small = define_rag(id="docs", corpus={"parcel": "One parcel was lost.", "billing": "Invoices go out monthly."})
    for question, document in (("lost parcels", "parcel"), ("where is my invoice", "billing")):
        run = await Agent(provider=mock(reply="ok"), context=[small]).run(question)
        assert [p.detail["document"] for p in pieces_of(run, "docs")] == [document]


async def test_rag_with_nothing_relevant_records_why():
    run = await Agent(provider=mock(reply="ok"), context=[define_rag(id="docs", corpus=CORPUS)]).run("zebra?")
    [piece] = pieces_of(run, "docs")
    assert piece.verdict == "skipped" and piece.reason.startswith("nothing retrieved")


async def test_an_embedding_scorer_plugs_in():
    def embed(texts):
        return [[text.lower().count(letter) for letter in "aeiou"] for text in texts]

    rag = define_rag(id="docs", corpus=["aaaa", "eeee", "ooo ooo"], top_k=1, scorer=EmbeddingScorer(embed))
    run = await Agent(provider=mock(reply="ok"), context=[rag]).run("eel ale")
    [piece] = pieces_of(run, "docs")
    assert piece.content == "eeee" and piece.detail["scorer"] == "embedding"
    assert piece.detail["score"] == pytest.approx(3 / 10**0.5)


def test_long_documents_are_chunked_at_paragraphs_and_words():
    text = "\n\n".join(["alpha " * 20, "beta " * 5, "gamma " * 5])
    rag = define_rag(id="docs", corpus=[text], chunk_chars=60)
    assert all(len(c.text) <= 60 for c in rag.chunks)
    assert [c.chunk_id for c in rag.chunks][:2] == ["doc-1#1", "doc-1#2"]
    assert " ".join(c.text for c in rag.chunks).split() == text.split()


# -- messages slot, budgets, and the whole-run invariant ------------------------------------
async def test_a_messages_fact_follows_the_conversation_without_joining_the_transcript():
    script = Script([{"tool": "noop", "args": {}}, "done"])
    agent = Agent(provider=script.provider, tools=[make_tool("noop")], context=[
        define_fact(id="reminder", data="Answer in English.", slot="messages", role="user"),
    ])
    run = await agent.run("hola")
    assert [m["content"] for m in script.requests[1].messages][-1] == "Answer in English."
    assert [m["role"] for m in script.requests[1].messages] == ["user", "assistant", "tool", "user"]
    assert "Answer in English." not in [m.get("content") for m in run.recording.messages]
    assert [p.position for p in pieces_of(run, "reminder")] == [1, 3]


async def test_messages_injections_ride_on_a_view_of_the_conversation_never_a_copy():
    script = Script([{"tool": "noop", "args": {}}] * 3 + ["done"])
    agent = Agent(provider=script.provider, tools=[make_tool("noop")], context=[
        define_fact(id="steady", data="Be exact.", slot="messages", role="user"),
        define_fact(id="late", data="Wrap up.", slot="messages", role="assistant",
                    active_when=lambda view: view.iteration >= 3),
    ])
    run = await agent.run("go")
    sent = [request.messages for request in script.requests]
    assert all(isinstance(messages, MessagesView) for messages in sent)
    # every call reads the same conversation turns, not copies of them ...
    assert all(messages[0] is sent[0][0] for messages in sent)
    assert sent[3][1] is sent[1][1] and sent[3][2] is sent[1][2]
    # ... and what an earlier call sent is still exactly that after the run went on
    assert [m["content"] for m in sent[0]] == ["go", "Be exact."]
    assert [m["content"] for m in sent[3]][-2:] == ["Be exact.", "Wrap up."]
    # an injection that did not change is the same message object on every call
    assert sent[0][-1] is sent[1][-1] is sent[2][-2] is sent[3][-2]
    assert sent[2][-1] is sent[3][-1]
    for request, exchange in zip(script.requests, run.recording.exchanges, strict=True):
        assert request.messages == run.recording.request_messages(exchange)
    assert_pieces_add_up(run.recording)


async def test_pieces_that_do_not_fit_the_budget_are_recorded_as_dropped():
    script = Script(["ok"])
    agent = Agent(provider=script.provider, system="S" * 50, budgets={"system": 130}, context=[
        define_fact(id="small", data="a" * 40),
        define_fact(id="big", data="b" * 100),
        define_fact(id="fits-after", data="c" * 30),
    ])
    run = await agent.run("go")
    system = script.requests[0].system
    assert len(system) <= 130 and "b" not in system and "c" * 30 in system
    [big] = pieces_of(run, "big")
    assert (big.verdict, big.position, big.landed_by) == ("dropped", -1, None)
    assert big.detail["size"] == 102 and big.detail["budget"] == 130 and big.detail["used"] == 92
    assert big.content == "b" * 100
    assert "over the system budget of 130 characters" in big.reason
    assert [p.source_id for p in run.context_pieces(left_out=True) if p.verdict == "dropped"] == ["big"]
    assert_pieces_add_up(run.recording)


async def test_a_spent_tools_budget_drops_read_skill_and_the_model_cannot_call_it():
    script = Script([{"tool": "read_skill", "args": {"skill": "billing"}}, "ok"])
    agent = Agent(provider=script.provider, budgets={"tools": 10, "messages": 5},
                  context=[define_skill(id="billing", description="d", body="B"),
                           define_fact(id="late", data="too long for the messages", slot="messages", role="user")])
    run = await agent.run("go")
    assert script.requests[0].tools == []
    assert script.requests[1].messages[-1]["content"] == "Unknown tool: read_skill"
    dropped = {p.source_id for p in run.recording.context_pieces if p.verdict == "dropped"}
    assert dropped == {"read_skill", "late"}
    assert_pieces_add_up(run.recording)


async def test_every_call_of_a_five_iteration_run_is_exactly_its_pieces():
    store = InMemoryStore()
    store.remember(Identity(principal="ana").namespace(), [{"role": "user", "content": "earlier", "run_id": "r0"}])
    context = [
        define_steering(id="tone", prompt="Be brief."),
        define_fact(id="plan", data={"tier": "pro"}),
        define_instruction(id="late", template="Plan: {fact:plan}", active_when=lambda view: view.iteration >= 3),
        define_fact(id="after", data="Lookup done.", trigger=on_tool_return("lookup")),
        define_fact(id="remind", data="Be exact.", slot="messages", role="user"),
        define_skill(id="billing", description="Refunds", body="Refund playbook.", tools=[make_tool("refund")]),
        define_memory(id="history", store=store),
        define_rag(id="docs", corpus=CORPUS, top_k=2),
    ]
    script = Script([{"tool": "lookup", "args": {}}, {"tool": "read_skill", "args": {"skill": "billing"}},
                     [{"tool": "refund", "args": {}}, {"tool": "lookup", "args": {}}], {"tool": "lookup", "args": {}},
                     "final answer"])
    agent = Agent(provider=script.provider, system="Base prompt.", tools=[make_tool("lookup")], context=context)
    run = await agent.run("refund my order", identity={"principal": "ana"})
    recording = run.recording
    assert len(recording.exchanges) == 5
    assert_pieces_add_up(recording)
    for request, exchange in zip(script.requests, recording.exchanges, strict=True):
        assert request.system == exchange.system
        assert request.messages == recording.request_messages(exchange)
        assert request.tools == exchange.tools
    # every declaration has a recorded verdict on every iteration
    for declaration in context:
        assert set(verdicts(run, declaration.id)) == {1, 2, 3, 4, 5}
    again = Recording.model_validate_json(recording.model_dump_json())
    assert again == recording
    assert_pieces_add_up(again)


# -- run.context() ------------------------------------------------------------------------------
async def test_run_context_shows_one_call_as_a_table():
    agent = Agent(provider=mock(replies=[{"tool": "noop", "args": {}}, "done"]), system="Base.",
                  tools=[make_tool("noop")],
                  context=[define_fact(id="plan", data="pro"),
                           define_fact(id="later", data="x", active_when=lambda view: view.iteration > 1)])
    run = await agent.run("go")
    frame = run.context()
    assert list(frame.columns[:10]) == ["slot", "position", "source_kind", "source_id", "content", "trigger",
                                        "reason", "landed_by", "read_by", "iteration"]
    last_call = run.recording.exchanges[-1].step_id
    assert set(frame["read_by"]) == {last_call}
    first_call = run.recording.exchanges[0].step_id
    assert list(frame["source_id"]) == ["system-prompt", "plan", "later", "user-message", first_call, "call_1_1",
                                        "noop"]
    first = run.context(0, left_out=True)
    assert list(first[first["admission"] == "skipped"]["source_id"]) == ["later"]
    assert first["read_by"].isna().sum() == 1
    assert run.context(run.recording.exchanges[0].step_id).equals(run.context(0))
    assert [p.source_id for p in run.context_pieces(-1)] == list(frame["source_id"])
    for bad in (5, "call-llm#999", 1.5):
        with pytest.raises(CallNotFoundError) as caught:
            run.context(bad)
        assert caught.value.code == "ERR_CALL_NOT_FOUND" and caught.value.calls == 2
