"""The user-facing documentation runs as written.

Every ```python block of README.md, CONTRIBUTING.md and every page of the documentation site
(docs/, nested folders included) is executed, in document order, with one namespace per document
(a later block may use what an earlier one defined) and top-level ``await`` allowed, on the
embedded mock provider with every provider environment variable unset. A doc that drifts from the
code therefore fails here. The site itself is built with ``mkdocs build --strict`` (a broken link or
anchor, a nav entry whose page is missing, an API name mkdocstrings cannot find fail it), and its API
reference is held to every public name.

Two HTML comments, on the line right before a fence, change how its block runs; each says why:

- ``<!-- docs-test: skip (reason) -->`` leaves the block out (keep these rare).
- ``<!-- docs-test: refuses Name[, Name] (reason) -->`` runs the block one top-level statement at
  a time and lets a statement fail only with one of the named refusals (looked up in
  ``footprint_lab.errors``), the documented refusal of a real provider with no key or server.
  Any other exception still fails the test.
"""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import footprint_lab.errors

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
DOCUMENTS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(DOCS.rglob("*.md"))]
#: a fence in one of these languages is shown, never run; any other (``py``, ``python3``...) is refused
#: below, so a block meant to run cannot slip past these tests under another name
SHOWN_ONLY = {"bash", "console", "text", "ipython", "yaml", "toml", "json", "ini"}


def _name(path: Path) -> str:
    """A document's path from the repository root: pages in different folders may share a file name."""
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name

_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)\s*$")
_MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<verb>skip|refuses)\b(?P<rest>.*?)-->\s*$")
_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OLLAMA_HOST",
        "OLLAMA_API_KEY", "FOOTPRINT_LIVE_PROVIDER", "FOOTPRINT_LIVE_BASE_URL")


@dataclass(frozen=True)
class Block:
    document: str
    line: int               # 1-based line of the opening fence
    source: str
    skip: str | None        # the reason given, when marked skip
    refuses: tuple[str, ...]  # refusal class names a statement may raise


