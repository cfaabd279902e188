"""``scan`` and ``scrub`` reach every corner of a notebook (issue 27).

A notebook written with nbformat is seeded with pattern secrets and key-covered values in every
place a notebook can hold text: notebook, cell and output metadata, markdown and raw cell
attachments, sources, stream and error outputs (ANSI codes inside), every MIME type (custom
JSON nested, JSON text, HTML with entities and comments splitting a secret, base64 words and
``data:`` URLs), PNG images (``tEXt``, ``zTXt`` and compressed ``iTXt`` chunks), saved widget
state (traits under secret keys, widget buffers) and a real run's display. ``scan`` must find
each one where it was planted, without quoting it; after ``scrub`` neither the secret's text nor
its base64 is anywhere in the file's bytes, nor in anything a base64 blob of it decodes to, and
``scan`` is clean. The console script is driven as a subprocess.

Reaches notebook._png_text for PNG_SIGNATURE, the bytes the scrubber reads a PNG by, which have no public name.
"""

from __future__ import annotations

import base64
import json
import subprocess
import zlib
from pathlib import Path
from typing import Any

import nbformat
import pytest
from notebook_kit import PASSWORD, displayed, leaky_run
from test_cli_exit_codes import ENV, SCRIPT

from footprint_lab import Agent, Redaction, define_tool
from footprint_lab.notebook import export, load_runs, scan, scrub
from footprint_lab.notebook._png_text import PNG_SIGNATURE
from footprint_lab.notebook.read import WIDGET_STATE_MIME
from footprint_lab.providers import mock
from footprint_lab.redact.base64_words import as_text, decoded

POLICY = Redaction.standard()
CUSTOM = "application/x-custom+json"


def key(n: int) -> str:
    """The ``n``-th planted OpenAI-style key: each place gets its own, so each finding is one plant."""
    return f"sk-planted{n:02d}" + "".join("abcdefghijklmnopqrstuvwxyz"[(n * 7 + k) % 26] for k in range(24))


#: values under keys the standard policy covers (password, api_key, token, client_secret, cookie)
KEYED = {"password": "correct-horse-battery-7", "api_key": "k3y-under-a-covered-name",
         "token": "tkn-9f8e7d6c5b4a", "client_secret": "clsec-0011-2233", "cookie": "session=abc123def456"}
OTHER_PATTERNS = {"github": "ghp_" + "A1b2C3d4E5" * 4, "aws": "AKIAIOSFODNN7PLANTED", "email": "dana.reyes@example.com"}


def b64(text: str | bytes) -> str:
    return base64.b64encode(text.encode() if isinstance(text, str) else text).decode()


