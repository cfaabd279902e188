"""Explanations under a redaction policy: nothing the policy covers shows, and reruns compare like with like."""

from __future__ import annotations

import json
from typing import Any

import pytest

from footprint_lab import Agent, Lab, Recording, Refusal, Run, define_tool
from footprint_lab.context import define_fact, define_instruction
from footprint_lab.explain import ask, find_dropped_context, localize, ranking_confidence, rerun_without
from footprint_lab.providers import LLMRequest, mock
from footprint_lab.redact.policy import Redaction

SECRET = "dana.reyes@example.com"
MESSAGE = f"Refund order A-1 for {SECRET} please."


def mailing_model(request: LLMRequest) -> str:
    """Answers name the customer's address, so the policy has something to mask in every answer."""
    seen = " ".join([request.system, *(str(m.get("content") or "") for m in request.messages)])
    if "VIP override" in seen:
        return f"APPROVED for {SECRET} under the VIP override."
    return f"DECLINED for {SECRET}: outside the window."


def guarded_agent() -> Agent:
    return Agent(provider=mock(respond=mailing_model), system="Decide refunds.", redact=Redaction(builtins=["email"]),
                 context=[define_fact(id="contact", data={"email": SECRET}),
                          define_fact(id="vip", data="The customer holds a VIP override."),
                          define_instruction(id="escalate", prompt=f"Copy {SECRET} on escalations.",
                                             active_when=lambda view: False)])


@pytest.fixture
async def guarded():
    agent = guarded_agent()
    run = await agent.run(MESSAGE)
    assert SECRET in run.answer and SECRET not in run.recording.answer
    return agent, run


async def test_no_covered_value_appears_in_any_explanation(guarded):
    agent, run = guarded
    bt = run.backtrack()
    shown = [str(bt), bt.to_frame().to_string(), str(bt._repr_mimebundle_()), run.suspects().to_string(),
             str(ranking_confidence(run.suspects()))]
    report = await localize(run, rerun=agent, samples=3, input=MESSAGE)
    shown += [str(report), report.to_frame().to_string(), str(report._repr_mimebundle_())]
    shown += [str(o.answer) for s in report.suspects for o in s.outcomes] + [str(o.answer) for o in report.baseline]
    without = await rerun_without(run, ["vip"], rerun=agent, input=MESSAGE)
    shown += [str(without), str(without.after)]
    dropped = await find_dropped_context(run, rerun=agent, input=MESSAGE)
    shown += [str(dropped), dropped.to_frame().to_string()]
    assert dropped.source_ids == ["escalate"] and dropped[0].restoration.answer is not None
    for text in shown:
        assert SECRET not in text


async def test_reruns_are_judged_on_masked_answers_so_the_baseline_holds(guarded):
    agent, run = guarded
    report = await localize(run, rerun=agent, samples=3, input=MESSAGE)
    assert report.baseline_stable  # the live answers hold the address, the recorded one its mask
    assert report.confirmed == ["vip"]
    assert report.verdict("contact") == "not_confirmed"
    without = await rerun_without(run, ["vip"], rerun=agent, input=MESSAGE)
    assert without.changed and without.after == "DECLINED for [redacted:email]: outside the window."


async def test_a_redaction_mask_is_no_evidence_in_the_ranking(guarded):
    _, run = guarded
    frame = run.suspects()
    assert frame.iloc[0].source_id == "vip"
    assert frame[frame.source_id == "contact"].iloc[0].content_score == 0


async def test_a_rerun_without_the_policy_is_refused_before_anything_runs(guarded):
    _, run = guarded
    calls = {"n": 0}

    def counting(request: LLMRequest) -> str:
        calls["n"] += 1
        return mailing_model(request)

    def unguarded(exclude=()):
        return Agent(provider=mock(respond=counting), system="Decide refunds.")

    with pytest.raises(Refusal) as caught:
        await localize(run, rerun=unguarded, input=MESSAGE)
    assert caught.value.code == "ERR_EXPLAIN_CONFIG" and caught.value.setting == "rerun"
    assert calls["n"] == 0


