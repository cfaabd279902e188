"""No package imports another package's private module, ``TYPE_CHECKING`` imports and module paths in
strings included (``lint-imports``' ``private_modules`` contract leaves ``TYPE_CHECKING`` out, and the
package surfaces load those names at run time): a module named ``_x`` is its own package's."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
DOTTED = re.compile(r"(?<![\w.])footprint_lab(?:\.\w+)+")


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((ROOT / "footprint_lab").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _named(name: str, modules: dict[str, Path]) -> str | None:
    parts = name.split(".")
    while parts and ".".join(parts) not in modules:
        parts.pop()
    return ".".join(parts) or None


def _targets(module: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(_named(alias.name, modules), node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found += [(_named(f"{node.module}.{alias.name}", modules), node.lineno) for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [(_named(match.group(0), modules), node.lineno) for match in DOTTED.finditer(node.value)]
    return [(target, line) for target, line in found if target and target != module]


def _parent_of_private(module: str) -> str | None:
    parts = module.split(".")
    for index in range(len(parts) - 1, 0, -1):
        if parts[index].startswith("_") and not parts[index].endswith("__"):
            return ".".join(parts[:index])
    return None


def test_no_package_imports_another_package_s_private_module():
    modules = _modules()
    crossing = []
    for module, path in modules.items():
        for target, line in _targets(module, path, modules):
            parent = _parent_of_private(target)
            if parent and module != parent and not module.startswith(parent + "."):
                crossing.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not crossing, "a private module imported from outside its package:\n" + "\n".join(crossing)
