"""``localize`` and the reruns behind it, on its defaults, with shapes nobody tuned it for: two causes among many
pieces, a rerun that stops to ask a person, a factory that fails. A verdict says what was measured, never more."""

from __future__ import annotations

from typing import Any

import pytest

from footprint_lab import Agent, Refusal, ask_human, tool
from footprint_lab.context import define_fact
from footprint_lab.explain import find_dropped_context, localize, rerun_without
from footprint_lab.providers import LLMRequest, mock


def seen(request: LLMRequest) -> str:
    return request.system + "\n" + "\n".join(str(m.get("content", "")) for m in request.messages)


def notes_agent(texts: list[str], decide: Any, **extra: Any) -> Agent:
    context = [define_fact(id=f"note-{k}", data=text) for k, text in enumerate(texts)]
    return Agent(provider=mock(respond=lambda request: decide(seen(request), request)), system="Decide.",
                 context=context, **extra)


@pytest.mark.parametrize("pieces", [20, 40])
async def test_two_causes_each_needed_are_both_confirmed_among_many_pieces(pieces: int) -> None:
    """The answer needs both of two flags, so removing either flips it. Among enough pieces for a group test (halves
    removed at once), the first confirmed hid the second; each is now tested alone, never called not confirmed
    after no rerun removed it."""
    texts = [f"Benign fact number {k} about shipping." for k in range(pieces - 2)] + ["zebra flag.", "yak flag."]
    agent = notes_agent(texts, lambda text, _: "APPROVED" if "zebra flag" in text and "yak flag" in text
                        else "DECLINED")
    run = await agent.run("Decide?")
    report = await localize(run, rerun=agent)
    assert sorted(report.confirmed) == sorted([f"note-{pieces - 2}", f"note-{pieces - 1}"])


@pytest.mark.parametrize(("pieces", "pair"), [(30, (28, 29)), (60, (58, 59)), (30, (5, 24)), (60, (30, 51)),
                                              (60, (2, 43)), (60, (41, 49))])
async def test_two_pieces_that_each_suffice_are_confirmed_together_among_many_pieces(pieces: int,
                                                                                   pair: tuple[int, int]) -> None:
    """Either of two notes makes the answer, so only removing both flips it. Among enough pieces for a group test, its
    flips pointed at both, each kept the outcome alone, and both read NOT CONFIRMED ("look elsewhere"): the set is now
    removed together and confirmed as acting together, wherever the pair sits and the ranking puts it."""
    from footprint_lab.explain.compare import Label

    texts = [f"Note NOTE-{k}-X about topic {k}." for k in range(pieces)]
    marks = [f"NOTE-{k}-X" for k in pair]
    agent = notes_agent(texts, lambda text, _: "YES" if any(mark in text for mark in marks) else "NO")
    run = await agent.run("Decide?")
    report = await localize(run, rerun=agent, comparator=Label(choices=["YES", "NO"]))
    assert report.confirmed_together == [(f"note-{pair[0]}", f"note-{pair[1]}")]
    assert report.confirmed == []


async def test_three_notes_that_each_suffice_are_never_called_not_it() -> None:
    """One group-test rerun removed all three, with a dozen others, and flipped the outcome: each of the three read NOT
    CONFIRMED ("look elsewhere"). The pieces it removed are narrowed on screening reruns; the three are confirmed
    together, or, when the budget runs out before the narrowing ends, left undecided, naming bisect_culprits."""
    from footprint_lab.explain.compare import Label

    texts = [f"Note NOTE-{k}-X about topic {k}." for k in range(40)]
    marks = [f"NOTE-{k}-X" for k in (14, 25, 26)]
    agent = notes_agent(texts, lambda text, _: "YES" if any(mark in text for mark in marks) else "NO")
    run = await agent.run("Decide?")
    report = await localize(run, rerun=agent, comparator=Label(choices=["YES", "NO"]))
    verdicts = {name: report.verdict(name) for name in ("note-14", "note-25", "note-26")}
    together = report.confirmed_together == [("note-14", "note-25", "note-26")]
    assert together or "not_confirmed" not in verdicts.values(), verdicts  # a piece tested alone keeps it, alone
    assert report.confirmed == []


async def test_a_piece_the_group_test_set_aside_says_it_was_never_removed_alone() -> None:
    """Among 30 pieces the group test removes halves at once. A piece it set aside had no rerun of its own: its line
    says so, where a "not confirmed" alone would read as a test it never had; a piece removed alone does not."""
    texts = [f"Benign fact number {k} about shipping." for k in range(29)] + ["zebra flag."]
    agent = notes_agent(texts, lambda text, _: "APPROVED" if "zebra flag" in text else "DECLINED")
    run = await agent.run("Decide?")
    report = await localize(run, rerun=agent)
    assert report.confirmed == ["note-29"]
    aside = [suspect for suspect in report.suspects if suspect.reruns == 0 and suspect.verdict == "not_confirmed"]
    assert len(aside) >= 20
    assert all("set aside by the group test, never removed alone" in suspect.line() for suspect in aside)
    assert all("never removed alone" not in suspect.line() for suspect in report.suspects if suspect.reruns)
    assert "never removed alone" in report.to_frame().set_index("source_id").loc[aside[0].source_id, "reason"]


