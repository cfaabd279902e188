"""A real JupyterLab server for the browser tier: one per test session, in a temporary home.

``start_lab(root)`` starts ``jupyter lab`` on 127.0.0.1 at a free port, without a token, with
its config, data, runtime, settings and workspaces directories (and ``HOME``) in a temporary
folder, so nothing touches the user's own. Extensions installed with Python (ipywidgets'
manager, anywidget) are still found: they live under the interpreter's prefix, not in the
data directory. Widget state is saved with the notebook (the manager's ``saveState``), as an
analyst who shares notebooks would set it, and notebooks draw every cell at once
(``windowingMode: "none"``), so what a test waits for is in the page, not left for a
scroll. ``stop_lab`` ends the server by its own process id.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class LabServer:
    url: str
    root: Path
    process: subprocess.Popen[bytes]
    log: Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_lab(base: Path, *, timeout: float = 120.0) -> LabServer:
    """Start JupyterLab serving ``base / 'notebooks'``; wait until it answers."""
    root = base / "notebooks"
    home = base / "home"
    dirs = {name: base / name for name in ("config", "data", "runtime", "settings", "workspaces")}
    for folder in (root, home, *dirs.values()):
        folder.mkdir(parents=True, exist_ok=True)
    manager = dirs["settings"] / "@jupyter-widgets" / "jupyterlab-manager"
    manager.mkdir(parents=True, exist_ok=True)
    (manager / "plugin.jupyterlab-settings").write_text(json.dumps({"saveState": True}), encoding="utf-8")
    # No news, no update checks, no announcements: the test browser is offline.
    news = dirs["settings"] / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True, exist_ok=True)
    (news / "notification.jupyterlab-settings").write_text(
        json.dumps({"checkForUpdates": False, "fetchNews": "false"}), encoding="utf-8")
    # Every cell drawn as the notebook opens: JupyterLab 4 otherwise attaches or renders a cell only
    # as it scrolls into view, and a test would count outputs that are not there yet.
    tracker = dirs["settings"] / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True, exist_ok=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}), encoding="utf-8")
    port = free_port()
    # The kernel imports the footprint_lab these tests import (a checkout on PYTHONPATH, or the installed one).
    import footprint_lab

    package_root = str(Path(footprint_lab.__file__).resolve().parent.parent)
    path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p)
    env = {
        **os.environ, "HOME": str(home), "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTER_DATA_DIR": str(dirs["data"]), "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "JUPYTERLAB_SETTINGS_DIR": str(dirs["settings"]), "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"]),
        "IPYTHONDIR": str(home / ".ipython"), "JUPYTER_PLATFORM_DIRS": "1", "PYTHONPATH": path,
    }
    log = base / "jupyterlab.log"
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0", "--allow-root", "--ServerApp.terminals_enabled=False",
        "--IdentityProvider.token=", "--ServerApp.password=",
        "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={root}",
        "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
    ]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT, cwd=root)
    server = LabServer(f"http://127.0.0.1:{port}", root, process, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"jupyter lab exited early; its log: {log}")
        try:
            with urllib.request.urlopen(f"{server.url}/api/status", timeout=2) as reply:
                if reply.status == 200:
                    return server
        except OSError:
            time.sleep(0.3)
    stop_lab(server)
    raise RuntimeError(f"jupyter lab did not answer within {timeout:.0f} s; its log: {log}")


def place(server: LabServer, notebook: Any, name: str, *, trusted: bool) -> str:
    """Write ``notebook`` into the server's folder as ``name``, signed with this server's secret when ``trusted``
    (as `jupyter trust` would), and return the address that opens it alone in a fresh workspace."""
    import nbformat
    from nbformat.sign import NotebookNotary

    if trusted:
        NotebookNotary(data_dir=str(server.root.parent / "data")).sign(notebook)
    nbformat.write(notebook, server.root / name)
    return f"{server.url}/lab/tree/{name}?reset"


def stop_lab(server: LabServer) -> None:
    """End the server (and the kernels it started) by its own process id."""
    process = server.process
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
