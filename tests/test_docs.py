"""The user-facing documentation runs as written.

Every ```python block of README.md and docs/*.md is executed, in document order, with one
namespace per document (a later block may use what an earlier one defined) and top-level
``await`` allowed, on the embedded mock provider with every provider environment variable unset.
A doc that drifts from the code therefore fails here.

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
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

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
            raise AssertionError(f"{path.name}:{index + 1}: a code fence is never closed")
        if opening["lang"] == "python":
            body = [line[len(indent):] if line.startswith(indent) else line for line in lines[index + 1:end]]
            marker = _MARKER.match(lines[index - 1]) if index else None
            skip = refuses = None
            if marker and marker["verb"] == "skip":
                skip = marker["rest"].strip()
                assert skip.startswith("(") and skip.endswith(")"), f"{path.name}:{index}: a skip gives its reason"
            elif marker:
                refuses = marker["rest"].split("(")[0]
            names = tuple(name.strip() for name in (refuses or "").split(",") if name.strip())
            blocks.append(Block(path.name, index + 1, "\n".join(body) + "\n", skip, names))
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


@pytest.mark.parametrize("path", DOCUMENTS, ids=[path.name for path in DOCUMENTS])
async def test_every_python_block_runs_as_written(path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)   # a block that writes a file (a SQLite store, say) writes it here
    blocks = python_blocks(path)
    assert blocks, f"{path.name} has no python block"
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


@pytest.mark.parametrize("path", DOCUMENTS, ids=[path.name for path in DOCUMENTS])
def test_every_error_and_code_named_in_prose_exists(path: Path) -> None:
    import footprint_lab

    text = path.read_text(encoding="utf-8")
    codes = {getattr(getattr(footprint_lab, name), "code", None) for name in dir(footprint_lab)}
    for name in set(re.findall(r"\b([A-Z]\w*Error)\b", text)):
        assert hasattr(footprint_lab, name), f"{path.name} names {name}, which footprint_lab does not export"
    for code in set(re.findall(r"\b(ERR_[A-Z_]+)\b", text)):
        assert code in codes, f"{path.name} names the code {code}, which no exported error carries"
    for name, code in re.findall(r"^\| `(\w+Error)` \| `(ERR_\w+)` \|", text, re.MULTILINE):
        assert getattr(footprint_lab, name).code == code, f"{path.name}: {name} is documented with {code}"


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
