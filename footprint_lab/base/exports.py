"""Every package's public surface, from one list: the imports under its ``if TYPE_CHECKING:``.

Rule kept here: a package says what it offers as imports under ``if TYPE_CHECKING:``, each
``from module import name as name`` (so a strict type checker knows every name and its type,
refusals included), and as a literal ``__all__`` that a type checker and a reader see without
running anything; tests/test_package.py holds the two lists equal. :func:`public` builds the
package's ``__getattr__`` and ``__dir__`` from the block: a name is imported the first time it is
asked for and kept in the package's namespace, so ``import footprint_lab`` stays light (no
pydantic, pandas or plotly until a name that needs them is used).

The block may hold ``from module import name`` and ``from module import name as alias``
(the alias is the public name) and ``from module import *`` (every public name of a module
that builds its surface the same way). ``from package import submodule`` offers the
submodule by name, outside ``__all__`` (``import *`` does not load every subpackage).
Anything else in the block is refused when the package is imported, so a surface cannot
drift into something this reader does not understand.

Role: base layer; imports only the standard library. Used by every package's ``__init__``
and by ``footprint_lab.errors``.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from collections.abc import Callable
from typing import Any

Surface = tuple[Callable[[str], Any], Callable[[], list[str]]]


def public(package: str) -> Surface:
    """``(__getattr__, __dir__)`` for ``package``, read from its ``if TYPE_CHECKING:`` imports (its literal
    ``__all__`` lists the same names, but the subpackages it offers: tests/test_package.py holds them equal)."""
    where = exported(package)
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        target = where.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = _load(package, *target)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__


def exported(package: str) -> dict[str, tuple[str, str]]:
    """Each public name of ``package`` with the module it comes from and its name there (nothing imported)."""
    spec = importlib.util.find_spec(package)
    origin = spec.origin if spec is not None else None
    if origin is None:
        raise ImportError(f"{package}: no source to read its public names from")
    with open(origin, encoding="utf-8") as source:
        tree = ast.parse(source.read(), origin)
    names: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for statement in node.body:
                names.update(_names(package, statement))
    return names


def _names(package: str, statement: ast.stmt) -> dict[str, tuple[str, str]]:
    if not isinstance(statement, ast.ImportFrom) or statement.level or statement.module is None:
        raise ImportError(f"{package}: only 'from module import name' may stand under TYPE_CHECKING "
                          f"(line {statement.lineno})")
    module = statement.module
    if any(alias.name == "*" for alias in statement.names):
        return exported(module)
    return {alias.asname or alias.name: (module, alias.name) for alias in statement.names}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _load(package: str, module: str, name: str) -> Any:
    if module == package:  # ``from footprint_lab import providers``: the package's own submodule
        return importlib.import_module(f"{module}.{name}")
    source = importlib.import_module(module)
    try:
        return getattr(source, name)
    except AttributeError:
        return importlib.import_module(f"{module}.{name}")