async def test_no_refusal_quotes_a_covered_value(guarded):
    agent, run = guarded
    attempts = [
        lambda: run.backtrack(at=SECRET),
        lambda: run.suspects(SECRET),
        lambda: agent.without([SECRET]),
        lambda: ranking_confidence(run.suspects(), margin=SECRET),
    ]
    for attempt in attempts:
        with pytest.raises(Refusal) as caught:
            attempt()
        assert SECRET not in str(caught.value) and SECRET not in repr(caught.value.__dict__)
    for coroutine in (rerun_without(run, [SECRET], rerun=agent, input=MESSAGE),
                      localize(run, rerun=agent),  # the recorded message is masked: input= is required
                      localize(run, rerun=agent, input=SECRET.encode()),
                      localize(run, rerun=agent, input=MESSAGE, sources=[SECRET])):
        with pytest.raises(Refusal) as caught:
            await coroutine
        assert SECRET not in str(caught.value) and SECRET not in repr(caught.value.__dict__)


async def test_a_redacted_recording_loaded_from_json_explains_the_same(guarded):
    agent, run = guarded
    loaded = Run.from_recording(Recording.model_validate_json(run.recording.model_dump_json()))
    assert str(loaded.backtrack()) == str(run.backtrack())
    assert loaded.suspects().equals(run.suspects())
    live = await localize(run, rerun=agent, samples=2, input=MESSAGE)
    again = await localize(loaded, rerun=agent, samples=2, input=MESSAGE)
    assert str(again) == str(live)


# -- ask: the question and the explainer's answer under the run's policy -------------------------
PASSWORD = "velvet-otter-93"  # learned by the run under the covered key 'password'
TICKET = "TCK-654321"         # matched by the caller's own pattern
MAIL = "ops@example.org"      # matched by the library's email pattern
OWN_TICKET = "TCK-777777"     # a ticket the explainer writes of its own accord
QUESTION = f"Why did {PASSWORD} log in, and who mailed {MAIL} about {TICKET}?"


def vault_agent() -> Agent:
    login = define_tool(name="login", description="Log in with the password.",
                        input_schema={"type": "object", "properties": {"password": {"type": "string"}}},
                        fn=lambda password: "logged in")
    return Agent(provider=mock(replies=[{"tool": "login", "args": {"password": PASSWORD}}, "In."]), tools=[login],
                 redact=Redaction(keys=["password"], patterns={"ticket": r"TCK-\d{6}"}, builtins=["email"]))


def echoing_explainer():
    """Searches for the question it was asked and for a ticket of its own, lists the calls, then echoes the
    question, citing a call and writing covered values of its own."""
    def respond(request: LLMRequest) -> object:
        asked = str(request.messages[0]["content"]).splitlines()[0]
        results = sum(m.get("role") == "tool" for m in request.messages)
        if results < 3:
            return [{"tool": "search", "args": {"text": asked[:30]}},
                    {"tool": "search", "args": {"text": OWN_TICKET}}, {"tool": "list_calls", "args": {}}][results]
        return f"You asked: {asked} It logged in at [call-llm#3]; mail {MAIL} about {OWN_TICKET}."

    return mock(respond=respond)


def explanation_surfaces(explanation: Any) -> list[str]:
    return [explanation.question, explanation.answer or "", *explanation.cited, *explanation.unsupported,
            *explanation.opened, *explanation.notes, str(explanation), explanation.summary(),
            json.dumps(explanation._repr_mimebundle_())]


