"""The public surface: names where users look for them, and a light import."""

from __future__ import annotations

import importlib
import subprocess
import sys

import footprint_lab
from footprint_lab import errors
from footprint_lab.base.refusal import CodedError, Refusal, RunFailure

#: The public modules and what a user imports from each (the README and docs/ use these names).
PROMISED = {
    "footprint_lab": ["Agent", "LLMCall", "define_tool", "tool", "ask_human", "Run", "Recording", "Checkpoint",
                      "Identity", "Redaction", "Sequence", "Parallel", "Conditional", "Loop", "Workflow", "Graph",
                      "Refusal"],
    "footprint_lab.providers": ["mock", "openai", "anthropic", "ollama"],
    "footprint_lab.context": ["define_fact", "define_steering", "define_instruction", "define_skill", "define_memory",
                              "define_rag"],
    "footprint_lab.explain": ["localize", "rerun_without", "find_dropped_context", "list_influence_strategies",
                              "ranking_confidence"],
}
PUBLIC_MODULES = [*PROMISED, "footprint_lab.flow", "footprint_lab.errors"]


def _fresh_import(module: str, names: list[str]) -> subprocess.CompletedProcess[str]:
    """``from module import names`` in a new interpreter, as a user's first cell does it."""
    code = f"from {module} import {', '.join(names)}"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


def test_every_promised_name_is_exported_from_its_module():
    for module, names in PROMISED.items():
        exported = importlib.import_module(module).__all__
        assert set(names) <= set(exported), (module, set(names) - set(exported))


def test_every_exported_name_imports_in_a_fresh_interpreter():
    for module in PUBLIC_MODULES:
        names = list(importlib.import_module(module).__all__)
        assert len(names) == len(set(names)), f"{module}.__all__ repeats a name"
        done = _fresh_import(module, names)
        assert done.returncode == 0, (module, done.stderr[-500:])


def test_exported_names_are_the_librarys_own_objects():
    for module in PUBLIC_MODULES:
        loaded = importlib.import_module(module)
        for name in loaded.__all__:
            value = getattr(loaded, name)
            if isinstance(value, type) or callable(value):
                assert getattr(value, "__module__", "").startswith("footprint_lab"), (module, name)
                assert (value.__doc__ or "").strip(), f"{module}.{name} has no docstring to teach its use"


ROOTS = (CodedError, Refusal, RunFailure)


def test_every_error_is_exported_by_the_errors_module_and_has_a_code():
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, CodedError)
        assert cls in ROOTS or (cls.code.startswith("ERR_") and cls.code not in {root.code for root in ROOTS})
        # one root each (CodedError and the ProviderError family span both)
        assert issubclass(cls, Refusal) != issubclass(cls, RunFailure) or name in {"CodedError", "ProviderError"}
        assert name in errors.__doc__


