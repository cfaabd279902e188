"""Redaction: what a policy covers never reaches a record, an event, a view or an error text."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conversation_kit import SECRET, Seen, Streaming, asking_tool, scripted

from footprint_lab import Agent, Redaction, define_tool
from footprint_lab.errors import PendingQuestionError, RedactionConfigError, ResumeRedactionError
from footprint_lab.providers import mock
from footprint_lab.redact.policy import BUILTIN_PATTERNS

KEY_PATTERN = r"sk-[A-Za-z0-9]{20,}"


def leaky_agent(redact: Redaction | None, **keywords: Any) -> tuple[Agent, Seen]:
    """A tool returns a secret; the model repeats it in its answer."""
    seen = scripted({"tool": "fetch_key", "args": {}}, f"Your key is {SECRET}.")
    tool = define_tool(name="fetch_key", description="Fetch the API key.", fn=lambda: f"key={SECRET}")
    return Agent(provider=seen.provider, tools=[tool], redact=redact, **keywords), seen


async def test_a_secret_in_a_tool_result_never_reaches_what_is_recorded_or_served() -> None:
    live: list[str] = []
    agent, seen = leaky_agent(Redaction(patterns=[KEY_PATTERN]))
    agent.subscribe(lambda event: live.append(event.model_dump_json()))
    run = await agent.run("What is my key?", on_event=lambda event: live.append(json.dumps(event.payload)))
    assert SECRET in json.dumps(list(seen.requests[-1].messages))  # the live run used the real value
    assert run.answer == f"Your key is {SECRET}."
    served = {
        "recording": run.recording.model_dump_json(),
        "events frame": run.events.to_json(),
        "steps frame": run.steps.to_json(),
        "live events": "".join(live),
        "html": run.to_html(),
        "repr": repr(run),
    }
    for where, text in served.items():
        assert SECRET not in text, where
        assert SECRET[3:15] not in text, where
    name = next(iter(Redaction(patterns=[KEY_PATTERN]).patterns))
    assert f"[redacted:{name}]" in run.recording.answer  # type: ignore[operator]
    assert run.recording.redaction is not None
    assert run.recording.redaction["matched"] == [f"pattern:{name}"]
    assert run.recording.redaction["counts"][f"pattern:{name}"] >= 2


async def test_without_a_policy_the_same_values_are_recorded_as_they_are() -> None:
    agent, _ = leaky_agent(None)
    run = await agent.run("What is my key?")
    assert SECRET in run.recording.model_dump_json()
    assert run.recording.redaction is None


async def test_values_under_covered_keys_are_masked_and_hunted_for_afterwards() -> None:
    seen = scripted({"tool": "login", "args": {"user": "ana", "Password": "hunter22"}}, "Logged in.")
    tool = define_tool(
        name="login", description="Log in.",
        input_schema={"type": "object", "properties": {"user": {"type": "string"}, "Password": {"type": "string"}}},
        fn=lambda user, Password: f"session opened for {user} with {Password}",
    )
    agent = Agent(provider=seen.provider, tools=[tool], redact=Redaction(keys=["password"]))
    run = await agent.run("Log me in")
    text = run.recording.model_dump_json()
    assert "hunter22" not in text
    assert "[redacted:password]" in text and "ana" in text
    assert run.recording.redaction["matched"] == ["key:password"]  # type: ignore[index]


#: spellings of "password" a caller or a tool may use: spaces, dashes, dots, case, full-width forms, invisibles
PASSWORD_SPELLINGS = ["pass word", "password ", " PASSWORD", "Pass-Word", "pass.word", "pass_word", "pass\u200bword",
                      "pass\u2060word", "\ufeffpassword", "pass\u00adword", "pass\u2010word", "Pass\u3000Word",
                      "\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44", "PASS\uff3fWORD", "pass\tword",
                      "pass\u3164word", "pass\ufe0fword"]


@pytest.mark.parametrize("spelling", PASSWORD_SPELLINGS)
async def test_every_spelling_of_a_covered_key_is_masked(spelling: str) -> None:
    seen = scripted({"tool": "login", "args": {"user": "ana", "auth": {spelling: "hunter22"}}}, "Logged in.")
    tool = define_tool(name="login", description="Log in.", fn=lambda user, auth: "session opened")
    run = await Agent(provider=seen.provider, tools=[tool], redact=Redaction(keys=["password"])).run("Log me in")
    text = run.recording.model_dump_json()
    assert "hunter22" not in text and "[redacted:password]" in text and "ana" in text
    written = await Agent(provider=seen.provider, tools=[tool], redact=Redaction(keys=[spelling])).run("Log me in")
    assert "hunter22" not in written.recording.model_dump_json()  # a policy key spelled so covers every spelling too
    assert written.recording.redaction["keys"] == [spelling]  # type: ignore[index]


def test_keys_of_other_names_are_not_folded_into_a_covered_one() -> None:
    scrub = Redaction(keys=["password"]).for_run().scrub
    kept = {"passwords": "a", "pass_word_hint": "b", "pässword": "c", "passwd": "d", "pass-port": "e"}
    assert scrub(kept) == kept


@pytest.mark.parametrize("key", ["---", " _ . ", "\u200b\u200d", "\u3000\u2060"])
def test_a_policy_key_that_folds_to_nothing_is_refused(key: str) -> None:
    with pytest.raises(RedactionConfigError) as caught:
        Redaction(keys=["token", key])
    assert caught.value.setting == "keys" and "letter or digit" in str(caught.value)


async def test_masked_text_in_decisions_inputs_and_read_summaries() -> None:
    agent = Agent(provider=mock(reply="x" * 60 + SECRET), redact=Redaction(patterns=[KEY_PATTERN]),
                  input_guard=lambda message: None)
    run = await agent.run(f"my key is {SECRET}")
    recording = run.recording
    assert SECRET[3:12] not in recording.model_dump_json()
    assert "[redacted:" in recording.decisions[0].evidence[0].reads["message"]
    assert "[redacted:" in recording.input["message"]
    assert any("[redacted:" in read.summary for read in recording.reads)


@pytest.mark.parametrize(
    ("chunks", "hidden"),
    [
        (["Use ", "sk-A1b2C3", "d4E5f6G7h8I9j0K1l2M3", " for ", "the ", "call."], "A1b2C3"),
        (["Send ", "Authorization: Bearer ", "abcdefghij", "klmnopqrstuv", " now ", "please."], "abcdefghij"),
    ],
)
async def test_a_secret_split_across_streamed_tokens_is_still_masked(chunks: list[str], hidden: str) -> None:
    live: list[str] = []
    agent = Agent(provider=Streaming(chunks), redact=Redaction(builtins=["openai_key", "bearer_token"]))
    run = await agent.run("go", on_event=lambda e: live.append(e.payload["text"]) if e.type == "token" else None)
    assert run.answer == "".join(chunks)
    assert live and all(hidden not in piece for piece in live)
    assert "".join(live) == run.recording.answer
    assert "[redacted:" in "".join(live)


async def test_tokens_stream_as_they_are_when_no_policy_is_set() -> None:
    live: list[str] = []
    agent = Agent(provider=Streaming(["a ", "b ", "c"]))
    await agent.run("go", on_event=lambda e: live.append(e.payload["text"]) if e.type == "token" else None)
    assert live == ["a ", "b ", "c"]


def test_patterns_get_names_and_the_library_has_a_vocabulary() -> None:
    listed = Redaction(patterns=[KEY_PATTERN])
    assert len(listed.patterns) == 1 and listed.patterns[0].startswith("custom-")
    assert Redaction(patterns=[KEY_PATTERN]).patterns == listed.patterns  # named for their content
    named = Redaction(patterns={"ticket": r"TCK-\d{6}"}, builtins=["email"])
    assert named.patterns == ("ticket", "email")
    standard = Redaction.standard()
    assert set(BUILTIN_PATTERNS) <= set(standard.patterns) and "password" in standard.keys
    scrubbed = standard.for_run().scrub({"note": "mail ana@example.com", "api-key": "abcd1234", "n": 3})
    assert scrubbed == {"note": "mail [redacted:email]", "api-key": "[redacted:api_key]", "n": 3}


@pytest.mark.parametrize(
    ("build", "setting"),
    [
        (lambda: Redaction(), "keys"),
        (lambda: Redaction(keys="password"), "keys"),
        (lambda: Redaction(patterns=["(unclosed"]), "patterns"),
        (lambda: Redaction(patterns=["a*"]), "patterns"),
        (lambda: Redaction(patterns={"9bad name": "x"}), "patterns"),
        (lambda: Redaction(builtins=["no_such_pattern"]), "builtins"),
    ],
)
def test_a_policy_that_cannot_work_is_refused(build: Any, setting: str) -> None:
    with pytest.raises(RedactionConfigError) as caught:
        build()
    assert caught.value.code == "ERR_REDACTION_CONFIG"
    assert caught.value.setting == setting
    assert "(unclosed" not in str(caught.value)


def test_an_agent_refuses_a_redact_that_is_not_a_policy() -> None:
    from footprint_lab.errors import AgentConfigError

    with pytest.raises(AgentConfigError) as caught:
        Agent(provider=mock(reply="ok"), redact={"keys": ["password"]})  # type: ignore[arg-type]
    assert caught.value.setting == "redact"


async def test_the_checkpoint_carries_the_policy_as_names_never_as_patterns() -> None:
    agent, _ = leaky_agent(Redaction(keys=["password"], patterns={"openai": KEY_PATTERN}))
    await agent.run("What is my key?")
    checkpoint = agent.checkpoint()
    assert checkpoint is not None
    assert checkpoint.redaction is not None
    assert checkpoint.redaction["keys"] == ["password"]
    assert [p["name"] for p in checkpoint.redaction["patterns"]] == ["openai"]
    assert KEY_PATTERN not in checkpoint.model_dump_json()
    assert checkpoint.redaction_marks == {"keys": ["password"], "patterns": ["openai"], "matched": ["pattern:openai"]}
    follow = await agent.follow_up("Thanks")
    assert SECRET not in follow.recording.model_dump_json()  # the earlier turns stay covered
    again = agent.checkpoint()
    assert again is not None and again.redaction_marks["matched"] == ["pattern:openai"]


def paused_under_policy() -> tuple[Agent, Any]:
    seen = scripted({"tool": "confirm", "args": {}}, f"Done: {SECRET}")
    agent = Agent(provider=seen.provider, tools=[asking_tool()], redact=Redaction(patterns={"openai": KEY_PATTERN}))
    return agent, seen


@pytest.mark.parametrize(
    ("tamper", "reason"),
    [
        (lambda d: d["redaction"].update(format="another/9"), "unreadable"),
        (lambda d: d.update(redaction="keys=password"), "unreadable"),
        (lambda d: d["redaction"]["patterns"][0].update(source="(a+)+$"), "unreadable"),
        (lambda d: d.update(redaction=None), "missing"),
        (lambda d: d["redaction"].update(patterns=[], keys=["other"]), "missing"),
        (lambda d: d["redaction"]["patterns"][0].update(name="lookalike"), "unknown-pattern"),
        (lambda d: d["redaction"]["patterns"][0].update(fingerprint="0" * 16), "unknown-pattern"),
    ],
)
async def test_a_tampered_checkpoint_policy_is_refused_with_its_reason(tamper: Any, reason: str) -> None:
    agent, _ = paused_under_policy()
    paused = await agent.run("go")
    data = paused.checkpoint.model_dump(mode="json")
    tamper(data)
    with pytest.raises(ResumeRedactionError) as caught:
        await agent.resume(data, "yes")
    assert caught.value.code == "ERR_RESUME_REDACTION"
    assert (caught.value.reason, caught.value.door) == (reason, "Agent.resume")
    assert "openai" not in str(caught.value) and KEY_PATTERN not in str(caught.value)
    assert agent.checkpoint() == paused.checkpoint  # nothing moved
    run = await agent.resume(paused.checkpoint, "yes")  # and the untampered one still resumes
    assert run.answer == f"Done: {SECRET}" and SECRET not in run.recording.model_dump_json()


async def test_a_pattern_is_looked_up_by_name_on_the_resuming_side() -> None:
    agent, _ = paused_under_policy()
    stored = (await agent.run("go")).checkpoint.model_dump_json()
    bare = Agent(provider=scripted({"tool": "confirm", "args": {}}, f"Done: {SECRET}").provider, tools=[asking_tool()])
    with pytest.raises(ResumeRedactionError) as caught:
        await bare.resume(stored, "yes")
    assert caught.value.reason == "unknown-pattern"
    assert "redact=" in str(caught.value)
    with pytest.raises(ResumeRedactionError) as via_run:
        await bare.run("hi", continue_from=stored)
    assert "Agent(..., redact=" in str(via_run.value)
    run = await bare.resume(stored, "yes", redact=Redaction(patterns={"openai": KEY_PATTERN}))
    assert run.answer == f"Done: {SECRET}"
    assert SECRET not in run.recording.model_dump_json()  # covered although this agent declares nothing


async def test_library_patterns_resolve_without_being_declared_again() -> None:
    seen = scripted({"tool": "confirm", "args": {}}, f"Done: {SECRET}")
    agent = Agent(provider=seen.provider, tools=[asking_tool()], redact=Redaction(builtins=["openai_key"]))
    stored = (await agent.run("go")).checkpoint.model_dump_json()
    bare = Agent(provider=scripted({"tool": "confirm", "args": {}}, f"Done: {SECRET}").provider, tools=[asking_tool()])
    run = await bare.resume(stored, "yes")
    assert SECRET not in run.recording.model_dump_json()


async def test_an_error_quoting_the_pending_question_masks_what_the_policy_covers() -> None:
    seen = scripted({"tool": "confirm", "args": {}}, "done")
    agent = Agent(provider=seen.provider, tools=[asking_tool(question=f"Use {SECRET} for the refund?")],
                  redact=Redaction(patterns=[KEY_PATTERN]))
    paused = await agent.run("go")
    assert paused.question == f"Use {SECRET} for the refund?"  # the caller gets the live question
    assert SECRET not in paused.recording.model_dump_json() and SECRET not in paused.to_html()
    with pytest.raises(PendingQuestionError) as caught:
        await agent.run("never mind")
    assert SECRET not in str(caught.value) and "[redacted:" in str(caught.value)


async def test_html_escapes_what_models_tools_and_users_wrote() -> None:
    seen = scripted({"tool": "fetch_key", "args": {}}, "<script>alert(1)</script>")
    tool = define_tool(name="fetch_key", description="d", fn=lambda: "<img src=x onerror=alert(1)>")
    run = await Agent(provider=seen.provider, tools=[tool]).run("<b>hi</b>")
    html = run.to_html()
    assert "<script>alert" not in html and "<img" not in html and "<b>hi" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    shown = run._repr_mimebundle_()["text/html"]
    assert "<script>alert" not in shown and "&lt;script&gt;alert(1)&lt;/script&gt;" in shown


async def test_a_covered_identity_is_masked_wherever_the_run_records_it() -> None:
    agent = Agent(provider=mock(reply="ok"), redact=Redaction(builtins=["email"]))
    run = await agent.run("hi", identity={"principal": "ana@example.com", "tenant": "acme"})
    text = run.recording.model_dump_json()
    assert "ana@example.com" not in text
    assert run.recording.identity == {"tenant": "acme", "principal": "[redacted:email]"}
