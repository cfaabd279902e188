"""The public surface: names where users look for them, and a light import."""

from __future__ import annotations

import subprocess
import sys

import footprint_lab
from footprint_lab import errors
from footprint_lab.engine.refusal import Refusal


def test_every_public_name_resolves():
    for name in footprint_lab.__all__:
        assert getattr(footprint_lab, name) is not None


def test_every_refusal_is_exported_at_top_level_and_has_a_code():
    for name in errors.__all__:
        cls = getattr(footprint_lab, name)
        assert issubclass(cls, Refusal)
        assert cls is Refusal or (cls.code.startswith("ERR_") and cls.code != Refusal.code)
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
    coded = {cls.__name__ for cls in descendants(Refusal) if "code" in vars(cls) and cls.__module__.startswith(
        "footprint_lab.")}
    assert coded - set(errors.__all__) == set()
    assert len(coded) == len(errors.__all__) - 1  # every name but Refusal itself, and no two with one name


def test_import_does_not_pull_heavy_libraries():
    code = ("import sys, footprint_lab; heavy = [m for m in ('pandas', 'plotly', 'ipywidgets', 'pydantic', "
            "'httpx', 'nbformat') if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
