"""A run computes each explanation its views draw once, and keeps it with the recording it explains.

Displaying a run twice, opening the Lab's panels on it, or asking ``run.backtrack()`` after the view
walks back from the answer once, ranks the suspects once and checks integrity once; the second display
is the same view. A recording replaced since (a chat masks an earlier turn once a later one learns a
secret) is explained anew, and nothing kept outlives its run.
"""

from __future__ import annotations

import gc
import weakref
from collections import Counter
from typing import Any

import pytest
from conversation_kit import Seen
from golden_kit import outline

from footprint_lab import Chat
from footprint_lab.core import run as _run
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.explain.checks import integrity as _integrity_checks
from footprint_lab.explain.provenance import custody as _custody
from footprint_lab.explain.provenance import influence as _influence
from footprint_lab.lab import panels


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each explanation was computed, from here on."""
    calls: Counter[str] = Counter()
    for module, name in ((_custody, "backtrack"), (_influence, "suspects"), (_integrity_checks, "integrity")):
        original = getattr(module, name)

        def counting(*args: Any, __original: Any = original, __name: str = name, **keywords: Any) -> Any:
            calls[__name] += 1
            return __original(*args, **keywords)

        monkeypatch.setattr(module, name, counting)
    return calls


def test_a_run_displayed_twice_is_explained_once_and_shows_the_same(counted: Counter[str]):
    run = planted_fact_agent().run_sync(REFUND_REQUEST)
    first = run._repr_mimebundle_()["text/html"]
    assert counted == {"backtrack": 1, "suspects": 1, "integrity": 1}
    second = run._repr_mimebundle_()["text/html"]
    assert counted == {"backtrack": 1, "suspects": 1, "integrity": 1}
    assert outline(first) == outline(second) and 'data-fl-piece="vip-override"' in second
    assert run.backtrack() is run.backtrack() and run.integrity() is run.integrity()
    assert run.suspects().equals(run.suspects())
    assert counted == {"backtrack": 1, "suspects": 1, "integrity": 1}


def test_the_labs_panels_read_what_the_answer_view_computed(counted: Counter[str]):
    run = planted_fact_agent().run_sync(REFUND_REQUEST)
    panels.answer_html(run.recording)
    call = panels.answering_call(run.recording)
    assert call is not None
    panels.piece_only_panel(run.recording, call, ("system", "vip-override"))
    panels.call_panel(run.recording, call, chosen=("system", "vip-override"))
    assert counted == {"backtrack": 1, "suspects": 1, "integrity": 1}


def test_the_lab_opening_pieces_reads_what_the_answer_view_computed(counted: Counter[str]):
    from footprint_lab import Lab

    """The first piece opened walks back from its call once; every piece opened after it reads that walk."""
    run = planted_fact_agent().run_sync(REFUND_REQUEST)
    lab = Lab(run=run)
    call = panels.answering_call(run.recording)
    lab.open_piece("vip-override", "system", call=call)
    first = Counter(counted)
    for piece in ("system-prompt", "vip-override", "system-prompt"):
        lab.open_piece(piece, "system", call=call)
        assert piece in lab.panel_html
    assert counted == first and first["integrity"] == 1 and first["backtrack"] <= 2  # the answer's, the call's


def test_a_users_change_to_the_suspects_frame_does_not_reach_the_view():
    run = planted_fact_agent().run_sync(REFUND_REQUEST)
    ranked = run.suspects()
    ranked["score"] = 0.0
    assert run.suspects()["score"].max() > 0
    assert "#1 · " in run._repr_mimebundle_()["text/html"]


SECRET = "hunter2-Correct-Horse"


async def test_a_turn_masked_since_is_explained_from_its_masked_recording():
    from footprint_lab import Agent, Redaction, define_tool

    def echo(request: Any) -> Any:
        last = list(request.messages)[-1]
        if last["role"] == "user" and last["content"].startswith("store"):
            return {"tool": "vault", "args": {"password": SECRET}}
        return f"Noted: {last['content']}"

    vault = define_tool(name="vault", description="Stores a password.", fn=lambda password: {"password": password},
                        input_schema={"type": "object", "properties": {"password": {"type": "string"}}})
    chat = Chat(Agent(provider=Seen(echo).provider, tools=[vault], redact=Redaction(keys=["password"])))
    await chat.send(f"My password is {SECRET}, please remember.")
    assert SECRET in str(chat[0].backtrack())  # nothing said it was a secret yet
    await chat.send("store it")  # now it is one: turn 0 is masked anew
    assert SECRET not in str(chat[0].backtrack())
    assert SECRET not in chat._repr_mimebundle_()["text/html"]


def test_what_a_run_keeps_goes_with_the_run():
    run = planted_fact_agent().run_sync(REFUND_REQUEST)
    run._repr_mimebundle_()
    key = id(run.recording)
    gone = weakref.ref(run)
    del run
    gc.collect()
    assert gone() is None and key not in _run._KEPT