@pytest.mark.parametrize(("declined", "approved"), [((0, 1), 3), ((2, 4), 1), ((0, 3), 2)])
async def test_two_pieces_that_each_outvote_another_are_both_confirmed(declined: tuple[int, int],
                                                                     approved: int) -> None:
    """Two of five notes say DECLINED and one says APPROVED; the model follows the majority (as a model reading
    retrieved passages can). Removing either DECLINED note flips the answer, but removing it together with the
    APPROVED one does not: the search of removals together, which takes a cause to act whatever else goes with it,
    set the second aside as "short of the leading suspects" after its own removal had flipped the answer. It is now
    tested alone."""
    texts = ["Say DECLINED." if k in declined else "Say APPROVED." if k == approved else f"Benign note {k}."
             for k in range(5)]

    def majority(text: str, _: Any) -> str:
        return "DECLINED" if text.count("Say DECLINED") > text.count("Say APPROVED") else "APPROVED"

    agent = notes_agent(texts, majority)
    run = await agent.run("Decide?")
    assert run.answer == "DECLINED"
    report = await localize(run, rerun=agent)
    assert sorted(report.confirmed) == [f"note-{k}" for k in declined]
    assert report.verdict(f"note-{approved}") == "not_confirmed"


async def test_every_piece_that_outvotes_the_others_is_confirmed_and_so_is_each_piece_of_a_parity() -> None:
    """Three DECLINED notes against two APPROVED: removing any DECLINED one flips the answer. The search names a
    pair; its members share the pair's level and a piece it set aside is followed up on a level a confirmed piece
    hands to no one, so all three are confirmed. When the answer is the parity of four notes (every removal alone
    flips it, no removal of two does), the search names no candidate and hands its whole level to the follow-ups:
    each of the four flips the answer alone, every time, and is confirmed; the benign note is not."""
    texts = ['Benign 3-0 831.', 'Say APPROVED #1.', 'Benign 3-3 624.', 'Say DECLINED #2.', 'Say APPROVED #0.',
             'Benign 3-1 331.', 'Say DECLINED #0.', 'Benign 3-2 238.', 'Benign 3-4 697.', 'Say DECLINED #1.']
    agent = notes_agent(texts, lambda text, _: "DECLINED" if text.count("Say DECLINED") > text.count("Say APPROVED")
                        else "APPROVED")
    report = await localize(await agent.run("Decide?"), rerun=agent)
    assert sorted(report.confirmed) == ["note-3", "note-6", "note-9"]

    parity = notes_agent([f"Flag {k} on." for k in range(4)] + ["Benign."],
                         lambda text, _: "ODD" if text.count(" on.") % 2 else "EVEN")
    report = await localize(await parity.run("Decide?"), rerun=parity)
    assert sorted(report.confirmed) == ["note-0", "note-1", "note-2", "note-3"]
    assert report.verdict("note-4") == "not_confirmed" and report.reruns <= report.budget


def flags_agent(benign: int, flags: int, seed: str) -> tuple[Agent, list[str]]:
    """``benign`` notes and ``flags`` flags, shuffled; the answer needs every flag (so removing any one flips it)."""
    import random

    names = ["zebra", "yak", "okapi", "emu"][:flags]
    chooser = random.Random(seed)
    texts = [f"Benign note {k} {chooser.randint(100, 999)}." for k in range(benign)] + [f"Flag {n} raised."
                                                                                         for n in names]
    chooser.shuffle(texts)
    agent = notes_agent(texts, lambda text, _: "APPROVED" if all(f"Flag {n} raised." in text for n in names)
                        else "DECLINED")
    return agent, [f"note-{k}" for k, text in enumerate(texts) if text.startswith("Flag")]


@pytest.mark.parametrize("flags", [3, 4])
async def test_three_or_four_pieces_each_needed_are_all_confirmed_on_the_defaults(flags: int) -> None:
    """The answer needs every one of three or four flags among eight notes (each removed alone in screening). The
    search, which weighs two causes at most, spent the budget the second and third needed and left them undecided
    (20 of 60 confirmed over twenty shuffles, 23 of 80 with four flags; now all, in 35 and 43 reruns on average). On
    a model whose unchanged reruns never flipped, it now also weighs three or four of the pieces that flipped alone
    each being a cause."""
    for shuffle in range(3):
        agent, causes = flags_agent(8, flags, f"and-8-{flags}-{shuffle}")
        report = await localize(await agent.run("Decide?"), rerun=agent)
        assert sorted(report.confirmed) == sorted(causes), str(report)


@pytest.mark.parametrize("benign", [20, 40])
async def test_among_many_pieces_no_piece_each_needed_is_set_aside_unsaid(benign: int) -> None:
    """Three flags each needed among twenty or forty notes (a group test: halves removed at once). The third was
    called not confirmed with no rerun of its own in 16 of 60 cases. Each round that confirms a cause now hands its
    level to a search for the next (50-58 of 60 confirmed), and what stays short is undecided or named by the report
    as set aside by the group test without a rerun removing it alone, never a bare "not confirmed"."""
    confirmed = 0
    for shuffle in range(4):
        agent, causes = flags_agent(benign, 3, f"and-{benign}-3-{shuffle}")
        report = await localize(await agent.run("Decide?"), rerun=agent)
        assert not set(report.confirmed) - set(causes)
        for cause in causes:
            assert report.verdict(cause) != "not_confirmed" or cause in report.set_aside_in_groups, str(report)
        confirmed += len(set(report.confirmed) & set(causes))
    assert confirmed >= 10, confirmed   # of 12; before: the third was most often missed


def majority_agent(benign: int, declined: str, approved: str, seed: str) -> tuple[Agent, list[str]]:
    """``benign`` notes, three that vote one way and two the other; the model follows the majority."""
    import random

    chooser = random.Random(seed)
    texts = [f"Benign note {k} {chooser.randint(100, 999)}." for k in range(benign)] + [
        f"{declined} #{k}." for k in range(3)] + [f"{approved} #{k}." for k in range(2)]
    chooser.shuffle(texts)
    agent = notes_agent(texts, lambda text, _: "DECLINED" if text.count(declined) > text.count(approved)
                        else "APPROVED")
    return agent, [f"note-{k}" for k, text in enumerate(texts) if text.startswith(declined)]