def png(*chunks: tuple[bytes, bytes]) -> bytes:
    """A 1x1 PNG with the given extra chunks (kind, body) before its pixels."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")
    header = chunk(b"IHDR", (1).to_bytes(4, "big") * 2 + bytes([8, 0, 0, 0, 0]))
    pixels = chunk(b"IDAT", zlib.compress(b"\x00\x00"))
    return PNG_SIGNATURE + header + b"".join(chunk(k, b) for k, b in chunks) + pixels + chunk(b"IEND", b"")


def png_chunks(raw: bytes) -> list[tuple[bytes, bytes]]:
    """The chunks of a PNG, each checked against its CRC (a scrubbed image must still be a valid one)."""
    assert raw.startswith(PNG_SIGNATURE)
    at, found = len(PNG_SIGNATURE), []
    while at < len(raw):
        size = int.from_bytes(raw[at:at + 4], "big")
        kind, body = raw[at + 4:at + 8], raw[at + 8:at + 8 + size]
        assert zlib.crc32(kind + body).to_bytes(4, "big") == raw[at + 8 + size:at + 12 + size]
        found.append((kind, body))
        at += 12 + size
    assert found[0][0] == b"IHDR" and found[-1][0] == b"IEND"
    return found


def base64_forms(secret: str) -> list[str]:
    """The base64 text a secret takes inside any encoded payload, at each of the three byte alignments."""
    forms = []
    for shift in range(3):
        text = b64(b"\0" * shift + secret.encode())
        forms.append(text[4 if shift else 0:-4])
    return forms


def seeded(path: Path) -> tuple[Path, dict[tuple[int | None, int | None, str], list[str]]]:
    """The seeded notebook, and per place (cell, output, where) the secrets planted there."""
    planted: dict[tuple[int | None, int | None, str], list[str]] = {}

    def plant(place: tuple[int | None, int | None, str], secret: str) -> str:
        planted.setdefault(place, []).append(secret)
        return secret

    md_meta = (None, None, "metadata")
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": f"py {plant(md_meta, key(0))}"}
    nb.metadata["custom"] = {"deep": {"list": ["fine", {"note": f"see {plant(md_meta, key(1))}"}]},
                             "token": plant(md_meta, KEYED["token"])}
    cells = []
    # 0: markdown with metadata, an entity-spelled key, a plain one, a text attachment and a PNG attachment
    entity = key(2).replace("s", "&#115;", 1).replace("-", "&#x2d;", 1)
    plant((0, None, "source"), key(2))
    plant((0, None, "source"), key(3))
    md = nbformat.v4.new_markdown_cell(f"Keys: {entity} and {key(3)}\n\n![shot](attachment:shot.png)")
    md.metadata["reviewer"] = {"memo": plant((0, None, "cell metadata"), key(4))}
    md.attachments = {
        "notes.txt": {"text/plain": b64(plant((0, None, "attachments"), key(5)) + "\nrotate it\n")},
        "shot.png": {"image/png": b64(png((b"tEXt", b"Comment\0" + plant((0, None, "attachments"), key(6)).encode())))},
    }
    cells.append(md)
    # 1: raw cell with a source and an attachment
    raw = nbformat.v4.new_raw_cell(f"raw {plant((1, None, 'source'), OTHER_PATTERNS['github'])}")
    raw.attachments = {"cfg.json": {"application/json": b64(json.dumps(
        {"aws": plant((1, None, "attachments"), OTHER_PATTERNS["aws"])}))}}
    cells.append(raw)
    # 2: a code cell: source, metadata, stream with ANSI, error with ANSI, outputs of every kind
    code = nbformat.v4.new_code_cell(f"client = connect('{plant((2, None, 'source'), key(7))}')")
    code.metadata["api_key"] = plant((2, None, "cell metadata"), KEYED["api_key"])
    split_ansi = key(8)[:6] + "\x1b[1;31m" + key(8)[6:]
    plant((2, 0, "text"), key(8))
    error_key = key(9)[:10] + "\x1b[0m" + key(9)[10:]
    plant((2, 1, "error"), key(9))
    plant((2, 1, "error"), key(10))
    commented = key(11)[:8] + "<!-- split -->" + key(11)[8:]
    plant((2, 2, "data[text/html]"), key(11))
    plant((2, 2, "data[text/html]"), key(12))
    plant((2, 2, "data[text/html]"), OTHER_PATTERNS["email"])
    plant((2, 2, "data[text/html]"), key(13))
    html = (f"<p>{commented}</p><p>&lt;b&gt;{key(12).replace('k', '&#107;')}&lt;/b&gt;</p>"
            f"<p>mail dana.reyes&#64;example.com</p><img src=\"data:text/plain;base64,{b64(key(13))}\">")
    plant((2, 2, f"data[{CUSTOM}]"), key(14))
    plant((2, 2, f"data[{CUSTOM}]"), KEYED["client_secret"])
    plant((2, 2, "data[text/x-config]"), key(15))
    plant((2, 2, "data[text/markdown]"), key(16))
    plant((2, 2, "output metadata"), key(17))
    plant((2, 2, "output metadata"), KEYED["password"])
    plant((2, 3, "data[image/png]"), key(18))
    plant((2, 3, "data[image/png]"), key(19))
    plant((2, 3, "data[image/png]"), key(20))
    itxt = b"Note\0\1\0en\0" + key(19).encode() + b"\0" + zlib.compress(f"body {key(20)}".encode())
    image = png((b"tEXt", f"Author\0{key(18)}".encode()), (b"iTXt", itxt))
    ztxt = png((b"zTXt", b"Notes\0\0" + zlib.compress(f"z {key(21)}".encode())))
    plant((2, 4, "data[image/png]"), key(21))
    code.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text=[f"token is {split_ansi}\n", "done\n"]),
        nbformat.v4.new_output("error", ename="KeyError", evalue=f"bad {key(10)}",
                               traceback=[f"\x1b[0;31mKeyError\x1b[0m: {error_key}"]),
        nbformat.v4.new_output("display_data", data={
            "text/html": html,
            CUSTOM: {"outer": {"inner": [1, {"why": f"leak {key(14)}"}]}, "client_secret": KEYED["client_secret"]},
            "text/x-config": json.dumps({"nested": json.dumps({"k": key(15)})}),
            "text/markdown": f"pasted {b64(key(16))} here",
            "text/plain": "a display",
        }, metadata={"note": key(17), "password": KEYED["password"]}),
        nbformat.v4.new_output("display_data", data={"image/png": b64(image), "text/plain": "<image>"}),
        nbformat.v4.new_output("display_data", data={"image/png": b64(ztxt), "text/plain": "<image>"}),
    ]
    cells.append(code)
    # 3: a real run's display (its recording, views and text)
    run_cell = nbformat.v4.new_code_cell("run")
    run_cell.outputs = [displayed(leaky_run())]
    cells.append(run_cell)
    # 4: a markdown cell that repeats a value first seen under a covered key
    cells.append(nbformat.v4.new_markdown_cell(f"the pass was {plant((4, None, 'source'), KEYED['password'])}"))
    nb.cells = cells
    # saved widget state: a trait named password, a nested api key, a widget buffer holding text
    buffer = json.dumps({"rows": [f"{key(22)}"]})
    nb.metadata["widgets"] = {WIDGET_STATE_MIME: {"version_major": 2, "version_minor": 0, "state": {
        "w-pass": {"model_name": "PasswordModel", "model_module": "@jupyter-widgets/controls",
                   "model_module_version": "2.0.0", "state": {"password": KEYED["password"],
                                                              "description": f"for {key(23)}"}},
        "w-data": {"model_name": "DataModel", "model_module": "custom", "model_module_version": "1.0.0",
                   "state": {"config": {"auth": {"api_key": KEYED["api_key"], "cookie": KEYED["cookie"]}},
                             "value": f"<b>{key(24)}</b>"},
                   "buffers": [{"path": ["value"], "encoding": "base64", "data": b64(buffer)}]},
    }}}
    for model, secrets in (("w-pass", [KEYED["password"], key(23)]),
                           ("w-data", [KEYED["api_key"], KEYED["cookie"], key(24), key(22)])):
        for secret in secrets:
            plant((None, None, f"widget {model}"), secret)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return path, planted


def every_secret(planted: dict[Any, list[str]]) -> set[str]:
    return {secret for secrets in planted.values() for secret in secrets}


def decoded_texts(value: Any) -> list[str]:
    """Every text a base64 blob anywhere in notebook data decodes to (PNG text chunks included)."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
            stack.extend(k for k in item if isinstance(k, str))
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            words = [item, *item.replace(",", " ").replace('"', " ").split()]
            for word in words:
                raw = decoded(word)
                if raw is None:
                    continue
                if raw.startswith(PNG_SIGNATURE):
                    for kind, body in png_chunks(raw):
                        if kind == b"zTXt":
                            body = zlib.decompress(body.split(b"\0", 1)[1][1:])
                        elif kind == b"iTXt":
                            head, _, rest = body.partition(b"\0")
                            parts = rest[2:].split(b"\0", 2)
                            body = head + parts[1] + (zlib.decompress(parts[2]) if rest[:1] == b"\1" else parts[2])
                        found.append(body.decode("latin-1"))
                else:
                    text = as_text(raw)
                    if text is not None:
                        found.append(text)
                        stack.append(text)
    return found


