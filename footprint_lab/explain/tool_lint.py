"""Tool-catalog lint: find the tools a model will confuse, before it confuses them.

Defect closed: the commonest contextual bug, a model choosing between two tools that read nearly
alike, was found only after it happened (in a recording). :func:`lint_tools` reads a catalog
as-is (footprint_lab tools, OpenAI function definitions, Anthropic tools, an MCP ``tools/list``
result, or plain ``{name, description, inputSchema}`` dicts) and reports, one row per finding:

- ``missing-description`` / ``short-description`` (errors): the model has nothing (or almost
  nothing) to choose by;
- ``enum-in-prose`` (warning): a parameter lists its legal values in its description but has no
  ``enum``; the fix gives the enum to use;
- ``what-not-when`` (warning): the description says what the tool returns but never when to use it;
- ``undocumented-parameter`` (warning): a parameter with no description;
- ``affix-name`` (warning): two names that differ only by a leading or trailing word;
- ``confusable`` (warning): two tools whose name and description are near each other. Lexical by
  default (the words of :func:`footprint_lab.context.similarity.words`, counted, compared by
  cosine); pass ``embed=fn`` (texts to vectors) to compare embeddings instead. Each carries its
  ``score``, the ``threshold`` and the ``margin`` above it.

:func:`twins` gives, for a tool a model chose, the confusable neighbours it was sent beside it
(the answer view says "chose between twins"). Every finding has a suggested ``fix``. The same
catalog in any of the accepted shapes gives the same findings. A catalog that cannot be read is
refused with :class:`ToolCatalogError`, naming the entry by index and saying what arrived by shape only.

Role: explain layer (reads the tools slot; nothing here runs a model). ``lint_tools`` returns a
DataFrame (pandas imported on call); :func:`lint_findings` returns plain rows for the core.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from footprint_lab.context.similarity import words
from footprint_lab.engine.refusal import Refusal, describe_shape

if TYPE_CHECKING:
    import pandas as pd

#: two tools whose lexical (or embedding) similarity reaches this are reported as confusable
THRESHOLD = 0.6
#: a description shorter than this many characters (or three words) is an error
SHORT = 20
COLUMNS = ("severity", "check", "tool", "other", "parameter", "score", "threshold", "margin", "message", "fix")

_WHAT = re.compile(r"^\s*(returns?|gets?|fetch(es)?|retrieves?|lists?|provides?|shows?|reads?|looks? up|finds?|"
                   r"gives?|outputs?|the)\b", re.IGNORECASE)
_WHEN = re.compile(r"\b(use (this|it|when|for|to|if|only|instead)|when|whenever|if|unless|instead|rather than|"
                   r"prefer|avoid|do not|don't|never|only (for|when|if)|before|after|call this|not for)\b",
                   re.IGNORECASE)
_CHOICES = re.compile(r"\b(?:one of|either|must be|can be|may be|possible values?(?: are)?|valid values?(?: are)?|"
                      r"allowed values?(?: are)?|accepted values?(?: are)?|values?:)\s*:?\s*(?P<list>[^.;()]+)",
                      re.IGNORECASE)
_SPLIT = re.compile(r"\s*(?:,\s*(?:or\s+|and\s+)?|\s+or\s+|\s*\|\s*|/)\s*")
_NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+\d*|\d+")


class ToolCatalogError(Refusal):
    """Raised when ``lint_tools`` is handed a catalog it cannot read. Carries ``entry`` and ``received``."""

    code = "ERR_TOOL_CATALOG"
    fields = ("entry", "received")

    def __init__(self, entry: str, received: str, fix: str) -> None:
        super().__init__(f"footprint_lab.lint_tools: {entry} is {received}. {fix}.")
        self.entry = entry
        self.received = received


@dataclass(frozen=True)
class LintTool:
    """A tool as the lint reads it, whatever shape it came in."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class LintFinding:
    """One finding (see the module docstring for the checks); ``score``/``margin`` only for ``confusable``."""

    severity: str
    check: str
    tool: str
    message: str
    fix: str
    other: str | None = None
    parameter: str | None = None
    score: float | None = None
    threshold: float | None = None
    margin: float | None = None