async def test_notes_the_model_follows_by_majority_are_all_confirmed_among_many_pieces() -> None:
    """Three notes say DECLINED against two APPROVED among twenty benign ones: the group test removes halves, and a
    DECLINED note removed with an APPROVED one keeps the answer, so the search of single causes found one of the
    three and set the others aside with 40 of 62 reruns unspent. The ranking reads the answer in all three; each the
    group test set aside that the ranking points at as strongly as at the confirmed one is now removed alone."""
    agent, causes = majority_agent(20, "Say DECLINED", "Say APPROVED", "maj-20-3")
    report = await localize(await agent.run("Decide?"), rerun=agent)
    assert report.design.startswith("group test")
    assert sorted(report.confirmed) == sorted(causes), str(report)


async def test_a_group_test_that_set_pieces_aside_without_removing_them_alone_says_so_and_how_to_test_one() -> None:
    """The same majority with notes whose words the answer does not share ("Vote no" against "Vote yes"): no ranking
    points at them, so what the group test set aside was never removed alone. The report says so, in its text, its
    frame and its view, and names the call that tests one alone (removing each alone on every run would cost a rerun
    a piece on runs with a single cause)."""
    from footprint_lab.lab.views.explain import localization_html

    agent, causes = majority_agent(20, "Vote no", "Vote yes", "maj-20-3")
    run = await agent.run("Decide?")
    report = await localize(run, rerun=agent)
    assert report.design.startswith("group test")
    missed = [name for name in causes if name not in report.confirmed]
    assert missed and set(missed) <= set(report.set_aside_in_groups)
    line = report.group_line()
    assert line in str(report) and line in report.to_frame().attrs["notes"]
    assert "localize(run, rerun=..., sources=[" in str(localization_html(report))
    named = [name.strip().strip("'") for name in line.split("sources=[")[1].split("]")[0].split(",")]
    assert set(named) <= set(report.set_aside_in_groups)
    alone = await rerun_without(run, [missed[0]], rerun=agent, samples=3)
    assert alone.trial.verdict == "confirmed"   # removed alone, a piece set aside is found


async def test_a_follow_up_no_look_could_confirm_spends_no_rerun() -> None:
    """At alpha 0.001 a follow-up's one look (three reruns beside nine unchanged ones at best) cannot reach the level
    the confirmed piece hands on: the piece keeps the search's verdict and no rerun is spent on it."""
    texts = ["Say DECLINED.", "Say DECLINED.", "Benign note 2.", "Say APPROVED.", "Benign note 4."]
    agent = notes_agent(texts, lambda text, _: "DECLINED" if text.count("Say DECLINED") > text.count("Say APPROVED")
                        else "APPROVED")
    report = await localize(await agent.run("Decide?"), rerun=agent, alpha=0.001)
    assert report.confirmed == ["note-1"]
    (left,) = [suspect for suspect in report.suspects if suspect.source_id == "note-0"]
    assert left.verdict == "not_confirmed" and left.reruns == 1 and "removed alone" not in left.reason


async def test_two_pieces_each_enough_when_restored_are_both_confirmed() -> None:
    """The same for pieces left out: restoring either of two flips the answer, among enough for a group test."""
    context = [define_fact(id=f"off-{k}", data=f"Skipped benign {k}." if k < 18 else f"gate {k}",
                           active_when=lambda view: False) for k in range(20)]
    agent = Agent(provider=mock(respond=lambda request: "DECLINED" if "gate 18" in request.system
                                or "gate 19" in request.system else "APPROVED"), system="Decide.", context=context)
    run = await agent.run("Decide?")
    report = await find_dropped_context(run, rerun=agent)
    assert sorted(p.source_id for p in report.pieces if p.trial.verdict == "confirmed") == ["off-18", "off-19"]


@tool
def escalate(amount: float) -> str:
    """Ask a person to approve."""
    return str(ask_human("Approve?", choices=["yes", "no"]))


async def test_a_rerun_that_stops_to_ask_a_person_is_a_failed_rerun_never_a_change() -> None:
    def decide(text: str, request: LLMRequest) -> Any:
        if "zebra flag" in text:
            return "APPROVED"
        if request.messages[-1]["role"] == "tool":
            return "DECLINED"
        return {"tool": "escalate", "args": {"amount": 1}}  # without the flag the agent stops to ask

    agent = notes_agent(["Benign one.", "Benign two.", "zebra flag."], decide, tools=[escalate])
    run = await agent.run("Decide?")
    without = await rerun_without(run, ["note-2"], rerun=agent)
    assert not without.changed and without.after is None and "ask a person" in str(without.error)
    report = await localize(run, rerun=agent)
    assert "note-2" not in report.confirmed and report.verdict("note-2") == "undecided"


def flagged() -> Agent:
    return notes_agent(["Benign one.", "Benign two.", "zebra flag."],
                       lambda text, _: "APPROVED" if "zebra flag" in text else "DECLINED")