def test_no_refusal_class_is_left_out_of_the_errors_module():
    import importlib
    import pkgutil

    for module in pkgutil.walk_packages(footprint_lab.__path__, "footprint_lab."):
        importlib.import_module(module.name)

    def descendants(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from descendants(sub)

    # every class with a code of its own is raised somewhere, so a user must be able to import it
    coded = {cls.__name__ for cls in descendants(CodedError) if "code" in vars(cls) and cls.__module__.startswith(
        "footprint_lab.")}
    assert coded - set(errors.__all__) == set()
    assert len(coded) == len(errors.__all__) - 1  # every name but CodedError itself, and no two with one name


def test_each_refusal_code_names_one_class():
    codes: dict[str, str] = {}
    for name in errors.__all__:
        cls = getattr(errors, name)
        code = cls.code
        assert code not in codes, f"{name} and {codes.get(code)} share {code}: a program could not tell them apart"
        codes[code] = name
        assert cls is Refusal or (name in errors.__doc__ and code in errors.__doc__), f"{name} is not in the tree"


def test_import_does_not_pull_heavy_libraries():
    code = ("import sys, footprint_lab; heavy = [m for m in ('pandas', 'plotly', 'ipywidgets', 'pydantic', "
            "'httpx', 'nbformat', 'opentelemetry') if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


#: every package that offers names, each built from its own TYPE_CHECKING list (base/exports.py)
SURFACES = ["footprint_lab", "footprint_lab.errors", "footprint_lab.record", "footprint_lab.providers",
            "footprint_lab.context", "footprint_lab.explain", "footprint_lab.flow", "footprint_lab.otel",
            "footprint_lab.notebook"]


def test_each_surface_all_is_a_literal_list_of_what_it_exports_and_every_name_is_the_object_where_it_is_defined():
    import ast
    from pathlib import Path

    from footprint_lab.base.exports import exported

    for package in [*SURFACES, "footprint_lab.batch"]:
        loaded = importlib.import_module(package)
        tree = ast.parse(Path(str(loaded.__file__)).read_text(encoding="utf-8"))
        literal = [ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                   and [getattr(target, "id", None) for target in node.targets] == ["__all__"]]
        assert len(literal) == 1 and literal[0] == loaded.__all__, package  # one literal list a type checker reads
        assert len(set(loaded.__all__)) == len(loaded.__all__), package
        if package == "footprint_lab.batch":  # plain re-exports, no lazy block (checked below)
            continue
        where = exported(package)
        # the subpackages a package offers are reached by name, never by ``import *`` (which would load them all)
        offered = sorted(name for name, (module, _) in where.items() if module != package)
        assert sorted(loaded.__all__) == offered, package
        assert set(loaded.__all__) <= set(dir(loaded)), package
        for name, (module, attribute) in where.items():
            value = getattr(loaded, name)
            if module == package:  # a subpackage the package offers
                assert value is importlib.import_module(f"{module}.{attribute}")
            else:
                assert value is getattr(importlib.import_module(module), attribute), (package, name)


def test_the_root_offers_the_two_kinds_of_error_and_leaves_every_specific_one_to_the_errors_module():
    offered = set(errors.__all__) & set(footprint_lab.__all__)
    assert offered == {"Refusal", "RunFailure"}
    for name in offered:
        assert getattr(footprint_lab, name) is getattr(errors, name)
    assert not hasattr(footprint_lab, "InvalidRunInputError")


def test_an_unknown_name_is_an_attribute_error_naming_the_package():
    for package in SURFACES:
        try:
            importlib.import_module(package).NoSuchName  # noqa: B018 (the lookup is what is tested)
        except AttributeError as missing:
            assert package in str(missing) and "NoSuchName" in str(missing)
        else:
            raise AssertionError(f"{package} offered a name it does not list")


def test_no_two_public_names_alike_stand_for_different_things():
    seen: dict[str, tuple[str, object]] = {}
    for package in SURFACES:
        loaded = importlib.import_module(package)
        for name in loaded.__all__:
            value = getattr(loaded, name)
            if name in seen and not isinstance(value, type(sys)):
                first, before = seen[name]
                assert value is before, f"{first}.{name} and {package}.{name} are different things"
            seen.setdefault(name, (package, value))


def test_importing_a_refusal_loads_the_door_that_raises_it_and_nothing_heavy():
    code = ("import sys; from footprint_lab.errors import InvalidRunInputError; "
            "print(','.join(m for m in ('pydantic', 'pandas', 'httpx', 'footprint_lab.explain', 'footprint_lab.lab', "
            "'footprint_lab.flow', 'footprint_lab.core.door') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "footprint_lab.core.door"


def test_batch_otel_notebook_and_providers_re_export_each_public_name_explicitly_for_a_strict_type_checker():
    """``from m import X as X``, one per public name: ``mypy --strict`` then accepts ``from footprint_lab.otel import
    from_spans`` (a name imported plainly under ``TYPE_CHECKING`` is not exported to it)."""
    import ast
    from pathlib import Path

    for package in ("footprint_lab.batch", "footprint_lab.otel", "footprint_lab.notebook", "footprint_lab.providers"):
        loaded = importlib.import_module(package)
        tree = ast.parse(Path(str(loaded.__file__)).read_text(encoding="utf-8"))
        offered = [alias for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                   and node.module not in ("__future__", "typing", "footprint_lab.base.exports")
                   for alias in node.names]
        assert all(alias.asname == alias.name for alias in offered), package
        assert sorted(alias.name for alias in offered) == sorted(loaded.__all__), package


def test_no_module_is_longer_than_a_newcomer_reads_in_one_sitting():
    """The house rule a maintainer's review set (issue 43): no module over 500 lines. Two grew past it in one day
    (a scrubber at 558 lines, tools at 501) with nothing to say so; this says so."""
    from pathlib import Path

    root = Path(footprint_lab.__file__).parent
    long = {str(path.relative_to(root)): lines for path in root.rglob("*.py")
            if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 500}
    assert long == {}
