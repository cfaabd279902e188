"""Variants of issue 46's hostile inputs that its own tests did not use, each found breaking something.

- scan/scrub (high 6): a key split by a tag whose quoted attribute holds a ``>`` (``<span title="a>b">``),
  or by a markdown link (``[sk-...](https://x)...``), is one a reader sees whole.
- providers (medium): a reply nested 200,000 deep inside a tool call's arguments, the JSON text a reply
  carries as a string, is a typed provider failure like a body nested so deep, never a raw ``RecursionError``.
- forged displays (medium): "sealed · verified" a reader sees whole, though split in the file by a zero-width
  space, a soft hyphen or a comment, is a seal claim; and the claim is read in one pass (a megabyte of "<" took
  minutes).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import nbformat
import pytest

from footprint_lab import Redaction
from footprint_lab.notebook import scan, scrub
from footprint_lab.providers.errors import ProviderResponseError

KEY = "sk-variantkey0123456789abcdefghij"
POLICY = Redaction.standard()


def _notebook(markdown: str, html: str) -> dict[str, Any]:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(markdown),
                nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output(
                    "display_data", data={"text/plain": "shown", "text/html": html})])]
    return json.loads(nbformat.writes(nb))


# -- high 6: what a reader sees whole ----------------------------------------------------------------------
QUOTED = {
    "double-quoted title holding >": '<span title="a>b">{}</span>',
    "single-quoted title holding >": "<span title='a>b'>{}</span>",
    "data attribute holding <>": '<i data-x="<>">{}</i>',
    "spaced = before the quote": '<b class = "x>y">{}</b>',
}


@pytest.mark.parametrize("form", list(QUOTED))
def test_a_key_split_by_a_tag_whose_quoted_attribute_holds_a_closing_bracket_is_found(
        tmp_path: Path, form: str) -> None:
    split = KEY[:9] + QUOTED[form].format(KEY[9:13]) + KEY[13:]
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(_notebook(f"See {split} here.", f"<p>{split}</p>")), encoding="utf-8")
    found = scan(path, redact=POLICY)
    assert {(f.cell, f.where) for f in found} == {(0, "source"), (1, "data[text/html]")}
    scrub(path, redact=POLICY)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert KEY[13:] not in json.dumps(saved) and scan(path, redact=POLICY) == []
    nbformat.validate(nbformat.reads(json.dumps(saved), 4))


LINKS = {
    "inline link around the start": "[" + KEY[:9] + "](https://example.com/a)" + KEY[9:],
    "inline link in the middle": KEY[:9] + "[" + KEY[9:13] + "](https://x)" + KEY[13:],
    "reference link": "[" + KEY[:9] + "][ref]" + KEY[9:] + "\n\n[ref]: https://example.com",
    "image link's brackets": KEY[:9] + "![" + KEY[9:13] + "](x.png)" + KEY[13:],
}


@pytest.mark.parametrize("form", list(LINKS))
def test_a_key_split_by_a_markdown_link_is_found_in_markdown_and_left_in_html(tmp_path: Path, form: str) -> None:
    """Markdown draws a link's text in line with the text around it; HTML shows the brackets as typed."""
    written = LINKS[form]
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(_notebook(written, written)), encoding="utf-8")
    assert [(f.cell, f.where) for f in scan(path, redact=POLICY)] == [(0, "source")]
    scrub(path, redact=POLICY)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert KEY[13:] not in saved["cells"][0]["source"] and scan(path, redact=POLICY) == []
    nbformat.validate(nbformat.reads(json.dumps(saved), 4))


HOSTILE_MARKUP = {
    "tags whose quote swallows the last >": "<a " * 13_000 + 'x=">"',
    "open quotes, one > at the end": '<a x="' * 13_000 + ">",
    "quoted > in every tag": '<b title="x>y">a</b>' * 4_000,
    "link openings": "a](" * 20_000,
    "reference openings": "a][" * 20_000,
    "brackets": "a[" * 20_000,
}


def test_quoted_attributes_and_links_are_read_in_one_pass(tmp_path: Path) -> None:
    """Each text above, in a markdown cell and as HTML and markdown outputs, four times over: scan and scrub end
    well within the deadline (a quadratic reading takes minutes on the first one)."""
    cells = []
    for text in HOSTILE_MARKUP.values():
        text *= 4
        cells += [nbformat.v4.new_markdown_cell(text), nbformat.v4.new_code_cell("x", outputs=[
            nbformat.v4.new_output("display_data", data={"text/html": text, "text/markdown": text})])]
    path = tmp_path / "hostile.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    script = textwrap.dedent(f"""
        from footprint_lab import Redaction
        from footprint_lab.notebook import scan, scrub
        print(len(scan({str(path)!r}, redact=Redaction.standard())))
        scrub({str(path)!r}, redact=Redaction.standard())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "0", done.stderr


# -- providers: nesting inside a tool call's arguments --------------------------------------------------------
def _sse(event: dict[str, Any], name: str | None = None) -> str:
    return (f"event: {name}\n" if name else "") + f"data: {json.dumps(event)}\n\n"