def test_scan_finds_every_planted_secret_where_it_was(tmp_path: Path) -> None:
    path, planted = seeded(tmp_path / "seeded.ipynb")
    assert len(every_secret(planted)) >= 30  # 25 pattern secrets and 5 key-covered values at least
    found = scan(path, redact=POLICY)
    places = {(f.cell, f.output, f.where) for f in found}
    assert set(planted) <= places, set(planted) - places
    shown = "\n".join(map(str, found))
    for secret in every_secret(planted):
        assert secret not in shown and all(form not in shown for form in base64_forms(secret))
    paths = {(f.cell, f.output, f.where, f.path) for f in found}
    # the field path and the layers read through are named
    assert (None, None, "widget w-pass", "state.password") in paths
    assert (None, None, "widget w-data", "state.config.auth.api_key") in paths
    assert (None, None, "widget w-data", "buffers.0.data.(base64).(JSON text).rows.0") in paths
    assert (0, None, "attachments", "shot.png.image/png.(base64, PNG tEXt chunk 1)") in paths
    assert (2, 3, "data[image/png]", "(base64, PNG iTXt chunk 2)") in paths
    assert (2, 2, f"data[{CUSTOM}]", "outer.inner.1.why") in paths
    assert (2, 2, "data[text/x-config]", "(JSON text).nested.(JSON text).k") in paths
    assert (2, 2, "output metadata", "password") in paths
    assert (2, 2, "data[text/markdown]", "(base64)") in paths
    assert any(f.cell == 3 and f.where == "recording" for f in found)
    assert any(f.cell == 4 and f.matched == ("a value first seen under a covered key",) for f in found)


