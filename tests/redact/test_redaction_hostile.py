"""A hostile user plants secrets anywhere, in any shape; no surface may show one (issue 17).

Hypothesis puts a password (text), a PIN (a number) and a ticket (a pattern match) into random
places: mapping keys and values, nested structures, tool arguments, tool results, a fact's data,
an error a tool raises, a note on the run, the answer, a person's question, a tool call's id;
and sometimes makes the run fail after its tool round. Then it scans everything a reader can
reach: the recording's JSON, the live events as a subscriber applying recalls holds them,
``run.events`` / ``run.steps`` / every ``run.context()`` frame, the HTML view, backtrack and
suspects text, the notes, the checkpoint (agent's, run's, the error's) with its repr and pickle,
the error's message, a refusal quoting a pending question, the notebook
``footprint_lab.notebook.export`` writes, and all of it again for the leg that resumes the run.
"""

from __future__ import annotations

import json
import pickle
import string
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from footprint_lab import Agent, Redaction, Sequence, ask_human, define_tool
from footprint_lab.context import define_fact
from footprint_lab.errors import FlowCheckpointError, Refusal, RunCheckpointError
from footprint_lab.notebook import export
from footprint_lab.providers import LLMRequest, mock
from footprint_lab.redact.policy import normalize_key

POLICY = {"keys": ["password", "pin"], "patterns": {"ticket": r"TCK-\d{6}"}}
TOKEN = st.text(alphabet=string.ascii_letters, min_size=8, max_size=12).map(lambda t: "Qz" + t)
NUMBER = st.integers(min_value=10**11, max_value=10**12 - 1)
TICKET = st.integers(min_value=100_000, max_value=999_999).map(lambda n: f"TCK-{n}")
PLACES = ("tool args", "tool result", "nested result", "fact data", "error")
TICKET_PLACES = ("message", "args key", "args value", "result key", "result value", "answer", "fact key", "note",
                 "error", "question", "call id")


@st.composite
def plans(draw: Any) -> dict[str, Any]:
    password, pin, ticket = draw(TOKEN), draw(NUMBER), draw(TICKET)
    covered = draw(st.sampled_from([
        {"password": password}, {"pin": pin}, {"user": {"password": password}}, {"rows": [{"pin": pin}]},
        {"Pass-Word": password}, {"PIN": pin}, {"auth": [{"x": 1}, {"password": password, "pin": pin}]},
        {"pass word": password}, {"password ": password}, {"\uff30\uff29\uff2e": pin}, {"pass\u200bword": password},
        {"p.i.n": pin},
    ]))
    return {"password": password, "pin": pin, "ticket": ticket, "covered": covered,
            "place": draw(st.sampled_from(PLACES)), "ticket_place": draw(st.sampled_from(TICKET_PLACES)),
            "echo": draw(st.booleans()), "fail": draw(st.booleans()), "stream": draw(st.booleans())}


def secrets_of(plan: dict[str, Any]) -> list[str]:
    """What the policy covers: the ticket, and the values it saw under a covered key (a result the tool never
    returned, because it raised or asked a person, was never seen: its values are just text to the policy)."""
    found = [plan["ticket"]]
    if plan["place"] in ("tool result", "nested result") and plan["ticket_place"] in ("error", "question"):
        return found
    keys = set(folded_keys(plan["covered"]))
    if "password" in keys:
        found.append(plan["password"])
    if "pin" in keys:
        found.append(str(plan["pin"]))
    return found