def _deep_arguments(kind: str, deep: str, stream: bool) -> Any:
    from wire_server import Reply, fixture_json, fixture_text, sse_events

    if kind == "openai" and not stream:
        body = fixture_json("openai_tool_call.json")
        body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = deep
        return Reply(body=body)
    if kind == "openai":
        call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "add", "arguments": ""}}
        return Reply(chunks=[
            _sse({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}}]}),
            _sse({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": deep}}]}}]}),
            _sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}), "data: [DONE]\n\n"],
            content_type="text/event-stream")
    if kind == "anthropic":
        events = sse_events(fixture_text("anthropic_stream_tools.sse"))
        first = next(n for n, event in enumerate(events) if "input_json_delta" in event and '\\"a\\"' in event)
        event = json.loads(events[first].split("data: ", 1)[1])
        event["delta"]["partial_json"] = deep
        events[first] = _sse(event, "content_block_delta")
        events[first + 1] = _sse({**copy.deepcopy(event), "delta": {"type": "input_json_delta", "partial_json": ""}},
                                 "content_block_delta")
        return Reply(chunks=events, content_type="text/event-stream")
    body = fixture_json("ollama_tool_call.json")
    body["message"]["tool_calls"][0]["function"]["arguments"] = deep
    return Reply(body=body)


@pytest.mark.parametrize("depth", [150, 200_000])
@pytest.mark.parametrize(("kind", "stream"), [("openai", False), ("openai", True), ("anthropic", True),
                                              ("ollama", False)])
async def test_tool_call_arguments_nested_too_deep_are_a_provider_failure(kind: str, stream: bool, depth: int) -> None:
    from provider_cases import FACTORIES, MODELS, SECRET, make_request
    from wire_server import WireServer

    deep = "{\"a\": " + "[" * depth + "]" * depth + "}"
    server = WireServer()
    server.fallback = _deep_arguments(kind, deep, stream)
    settings: dict[str, Any] = {"base_url": server.url, "stream": stream, "max_retries": 0, "timeout": 5.0}
    if kind != "ollama":
        settings["api_key"] = SECRET
    provider = FACTORIES[kind](MODELS[kind], **settings)
    try:
        with pytest.raises(ProviderResponseError) as failed:
            await provider.complete(make_request())
    finally:
        await provider.aclose()
        server.close()
    assert "nests deeper than 100 levels" in str(failed.value) and "[[[" not in str(failed.value)


# -- forged displays: a claim a reader sees whole -----------------------------------------------------------
SPLIT_CLAIMS = {
    "zero-width space": "se\u200baled · verified",
    "soft hyphen": "sealed · veri\u00adfied",
    "&shy; entity": "seal&shy;ed &middot; verified",
    "comment": "sea<!-- -->led · verified",
    "inline tag": "<b>sea</b>led · <i>veri</i>fied",
}


def _forged(tmp_path: Path, claim: str) -> Path:
    """A sealed run's display, DECLINED made APPROVED, its recording, metadata and badge attribute removed, and
    the badge's words written ``claim``."""
    from notebook_kit import displayed

    from footprint_lab import Agent
    from footprint_lab.providers import mock
    from footprint_lab.record.recording import RECORDING_MIME

    run = Agent(provider=mock(reply="Refund 42 DECLINED."), seal=True).run_sync("Refund order 42?")
    output = json.loads(json.dumps(displayed(run)))
    html = output["data"]["text/html"]
    html = "".join(html) if isinstance(html, list) else html
    assert "sealed · verified" in html
    output["data"]["text/html"] = (html.replace("DECLINED", "APPROVED").replace("data-fl-seal=", "data-x=")
                                   .replace("sealed · verified", claim))
    output["data"]["text/plain"] = "Refund 42 APPROVED."
    output["data"].pop(RECORDING_MIME)
    output["metadata"] = {}
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("run", outputs=[nbformat.from_dict(output)])])
    path = tmp_path / "forged.ipynb"
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    return path


@pytest.mark.parametrize("split", list(SPLIT_CLAIMS))
def test_a_seal_claim_split_where_a_reader_sees_it_whole_is_broken(tmp_path: Path, split: str) -> None:
    from test_cli_exit_codes import ENV, SCRIPT

    from footprint_lab.notebook import verify_file

    path = _forged(tmp_path, SPLIT_CLAIMS[split])
    ((where, verdict),) = verify_file(path)
    assert (where, verdict.status, verdict.kind, verdict.field) == ("cell 0, output 0", "broken", "display",
                                                                    "text/html")
    done = subprocess.run([str(SCRIPT), "verify", "--require-seal", str(path)], capture_output=True, text=True,
                          env=ENV, timeout=120, check=False)
    assert done.returncode == 1 and "seal broken at display.text/html" in done.stdout, (done.stdout, done.stderr)


def test_the_seal_claim_is_read_in_one_pass(tmp_path: Path) -> None:
    """A megabyte of "<" in an output: verify ends well within the deadline (it took about 11 minutes)."""
    from test_cli_exit_codes import ENV, SCRIPT

    text = "<" * (1 << 20)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=[
        nbformat.v4.new_output("display_data", data={"text/html": text, "text/plain": text})])])
    path = tmp_path / "brackets.ipynb"
    nbformat.write(nb, path)
    done = subprocess.run([str(SCRIPT), "verify", str(path)], capture_output=True, text=True, env=ENV, timeout=60,
                          check=False)
    assert done.returncode == 0, (done.stdout, done.stderr)