async def test_a_factory_that_fails_is_refused_before_a_rerun_or_fails_only_its_own_reruns() -> None:
    agent = flagged()
    run = await agent.run("Decide?")
    calls = agent.provider.calls

    def broken(exclude: Any = (), seed: Any = None) -> Any:
        raise ConnectionError("registry down at 10.0.0.7")

    def on_one(exclude: Any = (), seed: Any = None) -> Any:
        if "note-2" in exclude:
            raise KeyError("note-2")
        return agent.without(list(exclude), seed=seed)

    def positional(exclude: Any, /, seed: Any = None) -> Any:
        return agent.without(list(exclude), seed=seed)

    async def built_elsewhere(exclude: Any = (), seed: Any = None) -> Any:
        return agent.without(list(exclude), seed=seed)  # an async factory that builds a runner, not an answer

    for factory in (broken, on_one, positional, built_elsewhere):
        with pytest.raises(Refusal) as refused:
            await localize(run, rerun=factory)
        assert refused.value.code == "ERR_EXPLAIN_CONFIG" and "10.0.0.7" not in str(refused.value)
    assert agent.provider.calls == calls

    def later(exclude: Any = (), seed: Any = None) -> Any:
        if seed is not None and seed >= 1:
            raise ConnectionError("flaky")
        return agent.without(list(exclude), seed=seed)

    report = await localize(run, rerun=later)  # the reruns a failing build leaves out are failed reruns, counted
    assert report.failed > 0 and "note-2" not in [s.source_id for s in report.suspects if s.verdict ==
                                                   "not_confirmed"]


async def test_a_paused_run_is_refused_by_find_dropped_context_as_by_localize() -> None:
    """It has no answer to compare a restoration with; it used to test nothing and advise passing rerun=agent,
    which the caller had done."""
    from footprint_lab.errors import NothingToLocalizeError

    context = [define_fact(id="on", data="Benign."),
               define_fact(id="off", data="gate", active_when=lambda view: False)]
    agent = Agent(provider=mock(respond=lambda request: {"tool": "escalate", "args": {"amount": 1}}),
                  system="Decide.", context=context, tools=[escalate])
    run = await agent.run("Decide?")
    assert run.status == "paused"
    for explain in (localize, find_dropped_context):
        with pytest.raises(NothingToLocalizeError) as caught:
            await explain(run, rerun=agent)
        assert caught.value.reason == "no_answer"


async def test_an_empty_list_of_sources_to_test_or_remove_is_refused() -> None:
    """Nothing named means nothing tested: never a report that says every piece was."""
    agent = flagged()
    run = await agent.run("Decide?")
    with pytest.raises(Refusal) as refused:
        await localize(run, rerun=agent, sources=[])
    assert refused.value.code == "ERR_EXPLAIN_CONFIG" and "leave sources out" in str(refused.value)
    with pytest.raises(Refusal):
        await rerun_without(run, [], rerun=agent)


async def test_a_compositions_untested_pieces_are_named_once_each() -> None:
    from footprint_lab import Sequence

    def agent(ids: list[str], texts: list[str], decide: Any) -> Agent:
        return Agent(provider=mock(respond=lambda request: decide(seen(request))), system="Decide.",
                     context=[define_fact(id=i, data=t) for i, t in zip(ids, texts, strict=True)])

    flow = Sequence({"triage": agent(["u-0", "u-1"], ["Benign.", "zebra flag"],
                                     lambda text: "ESCALATE" if "zebra flag" in text else "ROUTINE"),
                     "decide": agent(["d-0"], ["Benign down."],
                                     lambda text: "APPROVED" if "ESCALATE" in text else "DECLINED")})
    run = await flow.run("Decide?")
    report = await localize(run, rerun=flow)
    assert report.confirmed == ["u-1"]
    assert len(report.untested) == len(set(report.untested)) and "user-message" in dict(report.untested)


async def test_a_piece_judged_on_no_finished_rerun_says_its_failures_count_group_reruns_too() -> None:
    """Its reason counts every rerun that removed it, its own and a group test's, and says so."""
    answered: list[int] = []

    def down(request: LLMRequest) -> str:  # the run answers; every rerun after it meets a provider that is down
        if answered:
            raise RuntimeError("provider down")
        answered.append(1)
        return "APPROVED"

    texts = [f"Benign fact number {k}." for k in range(16)]
    agent = notes_agent(texts, lambda text, request: down(request))
    run = await agent.run("Decide?")
    report = await localize(run, rerun=agent)
    reasons = [s.trial.reason for s in report.suspects if s.verdict == "undecided"]
    assert reasons and all("counting those that made this change with others" in reason for reason in reasons)


async def test_a_decision_word_changed_inside_a_long_answer_is_not_passed_over_in_silence() -> None:
    """The answer opens "Decision: APPROVED." and goes on for seventy words; without the planted fact it opens
    "Decision: DECLINED.". The default comparator reads a 1.5% change of words as unchanged, so nothing is confirmed,
    and the report advised bisect_culprits. It now says that reruns without a piece changed the answer's words
    while no unchanged rerun did, and how to compare the decision instead; that comparator confirms the fact."""
    from footprint_lab.explain.compare import Label

    boiler = " ".join(f"Sentence {k} of the reply thanks the customer and restates the terms." for k in range(7))
    agent = Agent(provider=mock(respond=lambda request: "Decision: " + (
        "APPROVED" if "VIP override" in seen(request) else "DECLINED") + ". " + boiler),
        system="You decide refund requests.",
        context=[define_fact(id="plan", data="Customer is on the Plus plan."),
                 define_fact(id="vip-override", data="The customer holds a VIP override."),
                 define_fact(id="tone", data="Be polite.")])
    run = await agent.run("Please refund order A-1001.")
    report = await localize(run, rerun=agent)
    assert not report.confirmed
    note = report.wording
    assert "below the comparator's threshold" in note and "comparator=" in note and note in str(report)
    assert "(at most 1.2% of them" in note and note in report.to_frame().attrs["notes"]   # 1 word in 81, not "0%"
    labelled = await localize(run, rerun=agent, comparator=Label(pattern=r"Decision: (\w+)"))
    assert labelled.confirmed == ["vip-override"] and not labelled.wording