def test_after_scrub_no_secret_nor_its_base64_is_left_and_scan_is_clean(tmp_path: Path) -> None:
    path, planted = seeded(tmp_path / "seeded.ipynb")
    out = tmp_path / "clean.ipynb"
    masked = scrub(path, redact=POLICY, out=out)
    assert masked == scan(path, redact=POLICY)
    raw = out.read_bytes()
    data = json.loads(raw)
    texts = decoded_texts(data)
    for secret in every_secret(planted):
        assert secret.encode() not in raw, "a planted secret is left in the file"
        assert all(form.encode() not in raw for form in base64_forms(secret))
        assert all(secret not in text for text in texts), "a planted secret is left in a base64 payload"
    assert scan(out, redact=POLICY) == []
    notebook = nbformat.read(out, as_version=4)
    nbformat.validate(notebook)  # still a notebook Jupyter opens
    png_chunks(base64.b64decode(notebook.cells[2].outputs[3].data["image/png"]))  # still a valid image
    assert "[redacted:openai_key]" in notebook.cells[2].outputs[2].data["text/html"]
    assert "&lt;b&gt;" in notebook.cells[2].outputs[2].data["text/html"]  # the markup around a match is kept
    assert notebook.metadata.widgets[WIDGET_STATE_MIME]["state"]["w-pass"]["state"]["password"] == (
        "[redacted:password]")
    (run,) = load_runs(out)  # the recording still loads and explains
    assert run.recording.redaction["scrubbed"] is True and len(run.backtrack()) > 0