async def test_a_secret_in_the_question_to_ask_appears_nowhere():
    run = await vault_agent().run("Log me in.")
    explanation = await ask(run, QUESTION, provider=echoing_explainer())
    assert explanation.question == ("Why did [redacted:password] log in, and who mailed [redacted:email] about "
                                    "[redacted:ticket]?")
    assert explanation.cited == ["call-llm#3"] and "[redacted:ticket]" in (explanation.answer or "")
    own = explanation.run.recording.model_dump_json()
    for secret in (PASSWORD, TICKET, MAIL, OWN_TICKET):
        for surface in explanation_surfaces(explanation):
            assert secret not in surface
    # what the explainer was asked, and what it wrote itself: the run's own pattern covers its recording too
    for secret in (PASSWORD, TICKET, MAIL, OWN_TICKET):
        assert secret not in own
    assert explanation.run.recording.redaction["keys"] == ["password"]
    assert "ticket" in explanation.run.recording.redaction["patterns"]


async def test_asking_a_recording_masks_the_question_with_the_policy_it_was_recorded_under():
    run = await vault_agent().run("Log me in.")
    loaded = Recording.model_validate_json(run.recording.model_dump_json())
    explanation = await ask(loaded, f"Who mailed {MAIL}?", provider=echoing_explainer())
    assert explanation.question == "Who mailed [redacted:email]?"
    assert MAIL not in explanation.run.recording.model_dump_json() and MAIL not in str(explanation)


async def test_the_lab_shows_the_explainers_answer_masked_in_every_state_trait():
    lab = Lab(vault_agent(), message="Log me in.", explainer=echoing_explainer())
    lab.press_run({})
    await lab._task
    lab.press_ask({"question": QUESTION})
    await lab._task
    assert lab.ask_state == "finished" and 'data-fl-cite="call-llm#3"' in lab.ask_html
    state = json.dumps(lab.get_state())
    for secret in (PASSWORD, TICKET, MAIL, OWN_TICKET):
        assert secret not in state and secret not in lab.ask_html
        for surface in explanation_surfaces(lab.explanation):
            assert secret not in surface


async def test_a_rerun_that_never_meets_a_learned_secret_is_masked_as_the_original_and_confirms_nothing() -> None:
    """The password comes in the message, and the model passes it to ``login`` (where the policy learns it) and
    repeats it in its answer whether or not ``login`` is there. A rerun without ``login`` never learns it: its
    answer, masked only by what it learned, once held the secret and differed from the masked original, so
    ``login`` was confirmed although the live answer never changed."""
    secret = "Zq9hunterARGsecret771"
    message = f"Log me in, my password is {secret}"
    login = define_tool(name="login", description="Log in.", fn=lambda password: {"ok": True},
                        input_schema={"type": "object", "properties": {"password": {"type": "string"}}})

    def model(request: LLMRequest) -> Any:
        said = str(request.messages[0].get("content")).rsplit(" ", 1)[-1]
        if request.tools and not any(m.get("role") == "tool" for m in request.messages):
            return {"tool": "login", "args": {"password": said}}
        return f"Weak: {said}"

    agent = Agent(provider=mock(respond=model), system="Help.", tools=[login], redact=Redaction(keys=["password"]))
    run = await agent.run(message)
    report = await localize(run, rerun=agent, samples=3, input=message)
    assert report.confirmed == []
    assert all(secret not in str(outcome.answer) for suspect in report.suspects for outcome in suspect.outcomes)
    without = await rerun_without(run, ["login"], rerun=agent, input=message)
    assert not without.changed and secret not in str(without) + str(without.after)
    # loaded, what the run learned is gone: the recorded answer's masks stand for whatever text the rerun holds there
    loaded = Recording.model_validate_json(run.recording.model_dump_json())
    for original in (loaded, Run.from_recording(loaded)):
        again = await rerun_without(original, ["login"], rerun=agent, input=message)
        assert not again.changed and secret not in str(again) + str(again.after)