# -- reading a catalog, in any shape --------------------------------------------------------------
def read_catalog(catalog: Any) -> list[LintTool]:
    """The tools of ``catalog`` (a list, a ``{"tools": [...]}`` result, JSON text or a ``.json`` path)."""
    if isinstance(catalog, str | os.PathLike) and not (isinstance(catalog, str) and catalog.lstrip()[:1] in "[{"):
        path = Path(catalog)
        if not path.is_file():
            raise ToolCatalogError("the catalog", "a path with no file", "Pass a list of tools or a .json file")
        catalog = path.read_text(encoding="utf-8")
    if isinstance(catalog, str):
        try:
            catalog = json.loads(catalog)
        except ValueError:
            raise ToolCatalogError("the catalog", f"text of {len(catalog)} characters that is not JSON",
                                   "Pass a JSON list of tools or an MCP tools/list result") from None
    if isinstance(catalog, dict):
        inner = catalog.get("result", catalog)
        catalog = inner.get("tools") if isinstance(inner, dict) else None
        if not isinstance(catalog, list):
            raise ToolCatalogError("the catalog", "a dict with no 'tools' list",
                                   "Pass a list of tools, or a tools/list result ({'tools': [...]})")
    if not isinstance(catalog, Iterable) or isinstance(catalog, str | bytes):
        raise ToolCatalogError("the catalog", describe_shape(catalog), "Pass a list of tools")
    return [_tool(entry, n) for n, entry in enumerate(catalog)]


def _tool(entry: Any, n: int) -> LintTool:
    schema = getattr(entry, "schema", None)
    if callable(schema) and not isinstance(entry, dict):  # a footprint_lab Tool
        entry = schema()
    if not isinstance(entry, dict):
        raise ToolCatalogError(f"entry {n}", describe_shape(entry), "Each tool must be a dict or a footprint_lab tool")
    if isinstance(entry.get("function"), dict):  # OpenAI chat completions: {"type": "function", "function": {...}}
        entry = entry["function"]
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise ToolCatalogError(f"entry {n}", "a tool with no name", "Give every tool a 'name'")
    description = entry.get("description")
    params: Any = next((entry[key] for key in ("parameters", "input_schema", "inputSchema") if key in entry), {})
    if params is None:
        params = {}
    if not isinstance(params, dict) or not isinstance(description, str | None):
        raise ToolCatalogError(f"entry {n}", "a tool whose parameters or description have the wrong type",
                               "Parameters must be a JSON schema object and the description a string")
    properties = params.get("properties") or {}
    return LintTool(name, (description or "").strip(), properties if isinstance(properties, dict) else {})


# -- the checks -----------------------------------------------------------------------------------
def lint_findings(catalog: Any, *, threshold: float = THRESHOLD,
                  embed: Callable[[list[str]], Any] | None = None) -> list[LintFinding]:
    """Every finding for ``catalog``, tool by tool, then the pairs (see :func:`lint_tools`)."""
    tools = read_catalog(catalog)
    if not isinstance(threshold, int | float) or isinstance(threshold, bool) or not 0 < threshold <= 1:
        raise ToolCatalogError("threshold", describe_shape(threshold), "Pass a number above 0 and at most 1")
    found: list[LintFinding] = []
    for tool in tools:
        found += _structural(tool)
    found += _affixes(tools)
    found += _confusable(tools, threshold, embed)
    return found