@pytest.mark.parametrize("hidden", [
    "sk-&#97;bcdefghijklmnopqrstuvwxyz",  # a decimal entity
    "&#x73;k-abcdefghijklmnopqrstuvwxyz",  # a hexadecimal one, first
    "sk-abcdefghij<!-- -->klmnopqrstuvwxyz",  # a comment inside
    "sk-abcdefghij<!--x-->klmnop<!---->qrstuvwxyz",  # two
    "sk&#45;abcdefghijklmnopqrstuvwxyz",  # the dash as an entity
    "sk-abcdefghijklm\x1b[0;32mnopqrstuvwxyz",  # an ANSI colour
    "sk-abc\x1b]8;;http://x\x07defghijklmnopqrstuvwxyz",  # an ANSI hyperlink
    "sk-abcdefghij&#00000107;lmnopqrstuvwxyz",  # a decimal entity with leading zeros, as browsers read it
    "sk-abcdefghij&#x000006b;lmnopqrstuvwxyz",  # a hexadecimal one
    "sk-abcdefghij<!-->klmnopqrstuvwxyz",  # an empty comment closed at once: the text after it is shown
    "sk-abcdefghij<!--->klmnopqrstuvwxyz",  # the same, one dash more
    "sk-abcdefghij<!-- x --!>klmnopqrstuvwxyz",  # a comment ended by "--!>"
    "sk-abcdefghij<!x>klmnopqrstuvwxyz",  # a bogus comment, as "<!" reads without "--"
    "sk-abcdefghij&#" + "0" * 5000 + "107;lmnopqrstuvwxyz",  # more leading zeros than int() reads at once
])
def test_hidden_spellings_are_read_as_a_reader_sees_them_and_masked_whole(tmp_path: Path, hidden: str) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"<p>before {hidden} after</p>")])
    path = tmp_path / "h.ipynb"
    nbformat.write(nb, path)
    (finding,) = scan(path, redact=POLICY)
    assert finding.matched == ("pattern:openai_key",) and finding.where == "source"
    scrub(path, redact=POLICY)
    source = nbformat.read(path, as_version=4).cells[0].source
    assert source == "<p>before [redacted:openai_key] after</p>"
    assert scan(path, redact=POLICY) == []


def test_the_console_script_scans_and_scrubs_the_seeded_notebook(tmp_path: Path) -> None:
    path, planted = seeded(tmp_path / "seeded.ipynb")

    def run(*args: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=ENV, timeout=300,
                              check=False)

    before = run("scan", path)
    assert before.returncode == 1 and before.stderr == ""
    assert "widget w-pass at state.password: key:password" in before.stdout
    assert "cell 2, output 3, data[image/png] at (base64, PNG tEXt chunk 1)" in before.stdout
    for secret in every_secret(planted):
        assert secret not in before.stdout
    assert run("scrub", path).returncode == 0
    after = run("scan", path)
    assert after.returncode == 0, after.stdout
    assert all(secret.encode() not in path.read_bytes() for secret in every_secret(planted))


def test_a_key_only_a_recordings_base64_holds_is_found_and_scrubbed(tmp_path: Path) -> None:
    # nothing in the recording matches as it stands: the key is inside a base64 blob of a tool result
    blob = b64(f"OPENAI_API_KEY={key(7)}\nregion=eu")
    agent = Agent(provider=mock(replies=[{"tool": "config", "args": {}}, "Loaded."]),
                  tools=[define_tool(name="config", description="Read the config.", fn=lambda: {"env": blob})])
    path = export([agent.run_sync("Load the config.")], tmp_path / "config.ipynb", title="config")
    found = scan(path, redact=POLICY)
    assert any(f.where == "recording" and "pattern:openai_key" in f.matched for f in found)
    out = tmp_path / "clean.ipynb"
    scrub(path, redact=POLICY, out=out)
    raw = out.read_bytes()
    assert blob.encode() not in raw and key(7).encode() not in raw
    assert all(key(7) not in text for text in decoded_texts(json.loads(raw)))
    (run,) = load_runs(out)  # masked in its encoding and still a recording
    assert b64("OPENAI_API_KEY=[redacted:openai_key]\nregion=eu") in run.recording.model_dump_json()