@pytest.mark.parametrize(("given", "recorded", "found"), [
    ("my password is Zq9hunter", "my password is [redacted:password]", {"Zq9hunter": "[redacted:password]"}),
    ("a XXXX b YYYY c", "a [redacted:p] b [redacted:q] c", {"XXXX": "[redacted:p]", "YYYY": "[redacted:q]"}),
    ("alicehunter22", "[redacted:u][redacted:pw]", {}),  # side by side: no telling where one ends
    ("tom and jerry and hunter22", "[redacted:a] and [redacted:b]", {}),  # more than one way to split
    ("Send the report to the manager today", "Send the report to [redacted:email] today", {}),  # not the message
    ("my pin is 42", "my pin is [redacted:pin]", {}),  # shorter than a policy learns
    ("Log me in: anna/marie/hunter22x", "Log me in: [redacted:user]/[redacted:password]", {}),  # '/' twice
    ("my password is: correct horse battery", "my password is: [redacted:password]",  # one mask: one reading
     {"correct horse battery": "[redacted:password]"}),
    ("Send the report to manager today", "Send the report to [redacted:email] today", {}),  # no address
    ("Mail joanna-lee@example.com-TCK-1", "Mail [redacted:email]-TCK-1",
     {"joanna-lee@example.com": "[redacted:email]"}),
])
def test_a_value_given_again_is_taken_for_a_mask_only_when_that_is_certain(given: str, recorded: str,
                                                                           found: dict[str, str]) -> None:
    """What a loaded run's recorded message masked is read from the message given to rerun it only where no other
    reading is possible: taking ordinary words for a secret would mask them in every rerun's answer and could
    make a changed answer read as unchanged."""
    from footprint_lab.explain.trials.rerun_masking import stood_for

    assert stood_for(given, recorded) == found


def login_agent(model: Any) -> Agent:
    login = define_tool(name="login", description="Log in.", fn=lambda password: {"ok": True},
                        input_schema={"type": "object", "properties": {"password": {"type": "string"}}})
    return Agent(provider=mock(respond=model), system="Help.", tools=[login], redact=Redaction(keys=["password"]))


def logging_in(answer: Any) -> Any:
    """A model that logs in with the message's last word, then answers ``answer(word)``."""
    def model(request: LLMRequest) -> Any:
        said = str(request.messages[0].get("content")).rsplit(" ", 1)[-1]
        if request.tools and not any(m.get("role") == "tool" for m in request.messages):
            return {"tool": "login", "args": {"password": said}}
        return answer(said)
    return model


def loaded(run: Run) -> Recording:
    return Recording.model_validate_json(run.recording.model_dump_json())


async def test_a_rerun_of_a_loaded_run_masks_a_value_read_back_in_base64_and_with_spaces_too() -> None:
    """The value read back from the message given again is masked as the run's own scrubber masks (a passphrase
    with spaces, its base64 in a header), so an unchanged answer reads unchanged and nothing shows."""
    import base64

    phrase = "correct horse battery"
    message = f"Log me in, my password is: {phrase}"

    def model(request: LLMRequest) -> Any:
        said = str(request.messages[0].get("content")).split(": ", 1)[1]
        if request.tools and not any(m.get("role") == "tool" for m in request.messages):
            return {"tool": "login", "args": {"password": said}}
        return "Use Basic " + base64.b64encode(f"admin:{said}".encode()).decode() + f" or say {said}"

    agent = login_agent(model)
    run = await agent.run(message)
    encoded = base64.b64encode(f"admin:{phrase}".encode()).decode()
    for original in (run, loaded(run)):
        report = await rerun_without(original, ["login"], rerun=agent, input=message)
        shown = str(report) + str(report._repr_mimebundle_())
        assert not report.changed and report.error is None
        assert phrase not in shown and encoded not in shown
        found = await localize(original, rerun=agent, samples=3, input=message)
        assert found.confirmed == []


