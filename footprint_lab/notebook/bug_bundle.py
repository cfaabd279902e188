"""``run.bug_report(path)`` / ``chat.bug_report(path)``: a zip to attach to an issue, and nothing else in it.

Rule kept here: the person filing sees exactly what leaves their machine, and nothing a
redaction policy covers leaves it. The bundle is built the way a shared notebook is: the runs
are exported as a notebook masked by the policy (the one each run was recorded under, rebuilt
from its report, with the runner's and ``redact=``), that notebook is ``scan``ned (a place the
policy would still mask refuses the whole bundle, :class:`BugReportError`, and nothing is
written), and its offline page (``to_html``) is the view. The zip holds:

- ``recordings/run-N.json``: each run's recording, read back from the masked notebook;
- ``report.ipynb`` and ``view.html``: the runs' views, to open in Jupyter or in a browser offline;
- ``environment.json``: footprint_lab's, Python's and the main dependencies' versions and the platform;
- ``provider.json``: the provider's name and the models the calls named, the endpoints as
  scheme, host and path (never a key, user info or query string);
- ``manifest.json``: every file with what it holds and its size, the policy's key and pattern
  names (never a value) and what the scan found.

Role: lab layer (``footprint_lab.notebook``); registered as the writer of ``base.bug_reports``.
"""

from __future__ import annotations

import json
import platform
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from footprint_lab.base import bug_reports as _bug_reports
from footprint_lab.base.refusal import Refusal, describe_shape
from footprint_lab.notebook._export import export
from footprint_lab.notebook._html import to_html
from footprint_lab.notebook._scrub import scan
from footprint_lab.notebook.read import SharingConfigError, load_runs, output_path
from footprint_lab.providers.failures import display_url
from footprint_lab.redact.policy import Redaction, combine_policies, policy_from_reports

if TYPE_CHECKING:
    import os

    from footprint_lab.core.run import Run
    from footprint_lab.core.runner import Runner

#: the libraries whose versions a maintainer asks for first
_PACKAGES = ("pydantic", "pandas", "httpx", "ipywidgets", "anywidget", "plotly", "ipykernel", "jupyterlab")


class BugReportError(Refusal, ValueError):
    """Raised by ``bug_report`` when the masked bundle would still hold what the redaction policy covers.

    Nothing is written. Carries ``places`` (how many places the scan found; what they hold is never said).
    """

    code = "ERR_BUG_REPORT"
    fields = ("places",)

    def __init__(self, places: int) -> None:
        super().__init__(
            f"bug_report: after masking, the scan still finds {places} place(s) the redaction policy covers, so no "
            "bundle was written. Pass the policy the run was recorded under as redact=Redaction(...) (a pattern of "
            "your own is recorded by name only and cannot be rebuilt from the recording)."
        )
        self.places = places


def bug_report(runs: list[Run], path: str | os.PathLike[str], *, redact: Redaction | None = None,
               runner: Runner | None = None, title: str = "A run") -> Path:
    """Write the bug-report zip of ``runs`` at ``path``; see the module docstring for what it holds."""
    if redact is not None and not isinstance(redact, Redaction):
        raise SharingConfigError("bug_report", "redact", describe_shape(redact),
                                 "must be a Redaction(keys=..., patterns=...), or left out")
    target = output_path(path, "path")
    recordings = [run.recording for run in runs]
    policy = combine_policies(policy_from_reports(r.redaction for r in recordings if r.redaction),
                              getattr(runner, "redact", None), redact)
    with tempfile.TemporaryDirectory(prefix="footprint-bug-") as folder:
        notebook = export(runs, Path(folder) / "report.ipynb", title=f"Bug report: {title}", redact=policy)
        leftover = scan(notebook, redact=policy) if policy is not None else []
        if leftover:
            raise BugReportError(len(leftover))
        page = to_html(notebook, Path(folder) / "view.html")
        masked = [run.recording.model_dump_json(indent=1) for run in load_runs(notebook)]
        files: dict[str, tuple[bytes, str]] = {
            **{f"recordings/run-{n}.json": (text.encode(), f"the recording of run {n} ({recordings[n].status}), "
                                            + ("masked by the redaction policy" if policy else "as recorded"))
               for n, text in enumerate(masked)},
            "report.ipynb": (notebook.read_bytes(), "a notebook of the runs' views, recordings embedded, masked"),
            "view.html": (page.read_bytes(), "the runs' answer views as one offline page (no network, no scripts "
                                             "beyond the page's own)"),
        }
    files["environment.json"] = (_json(_environment()), "versions of footprint_lab, Python and its main "
                                                        "dependencies, and the platform")
    files["provider.json"] = (_json(_provider(recordings, runner)), "the provider's name, the models named and the "
                                                                    "endpoints (scheme, host, path only)")
    manifest = {
        "what": "a footprint_lab bug report: every file it holds is listed here",
        "files": [{"name": "manifest.json", "holds": "this list"},
                  *({"name": name, "holds": holds, "bytes": len(data)} for name, (data, holds) in files.items())],
        "redaction": {"keys": sorted(policy.keys), "patterns": sorted(policy.patterns)} if policy else None,
        "scan": ("clean: the policy finds nothing left to mask" if policy is not None
                 else "no redaction policy: recorded values are as they were recorded"),
        "never_included": ["API keys and request headers", "environment variables",
                           "user info and query strings of URLs", "files other than the ones listed"],
    }
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("manifest.json", _json(manifest))
        for name, (data, _) in files.items():
            bundle.writestr(name, data)
    return target


def _json(value: Any) -> bytes:
    return json.dumps(value, indent=2, ensure_ascii=False).encode()


def _environment() -> dict[str, Any]:
    packages = {name: _version(name) for name in _PACKAGES}
    return {"footprint_lab": _version("footprint_lab"), "python": platform.python_version(),
            "implementation": platform.python_implementation(), "platform": f"{sys.platform} {platform.machine()}",
            "packages": packages}


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _provider(recordings: list[Any], runner: Any) -> dict[str, Any]:
    models: set[str] = set()
    endpoints: set[str] = set()
    pending = list(recordings)
    while pending:
        recording = pending.pop()
        pending += recording.children
        for exchange in recording.exchanges:
            models.update(m for m in (exchange.model, exchange.response.model) if isinstance(m, str) and m)
            url = ((exchange.wire or {}).get("request") or {}).get("url")
            if isinstance(url, str):
                endpoints.add(display_url(url))
    provider = getattr(runner, "provider", None)
    name = getattr(provider, "name", None)
    return {"provider": name if isinstance(name, str) else (type(provider).__name__ if provider else None),
            "models": sorted(models), "endpoints": sorted(endpoints)}


_bug_reports.register(bug_report)