def written(tmp_path: Path, *cells: Any) -> Path:
    notebook = nbformat.v4.new_notebook(cells=list(cells))
    nbformat.validate(notebook)
    path = tmp_path / "n.ipynb"
    nbformat.write(notebook, path)
    return path


def test_an_attachment_stored_as_lines_is_read_joined(tmp_path: Path) -> None:
    # nbformat lets an attachment's base64 be a list of lines, as an output's data: each is read joined
    image = b64(png((b"tEXt", b"Comment\0" + key(40).encode())))
    text = b64(f"config: {key(41)}\n")
    lines = lambda blob: [blob[at:at + 76] + "\n" for at in range(0, len(blob), 76)]  # noqa: E731
    cell = nbformat.v4.new_markdown_cell("![shot](attachment:shot.png)", attachments={
        "shot.png": {"image/png": lines(image)}, "notes.txt": {"text/plain": lines(text)}})
    path = written(tmp_path, cell)
    found = scan(path, redact=POLICY)
    assert {f.path for f in found} == {"shot.png.image/png.(base64, PNG tEXt chunk 1)", "notes.txt.text/plain.(base64)"}
    scrub(path, redact=POLICY)
    raw = path.read_bytes()
    assert all(key(n) not in text for text in decoded_texts(json.loads(raw)) for n in (40, 41))
    assert scan(path, redact=POLICY) == []


@pytest.mark.parametrize("line", ["export CONFIG={}", "GET /hook?auth={} HTTP/1.1", "token:{}"])
def test_base64_right_after_an_equals_sign_or_a_colon_is_read(tmp_path: Path, line: str) -> None:
    blob = b64(f"OPENAI_API_KEY={key(42)}")
    path = written(tmp_path, nbformat.v4.new_code_cell("env", outputs=[
        nbformat.v4.new_output("stream", name="stdout", text=line.format(blob) + "\n")]))
    (finding,) = scan(path, redact=POLICY)
    assert finding.matched == ("pattern:openai_key",) and finding.path == "(base64)"
    scrub(path, redact=POLICY)
    assert blob.encode() not in path.read_bytes() and scan(path, redact=POLICY) == []


@pytest.mark.parametrize("secret", ["hunter22", "hunter22abcd", "hunter22abcde"])
def test_a_learned_value_is_masked_in_its_own_base64_padded_or_not(tmp_path: Path, secret: str) -> None:
    # learned under "password": the base64 of "hunter22" (12 characters) is too short to be read as a word,
    # that of "hunter22abcde" without its padding (18) no multiple of 4; a rescan finds nothing (a mask
    # written under a covered key is no value to learn, even where its base64 stands)
    path = written(tmp_path, nbformat.v4.new_code_cell("log", outputs=[
        nbformat.v4.new_output("stream", name="stdout", text=f"stored: {b64(secret)} and {b64(secret).rstrip('=')}\n"),
        nbformat.v4.new_output("display_data", data={"application/json": {"password": secret}})]))
    assert {(f.output, f.where) for f in scan(path, redact=POLICY)} == {(0, "text"), (1, "data[application/json]")}
    scrub(path, redact=POLICY)
    raw = path.read_bytes()
    assert b64(secret).rstrip("=").encode() not in raw and secret.encode() not in raw
    assert scan(path, redact=POLICY) == []