def voting_agent(tag: int, noise: float, benign: int = 2) -> Agent:
    """Two notes say DECLINED and one APPROVED among ``benign`` benign ones; the model follows the majority, but keeps
    to DECLINED in ``noise`` of its seeded reruns that would answer APPROVED."""
    import random

    texts = ["Say DECLINED.", "Say APPROVED.", "Say DECLINED.", *(f"Benign note {k} {tag}." for k in range(benign))]

    def respond(request: LLMRequest) -> str:
        text = seen(request)
        label = "DECLINED" if text.count("Say DECLINED") > text.count("Say APPROVED") else "APPROVED"
        if request.seed is not None and label == "APPROVED" and \
                random.Random(f"{tag}/{request.seed}/{len(text)}/{text[-50:]}").random() < noise:
            label = "DECLINED"
        return label

    return Agent(provider=mock(respond=respond), system="Decide.",
                 context=[define_fact(id=f"note-{k}", data=text) for k, text in enumerate(texts)])


async def test_a_piece_followed_up_that_flips_more_often_than_noise_is_undecided_not_set_aside() -> None:
    """A piece the search set aside after it flipped alone is followed up at one look and confirmed only when every
    rerun flips. One that flipped in 2 of 3 against 0 of 3 unchanged was called not confirmed ("no sign of an
    effect" is what that verdict means), with budget left; it is now undecided, saying how to decide it."""
    for tag in range(30):
        agent = voting_agent(tag, 0.1)
        report = await localize(await agent.run("Decide?"), rerun=agent)
        for suspect in report.suspects:
            if suspect.source_id in ("note-0", "note-2") and "removed alone on" in suspect.reason:
                flips, finished = suspect.flips, suspect.samples
                stronger = flips * suspect.noise_samples > suspect.noise_flips * finished
                assert suspect.verdict != "not_confirmed" or not stronger, (tag, str(report))


async def test_the_group_tests_blind_spot_names_no_piece_a_rerun_removed_alone() -> None:
    """After a group test the search of removals together also removes single pieces; a piece one of its finished
    reruns removed alone was still named "set aside without a rerun removing it alone" (21 of 240 calls)."""
    from footprint_lab.explain.compare import Label

    checked = 0
    for shuffle in range(12):
        texts = [f"Benign note {k} v{shuffle}." for k in range(19)] + ["Say DECLINED."]
        agent = noisy_notes_agent(texts, 0.3, shuffle)
        report = await localize(await agent.run("Decide?"), rerun=agent,
                                comparator=Label(choices=["APPROVED", "DECLINED", "PENDING"]))
        alone = {o.changed[0] for o in report.trial.joint if len(o.changed) == 1 and o.error is None}
        assert not alone & set(report.set_aside_in_groups)
        checked += bool(alone)
    assert checked   # the search did remove single pieces in some of these calls


def noisy_notes_agent(texts: list[str], noise: float, tag: int) -> Agent:
    """DECLINED when a note says so, else APPROVED; in ``noise`` of its seeded reruns a label at random."""
    import random

    def respond(request: LLMRequest) -> str:
        text = seen(request)
        label = "DECLINED" if "Say DECLINED" in text else "APPROVED"
        chooser = random.Random(f"{tag}/{request.seed}/{len(text)}/{text[-60:]}")
        if request.seed is not None and chooser.random() < noise:
            label = chooser.choice(["APPROVED", "DECLINED", "PENDING"])
        return label

    return Agent(provider=mock(respond=respond), system="Decide.",
                 context=[define_fact(id=f"note-{k}", data=text) for k, text in enumerate(texts)])


async def test_the_group_tests_blind_spot_names_the_call_the_analyst_can_make() -> None:
    """The line named rerun_without(run, [...], rerun=...) after a replay, which rerun_without cannot do; it now
    names localize with the pieces as sources, by the way the pieces were taken out."""
    agent, _ = majority_agent(20, "Vote no", "Vote yes", "maj-20-3")
    run = await agent.run("Decide?")
    report = await localize(run, rerun=agent)
    assert "localize(run, rerun=..., sources=[" in report.group_line()
    named = report.group_line().split("sources=[")[1].split("]")[0]
    sources = [name.strip().strip("'") for name in named.split(",")]
    again = await localize(run, rerun=agent, sources=sources)
    assert set(again.confirmed) <= set(sources) and again.design == "each arm confirmed directly"


async def test_when_every_screening_rerun_fails_the_call_stops_there_and_says_why() -> None:
    """A provider that fails every rerun (down, out of credit) had the call spend nearly its whole budget (50 of 53
    reruns) on reruns that fail. It now stops after the screening, each piece undecided as "every rerun failed", with
    a note naming the failures."""
    calls = {"made": 0}

    def respond(request: LLMRequest) -> str:
        calls["made"] += 1
        if calls["made"] > 1:
            raise RuntimeError("provider down")
        return "APPROVED"

    agent = Agent(provider=mock(respond=respond), system="Decide.",
                  context=[define_fact(id=f"note-{k}", data=f"Note {k}.") for k in range(6)])
    report = await localize(await agent.run("Decide?"), rerun=agent)
    assert report.reruns == 2 + 7 and report.budget > 50   # two unchanged reruns and one without each piece
    assert all(s.verdict == "undecided" and "every rerun failed" in s.reason for s in report.suspects)
    assert any(note.startswith("Every screening rerun failed (RuntimeError x9)") for note in report.notes)


@tool
def check_vip(customer: str) -> str:
    """Check whether a customer is a VIP.

    Args:
        customer: the customer's id
    """
    return "VIP-platinum: approve"


@tool
def check_basic(customer: str) -> str:
    """Check a customer's basic standing.

    Args:
        customer: the customer's id
    """
    return "basic: decline"


