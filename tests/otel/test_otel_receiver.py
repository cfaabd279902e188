"""``receive()``: an OTLP/HTTP receiver that makes each trace a run as its root span arrives.

What a user relies on: a framework exporting with the official OTLP exporter (protobuf, gzip) to
``receiver.url`` shows up as runs, live; JSON bodies work too; anything that is not OTLP traces is
answered by name with its HTTP status, never quoting the body, and the receiver stays up.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import urllib.error
import urllib.request
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from footprint_lab import Agent, define_tool
from footprint_lab.otel import OtelReceiverError, Receiver, receive, to_spans
from footprint_lab.providers import LLMRequest, mock

SECRET = "ZQX-body-secret"


def _recording(n: int = 0) -> Any:
    lookup = define_tool(name="lookup_order", description="Find an order by its id.",
                         input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}},
                         fn=lambda order_id="": {"order_id": order_id, "age_days": 47})

    def respond(request: LLMRequest) -> Any:
        return {"tool": "lookup_order", "args": {"order_id": "A-1"}} if request.call_index == 0 else f"DECLINED {n}"

    agent = Agent(provider=mock(respond=respond), tools=[lookup], system="Refunds are allowed within 30 days.")
    return agent.run_sync(f"Refund {n}?").recording


def _post(url: str, body: bytes, **headers: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_the_official_exporter_delivers_a_framework_run_live() -> None:
    from otel_kit import QUESTION, tool_then_answer

    langchain_openai = pytest.importorskip("langchain_openai")
    from langchain_core.tools import tool
    from openinference.instrumentation.langchain import LangChainInstrumentor

    @tool
    def lookup_order(order_id: str) -> str:
        """Find an order by its id."""
        return json.dumps({"order_id": order_id, "age_days": 47})

    arrived: list[Any] = []
    server = tool_then_answer("DECLINED")
    with receive(on_run=arrived.append) as receiver:
        provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=receiver.url,
                                                                        compression=Compression.Gzip)))
        instrumentor = LangChainInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        try:
            model = langchain_openai.ChatOpenAI(model="gpt-test", base_url=f"{server.url}/v1", api_key="sk-test")
            bound = model.bind_tools([lookup_order])
            first = bound.invoke([("user", QUESTION)])
            tool_message = lookup_order.invoke(first.tool_calls[0] | {"type": "tool_call"})
            bound.invoke([("user", QUESTION), first, tool_message])
        finally:
            instrumentor.uninstrument()
            server.close()
        provider.force_flush()
        assert receiver.settle()
        assert receiver.host == "127.0.0.1" and receiver.url.endswith("/v1/traces")
        # three traces (two calls and the tool, each its own root): each became a run as its root arrived
        assert len(receiver.runs) == 3 and arrived == receiver.runs and receiver.refused == {}
        answers = [run.answer for run in receiver.runs]
        assert "DECLINED" in answers
        provider.shutdown()


def test_json_bodies_gzip_or_not_and_a_trace_waits_for_its_root() -> None:
    data = MessageToDict(encode_spans(to_spans(_recording())))
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    root = next(s for s in spans if not s.get("parentSpanId"))
    children = {"resourceSpans": [{"scopeSpans": [{"spans": [s for s in spans if s is not root]}]}]}
    alone = {"resourceSpans": [{"scopeSpans": [{"spans": [root]}]}]}
    with receive() as receiver:
        as_json = {"Content-Type": "application/json"}
        assert _post(receiver.url, json.dumps(children).encode(), **as_json) == (200, b"{}")
        assert receiver.pending == 1 and receiver.runs == []
        status, _ = _post(receiver.url, gzip.compress(json.dumps(alone).encode()),
                          **{"Content-Type": "application/json; charset=utf-8", "Content-Encoding": "gzip"})
        assert status == 200 and receiver.pending == 0 and receiver.settle()
        (run,) = receiver.runs
        assert run.answer == "DECLINED 0" and [s.stage for s in run.recording.steps].count("call-llm") == 2
        # spans of a trace already made a run are counted, not imported twice
        _post(receiver.url, json.dumps(children).encode(), **as_json)
        assert receiver.settle() and receiver.late_spans == len(spans) - 1 and len(receiver.runs) == 1
    with receive() as receiver:  # a trace whose root never comes becomes a run when flushed
        _post(receiver.url, json.dumps(children).encode(), **as_json)
        assert receiver.pending == 1 and receiver.settle() and receiver.runs == []
        receiver.flush()
        assert receiver.pending == 0 and [run.answer for run in receiver.runs] == ["DECLINED 0"]


BAD = [
    ("a text body", 415, b"hello " + SECRET.encode(), {"Content-Type": "text/plain"}),
    ("no content type", 415, b"{}", {}),
    ("brotli", 415, b"{}", {"Content-Type": "application/json", "Content-Encoding": "br"}),
    ("protobuf garbage", 400, b"\xff\xfe" + SECRET.encode(), {"Content-Type": "application/x-protobuf"}),
    ("JSON garbage", 400, b"{" + SECRET.encode(), {"Content-Type": "application/json"}),
    ("JSON without spans", 400, json.dumps({"secret": SECRET}).encode(), {"Content-Type": "application/json"}),
    ("a span without ids", 400, json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"name": SECRET}]}]}]})
     .encode(), {"Content-Type": "application/json"}),
    ("false gzip", 400, b"not gzip " + SECRET.encode(), {"Content-Type": "application/json",
                                                          "Content-Encoding": "gzip"}),
    ("oversized", 413, b"{" + b" " * 5000 + b"}", {"Content-Type": "application/json"}),
    ("a gzip bomb", 413, gzip.compress(b" " * 200_000), {"Content-Type": "application/json",
                                                          "Content-Encoding": "gzip"}),
]


@pytest.mark.parametrize(("label", "status", "body", "headers"), BAD, ids=[b[0] for b in BAD])
def test_what_is_not_otlp_is_refused_by_status_and_the_receiver_stays_up(label: str, status: int, body: bytes,
                                                                         headers: dict[str, str]) -> None:
    good = encode_spans(to_spans(_recording())).SerializeToString()
    with receive(max_body_bytes=max(4096, len(good))) as receiver:
        got, reply = _post(receiver.url, body, **headers)
        assert got == status and SECRET.encode() not in reply
        refusal = json.loads(reply)
        assert refusal["code"] in ("ERR_OTLP_REQUEST", "ERR_OTEL_SPANS") or refusal["code"].startswith("ERR_OTEL")
        assert receiver.refused == {status: 1}
        assert _post(receiver.url, good, **{"Content-Type": "application/x-protobuf"}) == (200, b"")
        assert receiver.settle() and len(receiver.runs) == 1


def test_another_path_or_method_is_refused_by_status() -> None:
    with receive() as receiver:
        assert _post(receiver.url.replace("/v1/traces", "/v1/metrics"), b"{}",
                     **{"Content-Type": "application/json"})[0] == 404
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(receiver.url, timeout=10)
        assert refused.value.code == 405
        assert receiver.refused == {404: 1, 405: 1}


@pytest.mark.parametrize(("setting", "value"), [("port", -1), ("port", "4318"), ("port", 70_000), ("host", 127),
                                                ("host", ""), ("max_body_bytes", 0), ("max_body_bytes", 1.5),
                                                ("on_run", "print")])
def test_settings_it_cannot_listen_with_are_refused_before_listening(setting: str, value: Any) -> None:
    with pytest.raises(OtelReceiverError) as refused:
        receive(**{setting: value})
    assert refused.value.code == "ERR_OTEL_RECEIVER" and refused.value.argument == setting


def test_a_taken_port_is_refused_by_name() -> None:
    with receive() as first, pytest.raises(OtelReceiverError) as refused:
        receive(port=first.port)
    assert refused.value.argument == "port"


def test_a_subscriber_on_an_event_loop_is_called_there_and_one_that_raises_never_stops_the_receiver() -> None:
    body = encode_spans(to_spans(_recording())).SerializeToString()

    async def main(receiver: Receiver) -> list[Any]:
        loop = asyncio.get_running_loop()
        seen: list[Any] = []
        arrived = asyncio.Event()

        def on_loop(run: Any) -> None:
            assert asyncio.get_running_loop() is loop
            seen.append(run)
            arrived.set()

        receiver.subscribe(on_loop, loop=loop)
        stop = receiver.subscribe(lambda run: 1 / 0)
        protobuf = {"Content-Type": "application/x-protobuf"}
        await loop.run_in_executor(None, lambda: _post(receiver.url, body, **protobuf))
        await asyncio.wait_for(arrived.wait(), 10)
        stop()
        return seen

    with receive() as receiver:
        seen = asyncio.run(main(receiver))
        assert seen == receiver.runs and receiver.listener_errors == 1
        with pytest.raises(OtelReceiverError):
            receiver.subscribe("not callable")  # type: ignore[arg-type]
