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
- ``confusable`` (warning): tools whose name and description are near each other, one finding
  per group of them (tools joined by pairs at or above the threshold; ``members`` names them
  all). Lexical by default (the words of :func:`footprint_lab.context.similarity.words`, counted,
  compared by cosine); pass ``embed=fn`` (texts to vectors) to compare embeddings instead. Each
  carries its closest pair (``tool`` and ``other``), their ``score``, the ``threshold`` and the
  ``margin`` above it. Pairs are found without comparing every pair
  (:mod:`footprint_lab.explain.checks._confusable`), so a catalog of thousands of tools lints in seconds.

:func:`twins` gives, for a tool a model chose, the confusable neighbours it was sent beside it
(the answer view says "chose between twins"). Every finding has a suggested ``fix``. The same
catalog in any of the accepted shapes gives the same findings. A catalog that cannot be read (a
file that is not UTF-8 text, text that is not JSON, an entry with no name) is refused with
:class:`ToolCatalogError`, naming the entry by index and saying what arrived by shape only.

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
from typing import TYPE_CHECKING, Any, TypeAlias

from footprint_lab.base.refusal import Refusal, describe_shape
from footprint_lab.base.saved_json import MAX_NESTING, NestingTooDeep, parse_json
from footprint_lab.context.similarity import words
from footprint_lab.explain.checks._confusable import Dense, Group, Lexical, groups, pairs

if TYPE_CHECKING:
    import pandas as pd

    from footprint_lab.core.tools import Tool

#: what ``lint_tools`` reads: a list of tools (footprint_lab tools, OpenAI / Anthropic / MCP tool dicts), a
#: ``tools/list`` result (``{"tools": [...]}``, or a JSON-RPC reply whose ``result`` holds it), their JSON text,
#: or the path of a ``.json`` file holding them
Catalog: TypeAlias = "Iterable[Tool | dict[str, Any]] | dict[str, Any] | str | os.PathLike[str]"

#: two tools whose lexical (or embedding) similarity reaches this are reported as confusable
THRESHOLD = 0.6
#: a description shorter than this many characters (or three words) is an error
SHORT = 20
COLUMNS = ("severity", "check", "tool", "other", "parameter", "score", "threshold", "margin", "message", "fix",
           "members")
#: how many members of a confusable group its message names (``members`` holds them all)
NAMED = 6

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


class ToolCatalogError(Refusal, ValueError):
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
    """One finding (see the module docstring); ``score``, ``margin`` and ``members`` are for ``confusable`` only."""

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
    members: tuple[str, ...] = ()


# -- reading a catalog, in any shape --------------------------------------------------------------
def read_catalog(catalog: Any) -> list[LintTool]:
    """The tools of ``catalog`` (a list, a ``{"tools": [...]}`` result, JSON text or a ``.json`` path)."""
    if isinstance(catalog, str | os.PathLike) and not (isinstance(catalog, str) and catalog.lstrip()[:1] in "[{"):
        catalog = _read_file(Path(catalog))
    if isinstance(catalog, str):
        try:
            catalog = parse_json(catalog)  # the one JSON door for saved files: bounded nesting
        except NestingTooDeep:
            raise ToolCatalogError("the catalog", f"JSON nested deeper than {MAX_NESTING} levels",
                                   "Pass a JSON list of tools or an MCP tools/list result") from None
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


def _read_file(path: Path) -> str:
    """The text of a catalog file: UTF-8 (a byte-order mark allowed), or refused saying what the bytes look like."""
    if not path.is_file():
        raise ToolCatalogError("the catalog", "a path with no file", "Pass a list of tools or a .json file")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ToolCatalogError("the catalog file", f"a file that cannot be read ({type(error).__name__})",
                               "Check that it exists and that you may read it") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        # UTF-16 is what PowerShell's '>' writes, for one; otherwise say where the first bad byte is
        found = ("they start with a UTF-16 byte-order mark" if data[:2] in (b"\xff\xfe", b"\xfe\xff")
                 else f"the first bad byte is at offset {error.start}")
        raise ToolCatalogError("the catalog file", f"{len(data)} bytes that are not UTF-8 text ({found})",
                               "Save it as UTF-8 (e.g. iconv -f UTF-16 -t UTF-8, or your editor's 'save with "
                               "encoding'), or pass the list of tools itself") from None


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
    texts, bags = _texts(tools)
    space = Lexical(bags) if embed is None else Dense(_embedded(texts, embed))
    return [_group_finding(tools, bags, group, threshold) for group in groups(space, threshold)]