def test_a_recording_carried_as_json_text_teaches_its_covered_values(tmp_path: Path) -> None:
    # a widget trait holding a run's recording as JSON text: its password is learned in the first pass, so a
    # copy printed in an earlier cell is masked too; text that only looks like a recording stays text
    run = leaky_run()
    text = run.recording.model_dump_json()
    lookalike = json.dumps({"run_id": "r", "schema_version": 3, "password": "Tr0ub4dor-xyz"})
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print", outputs=[
        nbformat.v4.new_output("stream", name="stdout", text=f"temp password was {PASSWORD} / Tr0ub4dor-xyz\n"),
        nbformat.v4.new_output("display_data", data={"text/plain": lookalike})])])
    notebook.metadata["widgets"] = {WIDGET_STATE_MIME: {"version_major": 2, "version_minor": 0, "state": {
        "m1": {"model_name": "X", "model_module": "x", "model_module_version": "1", "state": {"value": text}}}}}
    path = tmp_path / "n.ipynb"
    nbformat.write(notebook, path)
    assert any(f.cell == 0 and f.output == 0 for f in scan(path, redact=POLICY))
    scrub(path, redact=POLICY)
    data = json.loads(path.read_text())
    assert PASSWORD not in path.read_text() and "Tr0ub4dor-xyz" not in path.read_text()
    shown = data["cells"][0]["outputs"][1]["data"]["text/plain"]
    assert isinstance(shown, str) and json.loads(shown)["password"] == "[redacted:password]"
    trait = data["metadata"]["widgets"][WIDGET_STATE_MIME]["state"]["m1"]["state"]["value"]
    assert isinstance(trait, str) and json.loads(trait)["run_id"] == run.run_id  # still a recording's text


def test_a_learned_value_whose_base64_spells_a_plain_word_leaves_that_word_alone(tmp_path: Path) -> None:
    secret = "DEDE!"  # its base64 is "REVERSE=": ordinary text must not be masked for it
    assert b64(secret) == "REVERSE="
    path = written(tmp_path, nbformat.v4.new_markdown_cell("Call REVERSE on the list."),
                   nbformat.v4.new_code_cell("config", outputs=[
                       nbformat.v4.new_output("display_data", data={"application/json": {"password": secret}})]))
    scrub(path, redact=POLICY)
    assert nbformat.read(path, as_version=4).cells[0].source == "Call REVERSE on the list."


def test_an_unclosed_bang_or_question_mark_hides_nothing_after_it(tmp_path: Path) -> None:
    # text that is no HTML (a regular expression, PHP) holds "<!" and "<?" with no ">" after them: what
    # follows is still read, so a key split by an entity there is found
    path = written(tmp_path, nbformat.v4.new_code_cell("grep", outputs=[nbformat.v4.new_output(
        "stream", name="stdout", text="re (?<!x) <?= then sk-&#97;bcdefghijklmnopqrstuvwxyz\n")]))
    (finding,) = scan(path, redact=POLICY)
    assert finding.matched == ("pattern:openai_key",)
    scrub(path, redact=POLICY)
    assert nbformat.read(path, as_version=4).cells[0].outputs[0].text == "re (?<!x) <?= then [redacted:openai_key]\n"


def test_a_covered_key_in_a_tool_schema_leaves_every_run_in_the_notebook_loadable_and_sealed(tmp_path: Path) -> None:
    """A policy's key names a tool's argument, so the tool's schema for it (``{"type": "string"}``) is masked and
    its words learned, ``type`` among them: a later output's recording is masked in record form, and where
    masking a key that is a field's name would break it, its keys are kept and only values are masked. No
    table loses a column, every value under the covered key is masked (an id too short to be hunted for as
    text too), and every run still loads and holds its seal."""
    from footprint_lab.notebook import verify_file

    lookup = define_tool(name="lookup", description="Look an order up.",
                         input_schema={"type": "object", "properties": {"order": {"type": "string"}}},
                         fn=lambda order: "shipped")
    runs = [Agent(provider=mock(replies=[{"tool": "lookup", "args": {"order": order}}, "Shipped."]), tools=[lookup],
                  seal=True).run_sync(f"Where is {order}?") for order in ("A-1", "B-2")]
    path = tmp_path / "orders.ipynb"
    export(runs, path, title="orders")
    scrub(path, redact=Redaction(keys=["order"]))
    assert [verdict.holds for _, verdict in verify_file(path)] == [True, True]
    loaded = load_runs(path)
    assert len(loaded) == 2
    for run, order in zip(loaded, ("A-1", "B-2"), strict=True):
        saved = run.recording.model_dump_json()
        assert f'"order":"{order}"' not in saved and "[redacted:order]" in saved