def folded_keys(value: Any) -> Iterator[str]:
    """Every mapping key in ``value``, folded as the key rule folds it."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield normalize_key(key)
            yield from folded_keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from folded_keys(item)


def build(plan: dict[str, Any]) -> tuple[Agent, str]:
    covered, ticket, where = plan["covered"], plan["ticket"], plan["ticket_place"]
    args: dict[str, Any] = {"q": "lookup"}
    result: dict[str, Any] = {"status": "ok"}
    facts: dict[str, Any] = {"plan": "pro"}
    raised: list[str] = []
    if plan["place"] == "tool args":
        args.update(covered)
    elif plan["place"] == "tool result":
        result.update(covered)
    elif plan["place"] == "nested result":
        result["rows"] = [{"deep": covered}]
    elif plan["place"] == "fact data":
        facts.update(covered)
    else:  # the covered value is learned from the arguments, and the tool's error repeats it
        args.update(covered)
        raised.append(f"rejected {json.dumps(covered)}")
    message, answer = "please look this up", "all done"
    if where == "message":
        message = f"about {ticket} please"
    elif where == "args key":
        args[ticket] = 1
    elif where == "args value":
        args["ref"] = {"nested": [f"see {ticket}"]}
    elif where == "result key":
        result[ticket] = "open"
    elif where == "result value":
        result["ticket"] = f"see {ticket}"
    elif where == "answer":
        answer = f"your ticket is {ticket}"
    elif where == "fact key":
        facts[ticket] = {"state": "open"}
    elif where == "error":
        raised.append(f"ticket {ticket} is locked")
    asks = [f"May I close {ticket} with {json.dumps(covered)}?"] if where == "question" else []
    if plan["echo"]:
        answer += f" (values {json.dumps(covered)})"

    def lookup(**given: Any) -> dict[str, Any]:
        if raised:
            raise ValueError("; ".join(raised))
        if asks:
            ask_human(asks.pop())
        return result

    failing = [plan["fail"] and where != "question"]

    def respond(request: LLMRequest) -> Any:
        if request.messages[-1]["role"] == "user":  # a hostile model may put anything in a call's id
            return {"tool": "lookup", "args": args, **({"id": f"call_{ticket}"} if where == "call id" else {})}
        if failing.pop() if failing else False:
            raise ConnectionError("the provider went away")
        return answer

    tool = define_tool(name="lookup", description="Look something up.",
                       input_schema={"type": "object", "properties": {}, "additionalProperties": True}, fn=lookup)
    agent = Agent(provider=mock(respond=respond, stream=plan["stream"]), tools=[tool],
                  context=[define_fact(id="account", data=facts)],
                  redact=Redaction(keys=POLICY["keys"], patterns=POLICY["patterns"]))  # type: ignore[arg-type]
    return agent, message


def held_live(events: list[Any]) -> str:
    """The live events as a subscriber that applies recalls holds them at the end."""
    held: dict[int, Any] = {}
    for event in events:
        if event.type == "recall":
            for entry in event.payload["events"]:
                held[entry["seq"]] = entry["payload"]
        else:
            held[event.seq] = event.payload
    return json.dumps(held)


def shown_checkpoint(checkpoint: Any) -> str:
    if checkpoint is None:
        return ""
    return "\n".join([checkpoint.model_dump_json(), repr(checkpoint), str(pickle.dumps(checkpoint)),
                      json.dumps(checkpoint._repr_mimebundle_(), default=str)])


def run_surfaces(run: Any, agent: Agent, events: list[Any], folder: str, leg: str) -> dict[str, str]:
    recording = run.recording
    out = {
        "recording": recording.model_dump_json(),
        "live events": held_live(events),
        "events frame": run.events.to_json(),
        "steps frame": run.steps.to_json(),
        "notes": run.annotations().to_json(),
        "html": run.to_html(),
        "backtrack": str(run.backtrack()) + run.backtrack().to_frame().to_json(),
        "suspects": run.suspects().to_json(),
        "repr": repr(run),
        "agent checkpoint": shown_checkpoint(agent.checkpoint()),
        "run checkpoint": shown_checkpoint(run.checkpoint),
        "notebook": export(run, Path(folder) / f"{leg}.ipynb", title="Hostile").read_text(),
    }
    for call in range(len(recording.exchanges)):
        out[f"context {call}"] = run.context(call, left_out=True).to_json()
    return {f"{leg} {where}": text for where, text in out.items()}


async def surfaces(runner: Any, agent: Agent, message: str, plan: dict[str, Any]) -> dict[str, str]:
    """Every surface of the run, and of the leg that continues it (a resume of a pause or a failure)."""
    events: list[Any] = []
    out: dict[str, str] = {}
    try:
        run = await runner.run(message, on_event=events.append)
    except (RunCheckpointError, FlowCheckpointError) as err:
        out["error"] = f"{err}\n{err!r}\n{json.dumps(err.evidence(), default=str)}"
        out["error checkpoint"] = shown_checkpoint(err.checkpoint)
        run, kept = runner.last_run, err.checkpoint
    else:
        kept = run.checkpoint
    assert run is not None and run.status in ("finished", "paused", "failed")
    run.annotate("answer", f"checked {plan['ticket']} with {json.dumps(plan['covered'])}", tag="audit")
    with tempfile.TemporaryDirectory() as folder:
        out.update(run_surfaces(run, agent, events, folder, "first"))
        if run.status == "finished":
            return out
        if runner is agent:
            try:
                await agent.run("something else")
            except Refusal as refused:  # a pending question is quoted masked
                out["refusal"] = str(refused)
        events = []
        answer = f"yes, {plan['password']} {plan['pin']}"
        then = (await runner.resume(kept, answer, on_event=events.append) if run.paused else
                await runner.resume_on_error(kept, on_event=events.append))
        assert then.status == "finished"
        out.update(run_surfaces(then, agent, events, folder, "then"))
    return out


def leaks(found: dict[str, str], plan: dict[str, Any]) -> list[tuple[str, str]]:
    return [(where, secret) for where, text in found.items() for secret in secrets_of(plan) if secret in text]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=plans())
async def test_random_secrets_in_random_places_reach_no_surface(plan: dict[str, Any]) -> None:
    agent, message = build(plan)
    assert leaks(await surfaces(agent, agent, message, plan), plan) == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=plans())
async def test_random_secrets_reach_no_surface_of_a_composition_either(plan: dict[str, Any]) -> None:
    """The same run as the second member of a Sequence whose first member already said the values (unmasked
    then: nothing had covered them yet)."""
    agent, message = build(plan)
    said = f"Known so far: {plan['password']} and {plan['pin']}, ticket pending."
    flow = Sequence({"teller": Agent(provider=mock(reply=said, stream=plan["stream"]), name="teller"),
                     "worker": agent})
    assert leaks(await surfaces(flow, agent, message, plan), plan) == []
