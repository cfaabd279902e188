"""``scan`` and ``scrub`` read a notebook as its reader sees it, in bounded time, and keep it valid (issue 46).

A key a reader sees whole may be split in the file: by HTML tags (``<b>``, an empty ``<span></span>``,
the ``<em>`` markdown makes of ``_..._``), by characters drawn as nothing (a zero-width space, a soft
hyphen, joiners, written as characters or as entities), or typed backwards after a right-to-left
override. ``scan`` must find each, in markdown cells and in HTML, markdown and SVG outputs; ``scrub``
must mask it whole, keep the tags around and between, and leave no reading of it behind.

A pattern the caller wrote is searched once per text under the time limit; the reading layers of
the notebook (base64, comments, tags) must not add a quadratic pass of their own. What scrub writes
must stay a valid notebook: a secret in a cell id gives a fresh id, never a mask; nbformat's own
words (``output_type``, ``cell_type``, metadata field names, ``scrolled: "auto"``) are never rewritten.
A notebook over the size scan and scrub read is refused by name, before it is read.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import nbformat
import pytest
from test_cli_exit_codes import ENV

from footprint_lab import Redaction
from footprint_lab.notebook import NotebookFileError, cli, scan, scrub
from footprint_lab.notebook.read import MAX_SWEEP_BYTES

POLICY = Redaction.standard()
KEY = "sk-readerview0123456789abcdefghij"
SVG = "image/svg+xml"


def hidden(left: str, right: str) -> dict[str, str]:
    """The key split between ``left`` and ``right`` every way a reader does not see."""
    joined = {
        "bold": "<b>{}</b>", "empty span": "{}<span></span>", "emphasis": "<em>{}</em>",
        "zero-width space": "{}\u200b", "soft hyphen": "{}\u00ad", "zero-width joiner": "{}\u200d",
        "zero-width non-joiner": "{}\u200c", "word joiner": "{}\u2060", "byte order mark": "{}\ufeff",
        "&shy;": "{}&shy;", "&#8203;": "{}&#8203;", "&#x200B;": "{}&#x200B;", "&#0173;": "{}&#0173;",
        "tag and zero-width space": "<i>\u200b</i>{}",
    }
    return {name: left + form.format(right[:3]) + right[3:] for name, form in joined.items()}


SPLIT = hidden(KEY[:9], KEY[9:])
#: typed backwards, drawn forwards: by the override character, by its entity, inside a tag
SPLIT.update({"RLO": "\u202e" + KEY[::-1] + "\u202c", "RLO entity": "&#8238;" + KEY[::-1] + "&#8236;",
              "RLO, tag inside": "\u202e" + KEY[::-1][:6] + "<b></b>" + KEY[::-1][6:] + "\u202c"})


def notebook(**parts: Any) -> dict[str, Any]:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(parts.get("markdown", "intro")),
                nbformat.v4.new_code_cell("print(1)", outputs=[nbformat.v4.new_output(
                    "display_data", data={"text/plain": "shown", **parts.get("data", {})})])]
    return json.loads(nbformat.writes(nb))


def save(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def reader_sees(text: str) -> str:
    """What a browser draws, read here independently of the library: tags and characters drawn as nothing
    removed, entities read, a right-to-left override's run turned round."""
    text = html.unescape(re.sub(r"<[^>]*>", "", text))
    text = re.sub("[\u200b-\u200d\u2060\ufeff\u00ad\u2066\u2069]", "", text)
    return re.sub("\u202e([^\u202c]*)\u202c", lambda found: found.group(1)[::-1], text)


PLACES = {
    "markdown cell": (lambda text: notebook(markdown=f"See {text} here."), lambda nb: nb["cells"][0]["source"],
                      (0, None, "source")),
    "HTML output": (lambda text: notebook(data={"text/html": f"<p>key: {text}</p>"}),
                    lambda nb: nb["cells"][1]["outputs"][0]["data"]["text/html"], (1, 0, "data[text/html]")),
    "markdown output": (lambda text: notebook(data={"text/markdown": f"key: {text}"}),
                        lambda nb: nb["cells"][1]["outputs"][0]["data"]["text/markdown"],
                        (1, 0, "data[text/markdown]")),
    "SVG output": (lambda text: notebook(data={SVG: f"<svg><text>{text}</text></svg>"}),
                   lambda nb: nb["cells"][1]["outputs"][0]["data"][SVG], (1, 0, f"data[{SVG}]")),
}


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("split", list(SPLIT))
def test_a_key_split_where_a_reader_sees_it_whole_is_found_and_masked_whole(
        tmp_path: Path, place: str, split: str) -> None:
    build, text_of, where = PLACES[place]
    written = SPLIT[split]
    assert KEY not in written and KEY in reader_sees(written)  # the plant hides from the text, not from a reader
    path = save(tmp_path / "nb.ipynb", build(written))
    found = scan(path, redact=POLICY)
    assert [(f.cell, f.output, f.where, f.matched) for f in found] == [(*where, ("pattern:openai_key",))]
    assert KEY not in str(found)
    assert scrub(path, redact=POLICY) == found
    masked = text_of(json.loads(path.read_text(encoding="utf-8")))
    assert "[redacted:openai_key]" in masked
    assert KEY not in reader_sees(masked) and KEY[9:20] not in reader_sees(masked) and KEY[::-1][:12] not in masked
    for tag in re.findall(r"<[^>]*>", written):  # every tag of the split kept: the markup stays as it was
        assert tag in masked
    nbformat.validate(nbformat.reads(path.read_text(encoding="utf-8"), 4))
    assert scan(path, redact=POLICY) == []


