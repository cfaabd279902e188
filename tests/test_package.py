"""The public surface: names where users look for them, and a light import."""

from __future__ import annotations

import subprocess
import sys

import footprint_lab
from footprint_lab import errors
from footprint_lab.engine.refusal import CodedError, Refusal, RunFailure


def test_every_public_name_resolves():
    for name in footprint_lab.__all__:
        assert getattr(footprint_lab, name) is not None


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


def test_import_does_not_pull_heavy_libraries():
    code = ("import sys, footprint_lab; heavy = [m for m in ('pandas', 'plotly', 'ipywidgets', 'pydantic', "
            "'httpx', 'nbformat') if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