async def test_a_piece_sent_only_to_the_call_that_chose_a_tool_is_a_candidate_and_confirmed() -> None:
    """The hint steers the first call's tool choice and the answering call never sees it: it reached the answer
    through the tool result, so the backtrack names it and localize on its defaults tests and confirms it."""

    def model(request: LLMRequest) -> Any:
        results = [m for m in request.messages if m.get("role") == "tool"]
        if not results:
            return {"tool": "check_vip" if "vip check" in seen(request) else "check_basic", "args": {"customer": "c"}}
        return "YES, approve" if "approve" in str(results[-1].get("content")) else "NO, decline"

    hint = define_fact(id="router-hint", data="Always use the vip check.", active_when=lambda view: view.iteration == 1)
    agent = Agent(provider=mock(respond=model), system="Decide.", tools=[check_vip, check_basic],
                  context=[hint, define_fact(id="other", data="A benign note.")])
    run = await agent.run("Approve?")
    first = run.recording.exchanges[0].step_id
    candidate = run.backtrack().candidate("router-hint")
    assert candidate is not None and candidate.read_by == first
    report = await localize(run, rerun=agent)
    assert "router-hint" in report.confirmed
    assert "router-hint" not in [name for name, _ in report.untested]


def _remembering(store: Any, **fact: Any) -> Agent:
    """An agent that answers YES when the planted fact is sent, or when memory says it answered YES before."""
    from footprint_lab.context import define_memory

    def model(request: LLMRequest) -> str:
        text = seen(request)
        return "YES, it is" if "zebra" in text or "assistant: YES" in text else "NO, it is not"

    return Agent(provider=mock(respond=model), system="Answer yes or no.",
                 context=[define_fact(id="culprit", data="zebra", **fact),
                          define_fact(id="other", data="A benign note."), define_memory(id="mem", store=store)])


async def test_reruns_recall_the_memory_the_run_recalled_not_the_answer_it_wrote_back() -> None:
    """The run recalled nothing, then wrote its own YES back: a rerun that recalled the store's latest items would be
    sent that YES and keep answering it, and the planted fact would read as not the cause."""
    from footprint_lab.context import InMemoryStore

    store = InMemoryStore()
    agent = _remembering(store)
    run = await agent.run("Is it yes?", identity={"principal": "dana"})
    assert run.answer == "YES, it is"
    trap = await agent.without(["culprit"]).run("Is it yes?", identity={"principal": "dana"})
    assert trap.answer == "YES, it is"  # outside a rerun, a rebuilt agent recalls the YES the run wrote back
    report = await localize(run, rerun=agent)
    assert report.confirmed == ["culprit"]
    one = await rerun_without(run, ["culprit"], rerun=agent)
    assert one.after == "NO, it is not"


async def test_a_follow_ups_reruns_recall_what_that_turn_recalled() -> None:
    """Turn 2 recalled turn 1's items (which say NO) and wrote its own YES back after: its reruns recall turn 1's."""
    from footprint_lab.context import InMemoryStore

    agent = _remembering(InMemoryStore(), active_when=lambda view: "second" in view.message)
    await agent.run("first question")
    before = agent.checkpoint()
    second = await agent.follow_up("second question: is it yes?")
    assert second.answer == "YES, it is"
    recalled = [p.content for p in second.recording.context_pieces if p.source_kind == "memory"]
    assert recalled and not any("YES" in text for text in recalled)
    report = await localize(second, rerun=agent, continue_from=before)
    assert report.confirmed == ["culprit"] and report.confirmed_together == []


async def test_an_agent_that_did_not_make_the_run_is_refused_by_name_before_any_rerun() -> None:
    """Its declarations name other pieces: the refusal says which agent to pass, not to fix ids nobody gave."""
    from footprint_lab.errors import ExplainConfigError

    calls: list[str] = []

    def model(request: LLMRequest) -> str:
        calls.append(seen(request))
        return "YES" if "zebra" in seen(request) else "NO"

    made = Agent(provider=mock(respond=model), system="S.", context=[define_fact(id="culprit", data="zebra")])
    other = Agent(provider=mock(respond=model), system="S.", context=[define_fact(id="renamed", data="zebra")])
    run = await made.run("q")
    calls.clear()
    with pytest.raises(ExplainConfigError) as refused:
        await localize(run, rerun=other)
    assert refused.value.code == "ERR_EXPLAIN_CONFIG" and refused.value.setting == "rerun"
    assert "the agent that made the run" in str(refused.value) and "renamed" not in str(refused.value)
    assert calls == []


def _namespace(principal: str) -> str:
    from footprint_lab.core.identity import Identity

    return Identity(principal=principal).namespace()


async def test_each_member_recalls_in_its_reruns_what_it_recalled_from_its_own_store() -> None:
    """Two members declare memory 'mem' on stores of their own, whose item keys are alike: member a (limit 1) recalled
    its key 2 only, and a rerun must not hand it key 1 of its store, which member b recalled from another."""
    from footprint_lab import Sequence
    from footprint_lab.context import InMemoryStore, define_memory

    first, second = InMemoryStore(), InMemoryStore()
    first.remember(_namespace("ada"), [{"role": "user", "content": "alpha POISON"}, {"role": "user", "content": "a2"}])
    second.remember(_namespace("ada"), [{"role": "user", "content": "beta"}, {"role": "user", "content": "SECRET"}])
    sent: list[str] = []

    def member_a(request: LLMRequest) -> str:
        sent.append(seen(request))
        return "poisoned" if "POISON" in seen(request) else "A done"

    def member_b(request: LLMRequest) -> str:
        text = seen(request)
        return "DECLINED" if "poisoned" in text else "APPROVED" if "SECRET" in text else "DECLINED"

    flow = Sequence({
        "a": Agent(provider=mock(respond=member_a), system="A.",
                   context=[define_memory(id="mem", store=first, write_back=False, limit=1)]),
        "b": Agent(provider=mock(respond=member_b), system="B.",
                   context=[define_memory(id="mem", store=second, write_back=False)])})
    run = await flow.run("go", identity={"principal": "ada"})
    assert run.answer == "APPROVED"
    sent.clear()
    report = await localize(run, rerun=flow)
    assert sent and not any("POISON" in text for text in sent)
    assert report.confirmed == ["b/mem"]  # b's memory holds the SECRET it answers from