@pytest.mark.parametrize("password", ["hunter_2x", "p*ssw0rd!", "tl~~dr~~x", "se[cr]et-77", "a`b`cdefg"])
@pytest.mark.parametrize("written", ["escaped", "zero-width space", "entity"])
def test_a_password_with_markdown_marks_in_a_markdown_cell_is_masked(tmp_path: Path, password: str,
                                                                      written: str) -> None:
    """A markdown cell writes a learned password as markdown must (``hunter\\_2x``), or hides it between its
    characters; a reader sees it whole, so scan finds it and scrub masks it (the markdown reading dropped the
    escaped mark and every mark inside a word, and read ``hunter2x``)."""
    escaped = re.sub(r"([*_~`\[\]])", r"\\\1", password)
    shown = {"escaped": escaped, "zero-width space": password[:3] + "\u200b" + password[3:],
             "entity": password[:3] + "&#8203;" + password[3:]}[written]
    data = notebook(markdown=f"The login is {shown} for now.")
    data["metadata"]["connection"] = {"password": password}  # learned under a covered key
    path = save(tmp_path / "nb.ipynb", data)
    policy = Redaction(keys=["password"])
    assert (0, "source") in {(f.cell, f.where) for f in scan(path, redact=policy)}
    scrub(path, redact=policy)
    source = json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"]
    assert "[redacted:password]" in source and password not in reader_sees(source.replace("\\", ""))
    assert scan(path, redact=policy) == []


@pytest.mark.parametrize("split", ["bold", "zero-width space", "&shy;", "RLO"])
def test_a_learned_value_and_a_callers_pattern_are_read_the_same_way(tmp_path: Path, split: str) -> None:
    password = "tangerine-parachute-77"
    planted = hidden(password[:5], password[5:])["bold" if split == "RLO" else split]
    if split == "RLO":
        planted = "\u202e" + password[::-1] + "\u202c"
    data = notebook(markdown=f"pw: {planted}", data={"text/html": f"<i>{planted}</i>"})
    data["metadata"]["connection"] = {"password": password}  # learned under a covered key
    path = save(tmp_path / "nb.ipynb", data)
    policy = Redaction(keys=["password"], patterns={"fruit": r"tangerine-\w+"})
    found = scan(path, redact=policy)
    assert {(f.cell, f.where) for f in found} == {(None, "metadata"), (0, "source"), (1, "data[text/html]")}
    scrub(path, redact=policy)
    saved = path.read_text(encoding="utf-8")
    assert password not in reader_sees(json.loads(saved)["cells"][0]["source"])
    assert scan(path, redact=policy) == []


def test_tags_in_a_code_cell_are_what_its_reader_sees_and_are_left(tmp_path: Path) -> None:
    """Code is shown as typed: ``<b>`` there is text a reader sees, so it splits nothing."""
    data = notebook()
    data["cells"][1]["source"] = f'html = "{SPLIT["bold"]}"'
    path = save(tmp_path / "nb.ipynb", data)
    assert scan(path, redact=POLICY) == []


ADVERSARIAL = {
    "a long run, then no match": "a" * 40_000 + "!",
    "unclosed comments": "<!" * 20_000,
    "unclosed tags": "<a" * 20_000,
    "base64 letters, then not": "QUFB" * 10_000 + "!",
    "overrides, nested": ("\u202e\u202d" * 62 + "a" + "\u202c" * 124) * 160,
}


