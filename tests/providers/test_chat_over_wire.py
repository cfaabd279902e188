"""A chat over a real wire: a rerun of turn k sends exactly one request, carrying the earlier turns as recorded."""

from __future__ import annotations

import json
from typing import Any

from wire_server import Reply, WireServer

from footprint_lab import Agent, Chat
from footprint_lab.context import define_fact


def openai_body(text: str) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}}


async def test_a_rerun_of_turn_k_calls_the_wire_once_with_the_earlier_turns_as_recorded(
        build: Any, server: WireServer) -> None:
    server.queue(*(Reply(body=openai_body(text)) for text in ("Noted.", "Sorry to hear.", "In 5 days.")))
    agent = Agent(provider=build("openai", stream=False), system="Support desk.",
                  context=[define_fact(id="refund-policy", data="Refunds take 5 days.")])
    chat = Chat(agent)
    for message in ("Order A-1.", "It broke.", "When is my refund?"):
        await chat.send(message)
    assert len(server.received) == 3
    server.queue(Reply(body=openai_body("I do not know.")))
    result = await chat.rerun(2, without=["refund-policy"])
    assert len(server.received) == 4  # turns 0 and 1 came from the recording, not from the model
    sent = server.received[-1].body
    assert [(m["role"], m["content"]) for m in sent["messages"][1:]] == [
        ("user", "Order A-1."), ("assistant", "Noted."), ("user", "It broke."), ("assistant", "Sorry to hear."),
        ("user", "When is my refund?")]
    assert "Refunds take 5 days." not in sent["messages"][0]["content"]
    assert result.flipped and result.answer == "I do not know."
    assert chat.frame()["tokens"].tolist() == [14, 14, 14]


async def test_a_bug_report_over_the_wire_holds_no_key_nor_credentials_of_its_url(
        build: Any, server: WireServer, tmp_path: Any) -> None:
    import zipfile

    from provider_cases import SECRET

    server.queue(Reply(body=openai_body("Noted.")), Reply(body=openai_body("In 5 days.")))
    host = server.url.removeprefix("http://")
    provider = build("openai", stream=False, base_url=f"http://filer:pa55w0rd-URL@{host}/v1?token=QUERYTOKEN-1")
    chat = Chat(Agent(provider=provider, system="Support desk."))
    await chat.send("Order A-1.")
    await chat.send("When is my refund?")
    with zipfile.ZipFile(chat.bug_report(tmp_path / "bug.zip")) as bundle:
        files = {name: bundle.read(name) for name in bundle.namelist()}
    for name, data in files.items():
        for secret in (SECRET, "pa55w0rd-URL", "filer:", "QUERYTOKEN-1"):
            assert secret.encode() not in data, f"{name} holds a credential"
    shown = json.loads(files["provider.json"])
    assert shown["provider"] == "openai" and "gpt-4o-mini" in shown["models"]
    assert shown["endpoints"] and all(url.startswith(f"http://{host}/v1") and "?" not in url and "@" not in url
                                      for url in shown["endpoints"])