async def test_the_rerun_a_report_keeps_holds_no_value_the_original_masked() -> None:
    """``report.run`` is a rerun that never met the secret under its covered key (its tool left out): its recording
    and its view are masked as the original's are."""
    secret = "Zq9hunterARGsecret771"
    message = f"Log me in, my password is {secret}"
    agent = login_agent(logging_in(lambda said: f"Weak: {said}"))
    run = await agent.run(message)
    for original in (run, loaded(run)):
        report = await rerun_without(original, ["login"], rerun=agent, input=message)
        assert not report.changed and report.run is not None
        for surface in (report.run.recording.model_dump_json(), report.run.to_html(), str(report.run.answer)):
            assert secret not in surface


async def test_answers_that_differ_only_inside_masked_values_are_never_judged_unchanged_or_changed() -> None:
    """Two addresses mask alike: a rerun that mails another address is not "unchanged" (a live run knows they
    differ), a failed rerun saying why, so nothing is confirmed or cleared on it. A value a loaded run's rerun met
    in a fact is read back from the fact as its recording shows it, so that rerun is judged."""
    def mailing(request: LLMRequest) -> str:
        seen = " ".join([request.system, *(str(m.get("content") or "") for m in request.messages)])
        who = "ceo@corp.example.com" if "escalate to the CEO" in seen else "intern@corp.example.com"
        return f"Refund sent; confirmation mailed to {who}."

    agent = Agent(provider=mock(respond=mailing), system="Decide refunds.", redact=Redaction(builtins=["email"]),
                  context=[define_fact(id="escalate", data="Always escalate to the CEO."),
                           define_fact(id="noise", data="The sky is blue.")])
    run = await agent.run("Refund order A-1.")
    report = await rerun_without(run, ["escalate"], rerun=agent)
    assert not report.changed and report.after is None and "redaction policy masks" in str(report.error)
    found = await localize(run, rerun=agent, samples=3)
    assert found.verdict("escalate") != "not_confirmed" and found.verdict("noise") == "not_confirmed"

    secret = CODE
    keeper = code_keeper("password")
    kept = await keeper.run("What is my code?")
    live = await rerun_without(kept, ["vault"], rerun=keeper, input="What is my code?")
    assert not live.changed and live.error is None  # the live run knows the value: the answer did not change
    # loaded, the code is read back from the fact, which the rerun's recording shows where the original's has a mask
    again = await rerun_without(loaded(kept), ["vault"], rerun=keeper, input="What is my code?")
    assert not again.changed and again.error is None and secret not in str(again) + str(again.run.answer)
    found = await localize(loaded(kept), rerun=keeper, samples=3, input="What is my code?", sources=["vault"])
    assert found.confirmed == [] and secret not in str(found) + found.to_frame().to_string()


async def test_a_rerun_given_what_its_runner_refuses_is_refused_before_a_model_is_called(guarded) -> None:
    """A masked message given back, an empty one, or a checkpoint that is not one: refused by name, not reported
    as reruns that failed."""
    agent, run = guarded
    for given in ({"message": "[redacted:email]"}, f"Refund order for [redacted:email] {SECRET}"):
        with pytest.raises(Refusal) as caught:
            await rerun_without(loaded(run), ["vip"], rerun=agent, input=given)
        assert caught.value.code == "ERR_EXPLAIN_CONFIG" and SECRET not in str(caught.value)
    calls = agent.provider.calls if hasattr(agent.provider, "calls") else None
    for given, extra in (("", {}), ({"message": ""}, {}), (MESSAGE, {"continue_from": f"not a checkpoint {SECRET}"})):
        with pytest.raises(Refusal) as caught:
            await localize(run, rerun=agent, samples=2, input=given, **extra)
        assert SECRET not in str(caught.value)
    assert calls is None or agent.provider.calls == calls


#: a backup code a vault tool returns under a covered key, and a fact holds in plain text
CODE = "Q7xBackupCode9931"


