"""The figures the layer map is held to, measured from the source: ``python scripts/architecture_figures.py``.

- function-level imports across rooms: ``import`` statements inside a function (outside
  ``if TYPE_CHECKING:``) that reach a footprint_lab module of another room (a room is a
  subpackage, or the package root); ``-v`` lists them;
- import cycles between files: groups of modules that import each other (strongly connected
  components of the module graph, function-level imports included, ``TYPE_CHECKING`` left out);
- the largest modules, in lines, and those over 500 (issue 43's goal);
- the lines of the record and the rooms split from it (``record/``, ``redact/``, ``sealing/``);
- public parameters typed ``Any`` (or not at all): every parameter of every function, and of every public
  method of every class (refusals left out), that a package's ``__all__`` offers (this one imports the
  package at ``--root``).

``import-linter`` (``lint-imports``, the contracts in ``pyproject.toml``) is what fails CI; this
only counts. ``--root DIR`` measures another checkout.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

LIMIT = 500


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "<root>"


def is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def resolve(root: Path, module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The footprint_lab modules an import statement loads (a name imported from a package counts as it)."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            parts = module.split(".")[: None if is_package else -1]
            parts = parts[: len(parts) - node.level + 1]
            base = ".".join([*parts, *([base] if base else [])])
        targets = [f"{base}.{alias.name}" for alias in node.names]
    found = []
    for target in targets:
        parts = target.split(".")
        while parts and not ((root / Path(*parts)).with_suffix(".py").exists()
                             or (root / Path(*parts) / "__init__.py").exists()):
            parts.pop()
        if parts and parts[0] == "footprint_lab":
            found.append(".".join(parts))
    return found


def measure(root: Path) -> tuple[list[tuple[str, int, str]], dict[str, set[str]], list[tuple[int, str]]]:
    hidden: list[tuple[str, int, str]] = []
    edges: dict[str, set[str]] = defaultdict(set)
    sizes: list[tuple[int, str]] = []
    for path in sorted((root / "footprint_lab").rglob("*.py")):
        module = module_name(root, path)
        source = path.read_text(encoding="utf-8")
        sizes.append((source.count("\n"), str(path.relative_to(root))))
        for node, in_function in imports(ast.parse(source), False):
            targets = [t for t in resolve(root, module, path.name == "__init__.py", node) if t != module]
            edges[module].update(targets)
            across = sorted({t for t in targets if room(t) != room(module)})
            if in_function and across:
                hidden.append((module, node.lineno, ", ".join(across)))
    return hidden, edges, sorted(sizes, reverse=True)


def imports(node: ast.AST, in_function: bool) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement under ``node`` outside ``if TYPE_CHECKING:``, and whether it sits in a function."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and is_type_checking(child):
            continue
        if isinstance(child, ast.Import | ast.ImportFrom):
            found.append((child, in_function))
        found += imports(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))
    return found


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(set(edges) | {t for ts in edges.values() for t in ts}):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def record_lines(root: Path) -> int:
    """Lines of ``record/``, ``redact/`` and ``sealing/``."""
    return sum(len(path.read_text(encoding="utf-8").splitlines()) for room in ("record", "redact", "sealing")
               for path in (root / "footprint_lab" / room).glob("*.py"))


PACKAGES = ["footprint_lab", "footprint_lab.errors", "footprint_lab.record", "footprint_lab.providers",
            "footprint_lab.context", "footprint_lab.explain", "footprint_lab.flow", "footprint_lab.otel",
            "footprint_lab.notebook", "footprint_lab.batch"]


def untyped_parameters(root: Path) -> tuple[int, list[str]]:
    """How many public parameters there are, and those typed ``Any`` or not at all (``name(parameter)``)."""
    import importlib
    import inspect

    sys.path.insert(0, str(root))
    seen: set[int] = set()
    total, loose = 0, []

    def read(function: object, where: str) -> None:
        nonlocal total
        try:
            parameters = inspect.signature(function).parameters  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return
        for name, parameter in parameters.items():
            if name in ("self", "cls"):
                continue
            total += 1
            if parameter.annotation in (inspect.Parameter.empty, "Any") or parameter.annotation is Any:
                loose.append(f"{where}({name})")

    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            value = getattr(module, name)
            if id(value) in seen:
                continue
            seen.add(id(value))
            if isinstance(value, type):
                if issubclass(value, BaseException):
                    continue
                for attribute, member in vars(value).items():
                    if (not attribute.startswith("_") or attribute == "__init__") and (
                            callable(member) or isinstance(member, staticmethod | classmethod)):
                        read(getattr(value, attribute), f"{name}.{attribute}")
            elif callable(value):
                read(value, name)
    return total, loose


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("-v", action="store_true", help="list every function-level import across rooms")
    args = parser.parse_args()
    hidden, edges, sizes = measure(Path(args.root))
    print(f"function-level imports across rooms: {len(hidden)}")
    if args.v:
        for module, line, targets in hidden:
            print(f"    {module}:{line} -> {targets}")
    groups = cycles(edges)
    print(f"import cycles between files: {len(groups)}")
    for group in groups:
        print("    " + " <-> ".join(group))
    print("largest modules: " + ", ".join(f"{path} ({lines})" for lines, path in sizes[:3]))
    over = [f"{path} ({lines})" for lines, path in sizes if lines > LIMIT]
    print(f"modules over {LIMIT} lines: {', '.join(over) or 'none'}")
    print(f"lines of record/, redact/ and sealing/: {record_lines(Path(args.root))}")
    total, loose = untyped_parameters(Path(args.root))
    print(f"public parameters typed Any or not at all: {len(loose)} of {total}")
    if args.v:
        for where in loose:
            print(f"    {where}")
    sys.exit(0)


if __name__ == "__main__":
    main()