def _structural(tool: LintTool) -> list[LintFinding]:
    found: list[LintFinding] = []
    text = tool.description
    if not text:
        found.append(LintFinding("error", "missing-description", tool.name, "has no description: the model can "
                                 "only guess from its name", "Describe what it does and when to use it"))
    elif len(text) < SHORT or len(text.split()) < 3:
        found.append(LintFinding("error", "short-description", tool.name, f"has a {len(text)}-character description",
                                 "Say what it does, what it returns and when to use it (a sentence or two)"))
    elif _WHAT.search(text) and not _WHEN.search(text):
        found.append(LintFinding("warning", "what-not-when", tool.name, "says what it returns but not when to use it",
                                 "Add when to call it, e.g. 'Use when ...; for ..., use another tool instead'"))
    for name, spec in tool.parameters.items():
        spec = spec if isinstance(spec, dict) else {}
        about = spec.get("description")
        if not isinstance(about, str) or not about.strip():
            found.append(LintFinding("warning", "undocumented-parameter", tool.name, f"parameter '{name}' has no "
                                     "description", "Describe what the parameter means and its format",
                                     parameter=name))
            continue
        values = prose_enum(about)
        if values and "enum" not in spec:
            enum = json.dumps(values)
            found.append(LintFinding("warning", "enum-in-prose", tool.name, f"parameter '{name}' lists its values in "
                                     "prose", f'Add "enum": {enum} to its schema', parameter=name))
    return found


def prose_enum(text: str) -> list[str]:
    """The legal values a description lists in prose (``one of 'a', 'b' or 'c'``), or ``[]``."""
    match = _CHOICES.search(text)
    if match is None:
        return []
    listed = re.sub(r"^(?:one of|either)\s*:?\s*", "", match.group("list").strip(), flags=re.IGNORECASE)
    values = [v.strip().strip("'\"`").strip() for v in _SPLIT.split(listed)]
    values = [v for v in values if v and len(v.split()) == 1]
    return values if len(values) >= 2 else []


def name_words(name: str) -> list[str]:
    """A tool name's words, across snake_case, kebab-case and camelCase."""
    return [w.lower() for part in re.split(r"[^A-Za-z0-9]+", name) for w in _NAME_WORD.findall(part)]


def _affixes(tools: list[LintTool]) -> list[LintFinding]:
    found: list[LintFinding] = []
    by_words = {tuple(name_words(t.name)): t.name for t in tools}
    for words_, name in by_words.items():
        for shorter in (words_[1:], words_[:-1]):
            other = by_words.get(shorter) if shorter else None
            if other is not None and other != name:
                extra = words_[0] if shorter == words_[1:] else words_[-1]
                found.append(LintFinding("warning", "affix-name", name, f"differs from '{other}' only by '{extra}'",
                                         "Name each for what sets it apart, or merge them", other=other))
    return found


def _confusable(tools: list[LintTool], threshold: float,
                embed: Callable[[list[str]], Any] | None) -> list[LintFinding]:
    import numpy as np

    texts = [f"{' '.join(name_words(t.name))} {t.description}" for t in tools]
    bags = [words(text) for text in texts]
    table = _similarities(bags) if embed is None else _embedded(texts, embed)
    found: list[LintFinding] = []
    for i, j in np.argwhere(np.triu(table, 1) >= threshold).tolist():
        value = float(table[i, j])
        only_i = sorted(set(bags[i]) - set(bags[j]))
        only_j = sorted(set(bags[j]) - set(bags[i]))
        left, right = tools[i].name, tools[j].name
        differ = (f"they differ only in {', '.join(only_i) or '(nothing)'} vs {', '.join(only_j) or '(nothing)'}"
                  if len(only_i) + len(only_j) <= 6 else "they share most of their words")
        found.append(LintFinding(
            "warning", "confusable", left, f"reads like '{right}' (similarity {value:.2f}); {differ}",
            f"Say when to pick each: '{left}' is for ..., '{right}' is for ...; or merge them",
            other=right, score=round(value, 4), threshold=threshold, margin=round(value - threshold, 4)))
    return found


def _similarities(bags: list[list[str]]) -> Any:
    """The cosine of every pair of word-count vectors (the lexical default), as one matrix."""
    import numpy as np

    vocabulary: dict[str, int] = {}
    indexed = [[vocabulary.setdefault(word, len(vocabulary)) for word in bag] for bag in bags]
    rows = np.zeros((len(bags), max(len(vocabulary), 1)))
    for n, bag in enumerate(indexed):
        np.add.at(rows[n], bag, 1.0)
    return _cosines(rows)