def python_blocks(path: Path) -> list[Block]:
    """The ```python blocks of one markdown file, dedented, with the marker right before each."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if not opening or not opening["lang"]:
            index += 1
            continue
        indent = opening["indent"]
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if end == len(lines):
            raise AssertionError(f"{_name(path)}:{index + 1}: a code fence is never closed")
        if opening["lang"] == "python":
            body = [line[len(indent):] if line.startswith(indent) else line for line in lines[index + 1:end]]
            marker = _MARKER.match(lines[index - 1]) if index else None
            skip = refuses = None
            if marker and marker["verb"] == "skip":
                skip = marker["rest"].strip()
                assert skip.startswith("(") and skip.endswith(")"), f"{_name(path)}:{index}: a skip gives its reason"
            elif marker:
                refuses = marker["rest"].split("(")[0]
            names = tuple(name.strip() for name in (refuses or "").split(",") if name.strip())
            blocks.append(Block(_name(path), index + 1, "\n".join(body) + "\n", skip, names))
        index = end + 1
    return blocks


async def run_statement(node: ast.stmt, namespace: dict[str, object], filename: str) -> None:
    module = ast.Module(body=[node], type_ignores=[])
    code = compile(module, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(code, namespace)
    if inspect.iscoroutine(result):
        await result


async def run_block(block: Block, namespace: dict[str, object]) -> None:
    filename = f"{block.document}:{block.line}"
    tree = ast.parse(block.source, filename)
    ast.increment_lineno(tree, block.line)   # tracebacks point at the markdown line
    allowed = tuple(getattr(footprint_lab.errors, name) for name in block.refuses)
    refused = 0
    for node in tree.body:
        if not allowed:
            await run_statement(node, namespace, block.document)
            continue
        try:
            await run_statement(node, namespace, block.document)
        except allowed as refusal:
            assert refusal.code and str(refusal), f"{filename}: the refusal names its code and the fix"
            refused += 1
    assert refused or not allowed, f"{filename}: marked as refusing {block.refuses}, but nothing was refused"


RUNNABLE = [path for path in DOCUMENTS if python_blocks(path)]


def test_the_pages_that_teach_by_example_have_examples_to_run() -> None:
    runnable = {_name(path) for path in RUNNABLE}
    teaching = {"README.md", "docs/tutorial.md"} | {_name(path) for path in (DOCS / "how-to").glob("*.md")}
    assert teaching <= runnable, sorted(teaching - runnable)


@pytest.mark.parametrize("path", DOCUMENTS, ids=[_name(path) for path in DOCUMENTS])
def test_every_code_fence_is_run_or_marked_as_shown_only(path: Path) -> None:
    fences = re.findall(r"^[ \t]*```([\w-]*)[ \t]*$", path.read_text(encoding="utf-8"), re.MULTILINE)
    opening = fences[0::2]   # fences alternate: an opening (with its language), then its closing
    assert all(lang == "" for lang in fences[1::2]), f"{_name(path)}: a fence opens inside another"
    stray = sorted(set(opening) - SHOWN_ONLY - {"python"})
    assert not stray, f"{_name(path)}: fences in {stray} neither run here nor say they are shown only"


@pytest.mark.parametrize("path", RUNNABLE, ids=[_name(path) for path in RUNNABLE])
async def test_every_python_block_runs_as_written(path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)   # a block that writes a file (a SQLite store, say) writes it here
    blocks = python_blocks(path)
    namespace: dict[str, object] = {"__name__": f"docs_{path.stem}"}
    for block in blocks:
        if block.skip is None:
            await run_block(block, namespace)


def test_markers_are_rare_and_name_real_refusals() -> None:
    blocks = [block for path in DOCUMENTS for block in python_blocks(path)]
    skipped = [block for block in blocks if block.skip is not None]
    assert len(skipped) <= len(blocks) // 10, [f"{b.document}:{b.line} {b.skip}" for b in skipped]
    for block in blocks:
        for name in block.refuses:
            refusal = getattr(footprint_lab.errors, name, None)
            assert refusal is not None and issubclass(refusal, footprint_lab.errors.Refusal), (
                f"{block.document}:{block.line} names {name}, which is not a refusal in footprint_lab.errors")


def test_python_blocks_are_found_in_list_items_too(tmp_path: Path) -> None:
    document = tmp_path / "doc.md"
    document.write_text("text\n\n- item\n  <!-- docs-test: refuses MissingApiKeyError (no key) -->\n"
                        "  ```python\n  x = 1\n  if x:\n      y = 2\n  ```\n\n```bash\nls\n```\n", encoding="utf-8")
    (block,) = python_blocks(document)
    assert block.source == "x = 1\nif x:\n    y = 2\n"
    assert block.refuses == ("MissingApiKeyError",)
    assert block.line == 5


@pytest.mark.parametrize("path", DOCUMENTS, ids=[_name(path) for path in DOCUMENTS])
def test_every_error_and_code_named_in_prose_exists(path: Path) -> None:
    from footprint_lab import errors

    text = path.read_text(encoding="utf-8")
    codes = {getattr(getattr(errors, name), "code", None) for name in errors.__all__}
    import builtins

    for name in set(re.findall(r"\b([A-Z]\w*Error)\b", text)) - set(dir(builtins)):  # ValueError is Python's
        assert hasattr(errors, name), f"{_name(path)} names {name}, which footprint_lab.errors does not export"
    for code in set(re.findall(r"\b(ERR_[A-Z_]+)\b", text)):
        assert code in codes, f"{_name(path)} names the code {code}, which no exported error carries"
    for name, code in re.findall(r"^\| `(\w+Error)` \| `(ERR_\w+)` \|", text, re.MULTILINE):
        assert getattr(errors, name).code == code, f"{_name(path)}: {name} is documented with {code}"


def test_the_provider_settings_table_matches_the_providers() -> None:
    from footprint_lab.providers import HttpProvider

    text = (ROOT / "docs" / "providers.md").read_text(encoding="utf-8")
    table = text.split("## Settings every real provider takes", 1)[1].split("\n\n", 2)[1]
    rows = re.findall(r"^\| `(\w+)` \| ([^|]+) \|", table, re.MULTILINE)
    parameters = inspect.signature(HttpProvider.__init__).parameters
    documented = {name for name, _ in rows}
    named = {name for name, p in parameters.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}
    assert documented == named - {"self", "model"}  # (**unknown only refuses a keyword that is no setting)
    for name, default in rows:
        literal = re.match(r"`([^`]+)`", default.strip())
        if literal:
            assert parameters[name].default == ast.literal_eval(literal[1]), f"{name} defaults to {default}"


#: the packages whose names the API reference documents (refusals have their own page, from errors.py)
API_MODULES = ("footprint_lab", "footprint_lab.providers", "footprint_lab.context", "footprint_lab.explain",
               "footprint_lab.explain.compare", "footprint_lab.flow", "footprint_lab.batch",
               "footprint_lab.notebook", "footprint_lab.otel")


def _documented_objects() -> dict[int, str]:
    """What each ``::: identifier`` line of the API reference renders, by identity, with the identifier."""
    import importlib

    found: dict[int, str] = {}
    for page in sorted((DOCS / "reference").rglob("*.md")):
        for identifier in re.findall(r"^::: ([\w.]+)\s*$", page.read_text(encoding="utf-8"), re.MULTILINE):
            module, _, name = identifier.rpartition(".")
            try:
                value = getattr(importlib.import_module(module), name)
            except ModuleNotFoundError:
                value = importlib.import_module(identifier)
            found[id(value)] = identifier
    return found


def test_the_api_reference_documents_every_public_class_and_function() -> None:
    import importlib

    documented = _documented_objects()
    refusals = set(footprint_lab.errors.__all__)
    missing = []
    for module in API_MODULES:
        loaded = importlib.import_module(module)
        for name in loaded.__all__:
            value = getattr(loaded, name)
            if name not in refusals and (isinstance(value, type) or callable(value)) and id(value) not in documented:
                missing.append(f"{module}.{name}")
    assert not missing, f"the API reference (docs/reference/api/) leaves out {missing}"


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """``mkdocs build --strict``: every page in the nav exists, every link and anchor between pages resolves,
    every API name renders from its docstring; any warning fails the build."""
    import os
    import subprocess
    import sys

    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                           cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
                           env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert built.returncode == 0, built.stderr[-4000:]
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "images/answer-view.png" in index
    glossary = (tmp_path / "site" / "glossary" / "index.html").read_text(encoding="utf-8")
    assert all(word in glossary for word in ("BORN", "ALLOWED", "LANDED", "READ", "ASKED", "Wiens"))