def code_keeper(key: str) -> Agent:
    """An agent that reads the vault (the code under ``key``, a covered key) and answers the code it was sent."""
    def coded(request: LLMRequest) -> Any:
        seen = " ".join([request.system, *(str(m.get("content") or "") for m in request.messages)])
        if request.tools and not any(m.get("role") == "tool" for m in request.messages):
            return {"tool": "vault", "args": {}}
        return f"Your code: {CODE}." if CODE in seen else "No code."

    vault = define_tool(name="vault", description="Read the vault.", fn=lambda: {key: CODE},
                        input_schema={"type": "object", "properties": {}})
    return Agent(provider=mock(respond=coded), system="Help.", tools=[vault], redact=Redaction(keys=[key]),
                 context=[define_fact(id="notes", data=f"Backup code on file: {CODE}")])


def escalating(share: float = 1.0, seed: int = 0, other: str = "nobody") -> Agent:
    """Refunds go to the CEO's address while the escalation fact is sent; without it, to ``other`` (``share`` of
    the time)."""
    import random

    draw = random.Random(seed)

    def model(request: LLMRequest) -> str:
        seen = " ".join([request.system, *(str(m.get("content") or "") for m in request.messages)])
        if "escalate to the CEO" in seen or draw.random() >= share:
            return "Refund sent to ceo@corp.example.com."
        return f"Refund sent to {other}."

    return Agent(provider=mock(respond=model), system="Decide refunds.", redact=Redaction(builtins=["email"]),
                 context=[define_fact(id="escalate", data="Always escalate to the CEO."),
                          define_fact(id="noise", data="The sky is blue."),
                          define_fact(id="other", data="Orders ship on Monday.")])


async def test_a_change_a_reader_sees_beside_a_masked_value_is_a_change() -> None:
    """"Refund sent to nobody." against "Refund sent to [redacted:email].": the live run knows its value, so this is
    a change like any other, never a rerun that "differs only inside masked values"; a cause acting half the time
    is still confirmed, not set aside on the unchanged reruns alone."""
    agent = escalating()
    run = await agent.run("Refund order A-1.")
    without = await rerun_without(run, ["escalate"], rerun=agent)
    assert without.changed and without.error is None
    assert (await localize(run, rerun=agent)).verdict("escalate") == "confirmed"
    half = escalating(0.5, seed=3)
    report = await localize(await half.run("Refund order A-1."), rerun=half)
    assert report.verdict("escalate") != "not_confirmed"


async def test_a_loaded_run_cannot_tell_two_values_masked_alike_apart_so_it_says_so() -> None:
    """Without the fact the refund goes to another address; both mask to [redacted:email]. A loaded run has lost
    which address it was, so the rerun is a failed one that says why, never "unchanged"."""
    agent = escalating(other="intern@corp.example.com")
    run = await agent.run("Refund order A-1.")
    for given in ({}, {"input": "Refund order A-1."}):
        again = await rerun_without(Run.from_recording(loaded(run)), ["escalate"], rerun=agent, **given)
        assert not again.changed and again.after is None and "localize the live run" in str(again.error)
        found = await localize(Run.from_recording(loaded(run)), rerun=agent, **given)
        assert found.verdict("escalate") == "undecided"


async def test_a_message_that_holds_mask_text_of_its_own_is_no_masked_message_without_a_policy() -> None:
    """A user asking about a log line "[redacted:email]" under no policy: its rerun, given the message again or
    not, and a run set holding it, are localized as any other."""
    from footprint_lab.batch import RunSet

    message = "Why does the log show [redacted:email] here?"

    def model(request: LLMRequest) -> str:
        seen = " ".join([request.system, *(str(m.get("content") or "") for m in request.messages)])
        return "A policy masked it." if "policies mask" in seen else "No idea."

    def make() -> Agent:
        return Agent(provider=mock(respond=model), system="Explain logs.",
                     context=[define_fact(id="why", data="Redaction policies mask addresses in logs."),
                              define_fact(id="noise", data="The sky is blue.")])

    agent = make()
    run = await agent.run(message)
    assert (await localize(run, rerun=agent)).confirmed == ["why"]
    assert (await localize(run, rerun=agent, input=message)).confirmed == ["why"]
    runs = RunSet.from_runs([run])
    frame = await runs.localize(rerun=make().without, progress=False)
    assert "why" in set(frame[frame.verdict == "confirmed"].source_id)