def _texts(tools: list[LintTool]) -> tuple[list[str], list[list[str]]]:
    """What is compared of each tool: its name's words and its description, and their words."""
    texts = [f"{' '.join(name_words(t.name))} {t.description}" for t in tools]
    return texts, [words(text) for text in texts]


def _group_finding(tools: list[LintTool], bags: list[list[str]], group: Group, threshold: float) -> LintFinding:
    i, j = group.closest
    value = group.score
    only_i = sorted(set(bags[i]) - set(bags[j]))
    only_j = sorted(set(bags[j]) - set(bags[i]))
    left, right = tools[i].name, tools[j].name
    differ = (f"they differ only in {', '.join(only_i) or '(nothing)'} vs {', '.join(only_j) or '(nothing)'}"
              if len(only_i) + len(only_j) <= 6 else "they share most of their words")
    names = tuple(tools[k].name for k in group.members)
    message = f"reads like '{right}' (similarity {value:.2f}); {differ}"
    fix = f"Say when to pick each: '{left}' is for ..., '{right}' is for ...; or merge them"
    if len(names) > 2:
        listed = ", ".join(f"'{name}'" for name in names[:NAMED]) + (
            f" and {len(names) - NAMED} more" if len(names) > NAMED else "")
        message = (f"reads like '{right}' (similarity {value:.2f}), the closest pair of {len(names)} tools that "
                   f"read alike: {listed}; {differ}")
        fix = (f"Say when to pick each of the {len(names)}: '{left}' is for ..., '{right}' is for ...; "
               "or merge those that do the same")
    return LintFinding("warning", "confusable", left, message, fix, other=right, score=round(value, 4),
                       threshold=threshold, margin=round(value - threshold, 4), members=names)


def _embedded(texts: list[str], embed: Callable[[list[str]], Any]) -> Any:
    """The vectors ``embed`` gives for the tools' texts, checked: one finite vector per text."""
    import numpy as np

    try:
        rows = np.asarray(embed(texts), dtype=float)
    except (TypeError, ValueError):
        raise ToolCatalogError("embed", "a function whose result is not a list of number vectors",
                               "Return one vector (a list of numbers) per text, in order") from None
    if rows.ndim != 2 or len(rows) != len(texts) or not np.isfinite(rows).all():
        raise ToolCatalogError("embed", f"a function that returned {describe_shape(rows.tolist())}",
                               "Return one finite vector per text, in order, all of one length")
    return rows


def twins(tools: list[dict[str, Any]], chosen: str, *, threshold: float = THRESHOLD) -> list[tuple[str, float]]:
    """The tools of one call's tools slot that the lint finds confusable with ``chosen``, closest first.

    What the answer view shows beside a tool call ("chose between twins") when the provider reported
    no log-probabilities; with them, the recording's measured margins (``explain.checks.tool_choice``) come first.
    """
    key = json.dumps(tools, sort_keys=True, default=str)
    pairs = _twin_pairs(key, threshold)
    found = [(b, score) for a, b, score in pairs if a == chosen] + [(a, score) for a, b, score in pairs if b == chosen]
    return sorted(found, key=lambda pair: -pair[1])


@functools.lru_cache(maxsize=64)
def _twin_pairs(key: str, threshold: float) -> tuple[tuple[str, str, float], ...]:
    """Every confusable pair of a tools slot (given as its JSON), found once per distinct slot."""
    try:
        tools = read_catalog(json.loads(key))
    except ToolCatalogError:
        return ()
    found = pairs(Lexical(_texts(tools)[1]), threshold)
    return tuple((tools[i].name, tools[j].name, round(score, 4)) for i, j, score in found)


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


def lint_tools(catalog: Catalog, *, threshold: float = THRESHOLD,
               embed: Callable[[list[str]], Any] | None = None) -> pd.DataFrame:
    """Lint a tool catalog; one row per finding (columns: ``severity``, ``check``, ``tool``, ``other``,
    ``parameter``, ``score``, ``threshold``, ``margin``, ``message``, ``fix``, ``members``), errors first.

    ``catalog``: footprint_lab tools, OpenAI function definitions, Anthropic tools, an MCP
    ``tools/list`` result, plain ``{name, description, inputSchema}`` dicts, their JSON text or a
    ``.json`` path. ``embed`` (a function of a list of texts returning one vector each) replaces
    the lexical similarity.
    """
    from footprint_lab.explain.frame import ShownFrame  # imports pandas

    rows = [[getattr(finding, column) for column in COLUMNS[:-1]] + [list(finding.members) or None]
            for finding in lint_findings(catalog, threshold=threshold, embed=embed)]
    frame = ShownFrame(rows, columns=list(COLUMNS))
    order = {"error": 0, "warning": 1}
    return frame.sort_values("severity", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)