def _embedded(texts: list[str], embed: Callable[[list[str]], Any]) -> Any:
    """The cosine of every pair of the vectors ``embed`` gives for the tools' texts."""
    import numpy as np

    try:
        rows = np.asarray(embed(texts), dtype=float)
    except (TypeError, ValueError):
        raise ToolCatalogError("embed", "a function whose result is not a list of number vectors",
                               "Return one vector (a list of numbers) per text, in order") from None
    if rows.ndim != 2 or len(rows) != len(texts) or not np.isfinite(rows).all():
        raise ToolCatalogError("embed", f"a function that returned {describe_shape(rows.tolist())}",
                               "Return one finite vector per text, in order, all of one length")
    return _cosines(rows)


def _cosines(rows: Any) -> Any:
    """Pairwise cosines of the rows (0 for a row of zeros), as ``similarity.cosine`` defines them."""
    import numpy as np

    norms = np.linalg.norm(rows, axis=1)
    norms[norms == 0] = 1.0
    unit = rows / norms[:, None]
    return unit @ unit.T


def twins(tools: list[dict[str, Any]], chosen: str, *, threshold: float = THRESHOLD) -> list[tuple[str, float]]:
    """The tools of one call's tools slot that the lint finds confusable with ``chosen``, closest first.

    What the answer view shows beside a tool call ("chose between twins") when the provider reported
    no log-probabilities; with them, the recording's measured margins (``explain.choice``) come first.
    """
    key = json.dumps(tools, sort_keys=True, default=str)
    pairs = _twin_pairs(key, threshold)
    found = [(b, score) for a, b, score in pairs if a == chosen] + [(a, score) for a, b, score in pairs if b == chosen]
    return sorted(found, key=lambda pair: -pair[1])


@functools.lru_cache(maxsize=64)
def _twin_pairs(key: str, threshold: float) -> tuple[tuple[str, str, float], ...]:
    """Every confusable pair of a tools slot (given as its JSON), linted once per distinct slot."""
    try:
        findings = lint_findings(json.loads(key), threshold=threshold)
    except ToolCatalogError:
        return ()
    return tuple((f.tool, f.other or "", f.score or 0.0) for f in findings if f.check == "confusable")


class ToolLintWarning(UserWarning):
    """What ``Agent(..., lint_tools=True)`` found in its tools: ``findings`` holds the rows."""

    def __init__(self, runner: str, findings: list[LintFinding]) -> None:
        errors = sum(f.severity == "error" for f in findings)
        lines = "; ".join(f"{f.tool}: {f.message}" for f in findings[:5])
        more = f" (and {len(findings) - 5} more)" if len(findings) > 5 else ""
        super().__init__(f"{runner}: the tool lint found {len(findings)} problem(s), {errors} error(s): {lines}{more}. "
                         "See footprint_lab.lint_tools(agent.tools) for the fixes")
        self.findings = findings


def warn_findings(tools: Any, runner: str) -> None:
    """Warn once with what the lint finds in ``tools`` (nothing when it finds nothing)."""
    import warnings

    findings = lint_findings(tools)
    if findings:
        warnings.warn(ToolLintWarning(runner, findings), stacklevel=4)


def lint_tools(catalog: Any, *, threshold: float = THRESHOLD,
               embed: Callable[[list[str]], Any] | None = None) -> pd.DataFrame:
    """Lint a tool catalog; one row per finding (columns: ``severity``, ``check``, ``tool``, ``other``,
    ``parameter``, ``score``, ``threshold``, ``margin``, ``message``, ``fix``), errors first.

    ``catalog``: footprint_lab tools, OpenAI function definitions, Anthropic tools, an MCP
    ``tools/list`` result, plain ``{name, description, inputSchema}`` dicts, their JSON text or a
    ``.json`` path. ``embed`` (a function of a list of texts returning one vector each) replaces
    the lexical similarity.
    """
    import pandas as pd

    rows = [[getattr(finding, column) for column in COLUMNS]
            for finding in lint_findings(catalog, threshold=threshold, embed=embed)]
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    order = {"error": 0, "warning": 1}
    return frame.sort_values("severity", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)
