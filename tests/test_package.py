"""The public surface: names where users look for them, and a light import."""

from __future__ import annotations

import importlib
import subprocess
import sys

import footprint_lab
from footprint_lab import errors
from footprint_lab.engine.refusal import CodedError, Refusal, RunFailure

#: The public modules and what a user imports from each (ARCHITECTURE.md, "Public names").
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


def test_every_error_is_exported_at_top_level_and_has_a_code():
    for name in errors.__all__:
        cls = getattr(footprint_lab, name)
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