async def test_a_memory_the_trigger_left_out_is_restored_with_what_the_store_held() -> None:
    """It recalled nothing (its trigger never matched), so there are no items to recall again: a restoration recalls
    what the store held when the run ran, and the dropped note is shown to matter."""
    from footprint_lab.context import InMemoryStore, define_memory
    from footprint_lab.explain.compare import Label

    store = InMemoryStore()
    store.remember(_namespace("ada"), [{"role": "user", "content": "I am a VIP customer"}])
    agent = Agent(provider=mock(respond=lambda request: "APPROVED" if "VIP customer" in seen(request) else "DECLINED"),
                  system="Decide.", context=[define_memory(id="mem", store=store, active_when=lambda view: False)])
    run = await agent.run("Refund please.", identity={"principal": "ada"})
    assert run.answer == "DECLINED"
    report = await find_dropped_context(run, rerun=agent, comparator=Label(choices=["APPROVED", "DECLINED"]))
    assert [(piece.source_id, piece.status) for piece in report] == [("mem", "confirmed")]


async def test_memory_keys_a_redaction_pattern_masks_still_recall_what_the_run_recalled() -> None:
    """A pattern covering short numbers masks the item keys the recording keeps: reruns recall what the store held
    when the run ran, not nothing."""
    from footprint_lab import Redaction
    from footprint_lab.context import InMemoryStore, define_memory
    from footprint_lab.explain.compare import Label

    store = InMemoryStore()
    store.remember(_namespace("ada"), [{"role": "user", "content": "I am a VIP customer"}])
    agent = Agent(provider=mock(respond=lambda request: "APPROVED" if "VIP customer" in seen(request) else "DECLINED"),
                  system="Decide.", redact=Redaction(patterns={"num": r"\b\d{1,6}\b"}),
                  context=[define_memory(id="mem", store=store), define_fact(id="benign", data="Be kind.")])
    run = await agent.run("Refund please.", identity={"principal": "ada"})
    assert "[redacted:num]" in {str(p.detail.get("item")) for p in run.recording.context_pieces}
    report = await localize(run, rerun=agent, comparator=Label(choices=["APPROVED", "DECLINED"]))
    assert report.confirmed == ["mem"]


async def test_a_piece_of_the_first_pass_of_a_long_loop_is_tested_past_the_backtracks_display_limits() -> None:
    """The hint steers pass 1's tool choice, and 39 later passes carry the answer on: the backtrack's default depth
    (32) stops short of pass 1, yet localize walks the whole run, so the hint is tested and confirmed."""
    from footprint_lab import Loop
    from footprint_lab.explain.compare import Label

    def model(request: LLMRequest) -> Any:
        users = [m for m in request.messages if m.get("role") == "user"]
        said = str(users[-1].get("content")) if users else ""
        if said.startswith(("YES", "NO")):
            return said
        results = [m for m in request.messages if m.get("role") == "tool"]
        if not results:
            return {"tool": "check_vip" if "vip check" in seen(request) else "check_basic", "args": {"customer": "c"}}
        return "YES, approve" if "approve" in str(results[0].get("content")) else "NO, decline"

    hint = define_fact(id="router-hint", data="Always use the vip check.",
                       active_when=lambda view: view.iteration == 1 and view.message == "go")
    agent = Agent(provider=mock(respond=model), system="Decide.", tools=[check_vip, check_basic],
                  context=[hint, define_fact(id="other", data="A benign note.")])
    loop = Loop(agent, until=lambda answer: False, times=40)
    run = await loop.run("go")
    assert run.backtrack().candidate("router-hint") is None  # past the display's depth
    report = await localize(run, rerun=loop, comparator=Label(choices=["YES", "NO"]))
    assert "router-hint" in report.confirmed


async def test_a_long_loops_model_turns_are_counted_and_each_piece_a_rerun_could_test_is_named() -> None:
    """300 model turns, none removable, were 300 lines of "Not tested"; pieces top= left out are each still named."""
    noop = tool(lambda: "ok", name="noop", description="Does nothing.")
    agent = Agent(provider=mock(respond=lambda request: {"tool": "noop", "args": {}} if request.call_index < 300
                                else "done"), tools=[noop], system="Go.", max_iterations=301,
                  context=[define_fact(id=f"fact-{k}", data=f"Fact {k}.") for k in range(8)])
    run = await agent.run("Start.")
    report = await localize(run, rerun=agent, top=2)
    text = str(report)
    assert "and 295 more: the model's own turns are what a rerun produces again" in text
    assert text.count("the model's own turns are what a rerun produces again") == 1
    left_out = [name for name, why in report.untested if why.startswith("left out by top=2")]
    assert len(left_out) >= 7 and all(f"'{name}': left out by top=2" in text for name in left_out)


class _KeylessStore:
    """A memory store as the protocol asks for it (recall and remember) whose items carry no key nor run id."""

    def __init__(self) -> None:
        self.items: dict[str, list[dict[str, Any]]] = {}

    def recall(self, namespace: str, *, limit: int) -> list[dict[str, Any]]:
        return [dict(item) for item in self.items.get(namespace, [])[-limit:]]

    def remember(self, namespace: str, items: Any) -> None:
        self.items.setdefault(namespace, []).extend({"role": i["role"], "content": i["content"]} for i in items)