async def test_a_refusal_only_some_reruns_meet_fails_those_reruns_and_keeps_the_rest() -> None:
    """A scripted model that is handed a reply it cannot read for some removals only: those reruns fail, the trial
    goes on and the cause is still confirmed; nothing billed is thrown away."""
    def respond(request: LLMRequest) -> Any:
        text = request.system + " ".join(str(m.get("content", "")) for m in request.messages)
        if "fact 3." not in text and "fact 5." not in text:
            return 42  # no reply at all: the mock refuses this rerun alone
        return "APPROVED" if "zebra flag" in text else "DECLINED"

    agent = Agent(provider=mock(respond=respond), system="Decide.",
                  context=[define_fact(id=f"note-{k}", data=f"Benign fact {k}.") for k in range(19)]
                  + [define_fact(id="note-19", data="zebra flag.")])
    report = await localize(await agent.run("Decide?"), rerun=agent)
    assert report.confirmed == ["note-19"] and report.failed > 0


async def test_the_kept_rerun_shows_its_answer_as_recorded_even_when_nothing_more_is_masked(guarded) -> None:
    agent, run = guarded
    report = await rerun_without(run, ["vip"], rerun=agent, input=MESSAGE)
    assert report.run is not None and SECRET not in str(report.run.answer)
    dropped = await find_dropped_context(run, rerun=agent, input=MESSAGE)
    assert all(SECRET not in str(o.run.answer) for piece in dropped.pieces for o in piece.trial.confirmation
               if o.run is not None)


async def test_many_masked_addresses_against_a_longer_list_are_judged_at_once() -> None:
    """A shape that took a backtracking match tens of seconds (a dozen masks against thirty addresses, ending
    otherwise) is judged in one walk, live or loaded."""
    def listing(request: LLMRequest) -> str:
        seen = " ".join([request.system, *(str(m.get("content") or "") for m in request.messages)])
        if "only the leads" in seen:
            return "Mailed " + ", ".join(f"lead{k}@corp.example.com" for k in range(12)) + "."
        return "Mailed " + ", ".join(f"user{k}@corp.example.com" for k in range(30)) + "!"

    agent = Agent(provider=mock(respond=listing), system="Notify.", redact=Redaction(builtins=["email"]),
                  context=[define_fact(id="scope", data="Mail only the leads."), define_fact(id="noise", data="Sky.")])
    run = await agent.run("Send the notice.")
    for original in (run, Run.from_recording(loaded(run))):
        report = await rerun_without(original, ["scope"], rerun=agent, time_limit=5)
        assert report.changed and report.error is None


@pytest.mark.parametrize("shape", ["base64", "punctuation"])
async def test_a_masked_value_that_changes_is_never_read_as_unchanged_inside_base64_or_beside_punctuation(
        shape: str) -> None:
    """Without the fact the header names another address (masked inside its base64), or the sentence ends with
    another stop: the masked answers read the same to the comparator while the values differ, so the rerun is a
    failed one saying why, live or loaded, and the fact is never set aside as not confirmed."""
    import base64

    me = "alice.w@example.com"
    message = f"Give me a login header for {me}"

    def model(request: LLMRequest) -> str:
        seen = " ".join([request.system, *(str(m.get("content") or "") for m in request.messages)])
        mine = "use the caller" in seen
        who = me if mine else "bob.k@example.com"
        if shape == "base64":
            return "Header: Basic " + base64.b64encode(f"{who}:pw123".encode()).decode()
        return f"Mailed {who}" + ("." if mine else "!")

    agent = Agent(provider=mock(respond=model), system="Help.", redact=Redaction(builtins=["email"]),
                  context=[define_fact(id="who", data="Always use the caller's own address."),
                           define_fact(id="noise", data="Sky is blue.")])
    run = await agent.run(message)
    for original in (run, Run.from_recording(loaded(run))):
        report = await rerun_without(original, ["who"], rerun=agent, input=message)
        assert not report.changed and report.after is None and "redaction policy masks" in str(report.error)
        assert (await localize(original, rerun=agent, input=message)).verdict("who") == "undecided"