def test_a_learned_value_that_is_a_key_in_a_later_runs_data_is_masked_while_its_fields_keep_their_names(
        tmp_path: Path) -> None:
    """The second recording must keep its field names (``type``, learned from the masked schema), yet a learned
    order id that is a mapping key inside its tool's arguments is masked like any other place it shows up."""
    from footprint_lab.notebook import verify_file

    lookup = define_tool(name="lookup", description="Look an order up.",
                         input_schema={"type": "object", "properties": {"order": {"type": "string"},
                                                                        "history": {"type": "object"}}},
                         fn=lambda order, history: "shipped")
    replies = ([{"tool": "lookup", "args": {"order": "ORD-1111", "history": {}}}, "Shipped."],
               [{"tool": "lookup", "args": {"order": "ORD-2222", "history": {"ORD-1111": "delivered"}}}, "Shipped."])
    runs = [Agent(provider=mock(replies=script), tools=[lookup], seal=True).run_sync("Where is my order?")
            for script in replies]
    path = tmp_path / "orders.ipynb"
    export(runs, path, title="orders")
    scrub(path, redact=Redaction(keys=["order"]))
    assert "ORD-1111" not in path.read_text() and "ORD-2222" not in path.read_text()
    assert [verdict.holds for _, verdict in verify_file(path)] == [True, True]
    assert len(load_runs(path)) == 2


def test_a_covered_key_named_value_leaves_a_run_with_tool_calls_loadable(tmp_path: Path) -> None:
    """``value`` is also a commit entry's field, which in a saved recording refers to a transcript message by its
    index: the scrub masks the records as written, so no message's words are learned and the run still loads."""
    from footprint_lab.notebook import verify_file

    lookup = define_tool(name="lookup", description="Look an order up.",
                         input_schema={"type": "object", "properties": {"order": {"type": "string"}}},
                         fn=lambda order: {"order": order, "value": "PRICE-9041"})
    run = Agent(provider=mock(replies=[{"tool": "lookup", "args": {"order": "A-1"}}, "Shipped."]), tools=[lookup],
                seal=True).run_sync("Where is A-1?")
    path = tmp_path / "orders.ipynb"
    export([run], path, title="orders")
    scrub(path, redact=Redaction(keys=["value"]))
    assert "PRICE-9041" not in path.read_text()
    assert [verdict.holds for _, verdict in verify_file(path)] == [True]
    assert len(load_runs(path)) == 1


def test_a_number_or_a_nested_value_under_a_covered_key_is_masked_wherever_else_it_shows(tmp_path: Path) -> None:
    """The pass that learns covered values before masking learns numbers and nested values too: the amount a
    tool was called with, repeated in the answer (masked before the arguments are reached), is masked there."""
    pay = define_tool(name="pay", description="Pay an amount to a card holder.",
                      input_schema={"type": "object", "properties": {"amount": {"type": "integer"},
                                                                     "card": {"type": "object"}}},
                      fn=lambda amount, card: "ok")
    run = Agent(provider=mock(replies=[{"tool": "pay", "args": {"amount": 48151623,
                                                                "card": {"holder": "Zelda Quill"}}},
                                       "Charged 48151623 to Zelda Quill."]),
                tools=[pay], seal=True).run_sync("Pay it")
    path = tmp_path / "paid.ipynb"
    export([run], path, title="paid")
    policy = Redaction(keys=["amount", "card"])
    scrub(path, redact=policy)
    text = path.read_text()
    assert "48151623" not in text and "Zelda Quill" not in text
    assert scan(path, redact=policy) == []
    assert len(load_runs(path)) == 1