async def test_a_store_whose_items_carry_no_key_recalls_in_reruns_what_the_run_recalled() -> None:
    """Every item reads as key 'None': the reruns recalled one item, the run's own write-back, and blamed the model."""
    from footprint_lab.context import define_memory
    from footprint_lab.explain.compare import Label

    store = _KeylessStore()
    store.remember(_namespace("ada"), [{"role": "user", "content": "I am a VIP customer"},
                                       {"role": "user", "content": "I like tea"}])
    agent = Agent(provider=mock(respond=lambda request: "APPROVED" if "VIP customer" in seen(request) else "DECLINED"),
                  system="Decide.", context=[define_memory(id="mem", store=store),
                                             define_fact(id="benign", data="Be kind.")])
    run = await agent.run("Refund please.", identity={"principal": "ada"})
    report = await localize(run, rerun=agent, comparator=Label(choices=["APPROVED", "DECLINED"]))
    assert report.confirmed == ["mem"] and report.trial.noise[0] == 0


async def test_a_forced_memory_recalls_nothing_written_after_the_run() -> None:
    """The store held only 'I like tea' when the run ran; another conversation wrote the VIP note later: restoring
    the memory the trigger left out must not be sent it."""
    from footprint_lab.context import InMemoryStore, define_memory
    from footprint_lab.explain.compare import Label

    store = InMemoryStore()
    store.remember(_namespace("ada"), [{"role": "user", "content": "I like tea"}])
    agent = Agent(provider=mock(respond=lambda request: "APPROVED" if "VIP customer" in seen(request) else "DECLINED"),
                  system="Decide.", context=[define_memory(id="mem", store=store, active_when=lambda view: False)])
    run = await agent.run("Refund please.", identity={"principal": "ada"})
    store.remember(_namespace("ada"), [{"role": "user", "content": "I am a VIP customer", "run_id": "run-later"}])
    report = await find_dropped_context(run, rerun=agent, comparator=Label(choices=["APPROVED", "DECLINED"]))
    assert [(piece.source_id, piece.status) for piece in report] == [("mem", "not_confirmed")]


async def test_two_recalled_items_of_one_text_under_masked_keys_are_both_recalled_again() -> None:
    """A redaction pattern masks the item keys; the run was sent the same note twice, which the model counts: each
    rerun must be sent it twice too (once was one item fewer: the reruns changed the answer with nothing removed)."""
    from footprint_lab import Redaction
    from footprint_lab.context import InMemoryStore, define_memory
    from footprint_lab.explain.compare import Label

    store = InMemoryStore()
    note = {"role": "user", "content": "I am a VIP customer"}
    store.remember(_namespace("ada"), [note, {"role": "user", "content": "hi"}, note])
    agent = Agent(provider=mock(respond=lambda request: "APPROVED" if seen(request).count("VIP customer") >= 2
                                else "DECLINED"), system="Decide.", redact=Redaction(patterns={"num": r"\b\d{1,6}\b"}),
                  context=[define_memory(id="mem", store=store), define_fact(id="benign", data="Be kind.")])
    run = await agent.run("Refund please.", identity={"principal": "ada"})
    assert run.answer == "APPROVED"
    report = await localize(run, rerun=agent, comparator=Label(choices=["APPROVED", "DECLINED"]))
    assert report.confirmed == ["mem"] and report.trial.noise[0] == 0


async def test_a_recalled_item_deleted_since_is_left_out_and_nothing_recalled_in_its_place(tmp_path: Any) -> None:
    """The run recalled 'tea' and 'coffee' (limit 2); 'tea' was deleted since: a rerun recalls 'coffee' alone, not the
    older VIP note that now falls within the limit."""
    import sqlite3

    from footprint_lab.context import SQLiteStore, define_memory

    path = str(tmp_path / "memory.db")
    store = SQLiteStore(path)
    store.remember(_namespace("ada"), [{"role": "user", "content": text} for text in
                                       ("I am a VIP customer", "tea", "coffee")])
    sent: list[str] = []

    def model(request: LLMRequest) -> str:
        sent.append(seen(request))
        return "APPROVED" if "VIP customer" in seen(request) else "DECLINED"

    agent = Agent(provider=mock(respond=model), system="Decide.",
                  context=[define_memory(id="mem", store=store, limit=2, write_back=False),
                           define_fact(id="benign", data="Be kind.")])
    run = await agent.run("Refund please.", identity={"principal": "ada"})
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM memory_items WHERE content = ?", ("tea",))
    sent.clear()
    once = await rerun_without(run, ["benign"], rerun=agent)
    assert once.after == "DECLINED" and sent and all("VIP" not in text and "coffee" in text for text in sent)


@pytest.mark.parametrize("layout", [8, 10, 11, 13, 21])
async def test_a_cause_that_flips_the_outcome_half_the_time_is_never_confirmed_together_with_a_bystander(
        layout: int) -> None:
    """Among 40 notes only one matters, and its removal flips the answer on half the reruns: the narrowing of the
    group test's flips ended at that note and a bystander, and confirmed the two as acting together."""
    import hashlib
    import random

    from footprint_lab.explain.compare import Label

    cause = random.Random(layout).sample(range(40), 5)[0]

    def decide(text: str, request: LLMRequest) -> str:
        digest = hashlib.sha256("|".join(map(str, (layout, "w", request.seed, text))).encode()).hexdigest()
        return "YES" if f"NOTE-{cause}-X" in text or int(digest[:12], 16) / 16**12 > 0.5 else "NO"

    agent = notes_agent([f"Note NOTE-{k}-X about topic {k}." for k in range(40)], decide)
    run = await agent.run("Decide?")
    report = await localize(run, rerun=agent, comparator=Label(choices=["YES", "NO"]))
    assert set(report.confirmed) <= {f"note-{cause}"}
    assert all(together == (f"note-{cause}",) for together in report.confirmed_together)