def test_a_catastrophic_pattern_over_40_kb_is_searched_once_per_text_and_the_text_masked_whole(
        tmp_path: Path) -> None:
    """``(a+)+$`` on 40 kB takes exponential time; each text is searched under the time limit and masked whole
    (fail closed, counted as a match). Run in a subprocess with a generous timeout: the promise is that it ends."""
    cells = []
    for text in ADVERSARIAL.values():
        cell = nbformat.v4.new_code_cell(text, outputs=[
            nbformat.v4.new_output("display_data", data={"text/html": text, "text/markdown": text}),
            nbformat.v4.new_output("stream", name="stdout", text=text)])
        cells += [nbformat.v4.new_markdown_cell(text), cell]
    nb = nbformat.v4.new_notebook(cells=cells)
    path = tmp_path / "adversarial.ipynb"
    nbformat.write(nb, path)
    script = textwrap.dedent(f"""
        from footprint_lab import Redaction
        from footprint_lab.notebook import scan, scrub
        policy = Redaction(patterns={{"evil": r"(a+)+$"}})
        found = scan({str(path)!r}, redact=policy)
        print(len(found), sorted({{f.matched for f in found}}))
        scrub({str(path)!r}, redact=policy)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=ENV, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split(" ", 1)[1].strip() == "[('pattern:evil',)]"
    saved = json.loads(path.read_text(encoding="utf-8"))
    first = saved["cells"][1]  # the text the pattern cannot be done with in time: masked whole everywhere
    assert first["source"] == "[redacted:evil]" and first["outputs"][1]["text"] == "[redacted:evil]"
    assert first["outputs"][0]["data"]["text/html"] == "[redacted:evil]"
    assert first["outputs"][0]["output_type"] == "display_data"  # nbformat's word, though the pattern matches it
    nbformat.validate(nbformat.reads(path.read_text(encoding="utf-8"), 4))


def test_what_scrub_writes_is_a_valid_notebook_wherever_the_secret_sat(tmp_path: Path) -> None:
    """Secrets in a cell id, metadata keys and values, tags, an attachment's name, an execution count,
    and a caller's pattern that matches nbformat's own words: scrub masks the secrets and nbformat validates."""
    password = "424242424242"
    other = KEY.replace("readerview", "secondkey0")
    nb = nbformat.v4.new_notebook(metadata={"connection": {"password": password}, KEY: "a key as a key",
                                            "kernelspec": {"name": "python3", "display_name": "Python 3"}})
    markdown = nbformat.v4.new_markdown_cell(f"![x](attachment:{KEY}.png)", id=KEY[:40])
    markdown.attachments = {f"{KEY}.png": {"image/png": "iVBORw0KGgo="}}
    code = nbformat.v4.new_code_cell("x", id="plain-id", execution_count=int(password), metadata={
        "tags": [KEY, other, "kept"], "scrolled": "auto", "note": {other: KEY}})
    code.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": KEY}, execution_count=int(password)),
                    nbformat.v4.new_output("stream", name="stdout", text="display code markdown auto")]
    nb.cells = [markdown, code, nbformat.v4.new_raw_cell(KEY, id="cell-3")]
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    policy = POLICY.union(Redaction(keys=["password"], patterns={"words": r"display|markdown|code|auto|raw|result"}))
    found = scan(path, redact=policy)
    assert {(f.cell, f.where) for f in found} >= {(0, "id"), (0, "attachments"), (1, "cell metadata"),
                                                  (1, "execution_count")}
    scrub(path, redact=policy)
    saved = path.read_text(encoding="utf-8")
    nbformat.validate(nbformat.reads(saved, 4))
    assert KEY not in saved and KEY[:40] not in saved and other not in saved and password not in saved
    data = json.loads(saved)
    first, second, third = data["cells"]
    assert re.fullmatch(r"[a-z0-9]{8}", first["id"]) and first["id"] not in ("plain-id", "cell-3")
    assert (second["id"], third["id"]) == ("plain-id", "cell-3")
    assert [c["cell_type"] for c in data["cells"]] == ["markdown", "code", "raw"]
    assert [o["output_type"] for o in second["outputs"]] == ["execute_result", "stream"]
    assert second["execution_count"] is None and second["outputs"][0]["execution_count"] is None
    assert second["metadata"]["tags"] == ["[redacted:openai_key]", "kept"] and second["metadata"]["scrolled"] == "auto"
    assert data["metadata"]["kernelspec"] == {"name": "python3", "display_name": "Python 3"}
    assert scan(path, redact=policy) == []


def test_a_notebook_over_the_sweep_size_is_refused_by_name_before_it_is_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "huge.ipynb"
    with path.open("wb") as file:
        file.truncate(MAX_SWEEP_BYTES + 1)  # sparse: its size says it all, nothing of it is read
    for call in (lambda: scan(path, redact=POLICY), lambda: scrub(path, redact=POLICY)):
        with pytest.raises(NotebookFileError) as refused:
            call()
        assert refused.value.reason == "too-large" and "64 MiB" in str(refused.value)
    for command in ("scan", "scrub"):
        assert cli.main([command, str(path)]) == 2
        error = capsys.readouterr().err
        assert "ERR_NOTEBOOK_FILE" in error and "Traceback" not in error and str(tmp_path) in error
    assert path.stat().st_size == MAX_SWEEP_BYTES + 1


def test_running_out_of_memory_is_a_refused_input_not_a_bug(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import footprint_lab.notebook as sharing

    def too_big(path: Any, *, redact: Any, out: Any = None) -> Any:
        raise MemoryError

    path = save(tmp_path / "nb.ipynb", notebook())
    for command in ("scan", "scrub"):
        monkeypatch.setattr(sharing, command, too_big)
        assert cli.main([command, str(path)]) == 2
        error = capsys.readouterr().err
        assert "more memory" in error and "nothing was written" in error and "Traceback" not in error