async def test_a_key_named_like_a_builtin_pattern_is_a_key_on_a_loaded_run() -> None:
    """``keys=["email"]`` masks a backup code as [redacted:email]: on a loaded run that mask stands for a key's
    value (any text), not for an address, so a rerun that meets the code in a fact, never under the key, never
    shows it and is not judged on it."""
    secret = CODE
    agent = code_keeper("email")
    run = await agent.run("What is my code?")
    assert run.recording.answer == "Your code: [redacted:email]."
    report = await rerun_without(Run.from_recording(loaded(run)), ["vault"], rerun=agent, input="What is my code?")
    assert not report.changed
    assert secret not in str(report) + str(report._repr_mimebundle_()) + str(getattr(report.run, "answer", ""))


async def test_a_live_rerun_that_differs_only_in_punctuation_beside_the_same_masked_value_is_judged() -> None:
    """The same address, another stop: the live run knows nothing masked changed, so the comparator judges it
    (unchanged), never a failed rerun."""
    def model(request: LLMRequest) -> str:
        seen = " ".join([request.system, *(str(m.get("content") or "") for m in request.messages)])
        return "Mailed ceo@corp.example.com" + ("." if "full stop" in seen else "!")

    agent = Agent(provider=mock(respond=model), system="Help.", redact=Redaction(builtins=["email"]),
                  context=[define_fact(id="stop", data="End with a full stop."),
                           define_fact(id="noise", data="Sky.")])
    report = await rerun_without(await agent.run("Mail it"), ["stop"], rerun=agent)
    assert not report.changed and report.error is None


async def test_what_a_rerun_makes_as_it_goes_is_never_read_back_as_a_secret() -> None:
    """Values are read back only from declared pieces: a rerun's own answer or tool call ("withheld", "approved"
    where the original wrote a code) is never taken for what a mask stands for, which would hide a real change
    (loaded) or invent one (live, an answer that never changes)."""
    def withheld(request: LLMRequest) -> Any:
        seen = " ".join([request.system, *(str(m.get("content") or "") for m in request.messages)])
        tools_done = sum(1 for m in request.messages if m.get("role") == "tool")
        if request.tools and tools_done == 0:
            return {"tool": "vault", "args": {}}
        if request.tools and tools_done == 1:
            return {"tool": "note", "args": {"text": f"code {CODE if 'verified' in seen else 'approved'}"}}
        return f"Your code: {CODE}." if "verified" in seen else "Your code: withheld."

    vault = define_tool(name="vault", description="Read the vault.", fn=lambda: {"password": CODE},
                        input_schema={"type": "object", "properties": {}})
    note = define_tool(name="note", description="Write a note.", fn=lambda text: "ok",
                       input_schema={"type": "object", "properties": {"text": {"type": "string"}}})
    agent = Agent(provider=mock(respond=withheld), system="Help.", tools=[vault, note],
                  redact=Redaction(keys=["password"]),
                  context=[define_fact(id="verified", data="The caller is verified."),
                           define_fact(id="noise", data="The sky is blue.")])
    run = await agent.run("What is my code?")
    assert (await rerun_without(run, ["verified"], rerun=agent)).changed  # live: a real change
    assert not (await rerun_without(run, ["noise"], rerun=agent)).changed
    found = await localize(Run.from_recording(loaded(run)), rerun=agent)
    assert found.verdict("verified") != "not_confirmed"  # loaded: never cleared on a word read back wrongly
