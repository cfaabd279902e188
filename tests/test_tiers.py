"""The test tiers: every test the slow tier names by hand still exists, so a rename never drops it back into the
fast loop (plain ``pytest``) unnoticed, and every module it names is a test module of this suite."""

from __future__ import annotations

import ast
from pathlib import Path

from tier_kit import SLOW_MODULES, SLOW_TESTS

HERE = Path(__file__).parent


def _modules() -> dict[str, Path]:
    return {path.name: path for path in HERE.rglob("test_*.py")}


def test_every_single_slow_test_names_a_test_function_that_exists() -> None:
    modules = _modules()
    missing = []
    for name in sorted(SLOW_TESTS):
        file, _, function = name.partition("::")
        path = modules.get(file)
        defined = set() if path is None else {
            node.name for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
        if function not in defined:
            missing.append(name)
    assert not missing, f"SLOW_TESTS names tests that no longer exist: {missing}"


def test_every_slow_module_is_a_test_module_of_the_suite() -> None:
    stems = {path.removesuffix(".py") for path in _modules()}
    gone = set(SLOW_MODULES) - stems
    assert not gone, f"SLOW_MODULES names modules that no longer exist: {sorted(gone)}"
