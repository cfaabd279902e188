"""Shared test helpers.

Property tests (hypothesis) draw the same examples on every run of the suite, so a run that passes
passes again; ``FOOTPRINT_HYPOTHESIS=explore`` draws fresh ones, to look for new breaks (a break
found that way becomes a fixed example or a bound at the door, as samples' upper bound did).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import settings
from tier_kit import SLOW_MODULES, SLOW_TESTS

from footprint_lab import define_tool


@pytest.hookimpl(tryfirst=True)  # marked before ``-m`` deselects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = item.path.stem
        if module in SLOW_MODULES or f"{item.path.name}::{item.originalname}" in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


def _kernels_over_local_sockets() -> None:
    """Every Jupyter kernel nbclient starts for a test talks over socket files, not TCP ports.

    jupyter_client picks a kernel's five TCP ports by opening and closing them, then the kernel binds them: another
    process can take one in between ("Address already in use", then "Kernel died before replying to kernel_info"),
    as seen with two suites on one machine. A socket file under a folder of this process's own, named for the
    kernel, is taken by no one else. The kernel reads the transport from its connection file (ipykernel supports it
    on every POSIX system); nbclient builds its kernel manager from ``jupyter_client.AsyncKernelManager``, which
    this replaces for the test process only."""
    if os.name != "posix":
        return
    import atexit
    import shutil
    import tempfile
    import uuid

    import jupyter_client
    from traitlets import default

    sockets = tempfile.mkdtemp(prefix="fl-kernels-")
    atexit.register(shutil.rmtree, sockets, True)

    class LocalSocketKernelManager(jupyter_client.AsyncKernelManager):
        @default("transport")
        def _local_sockets(self) -> str:
            return "ipc"

        @default("ip")
        def _socket_prefix(self) -> str:  # absolute: the kernel runs in the notebook's folder, not the test's
            return os.path.join(sockets, uuid.uuid4().hex)

    jupyter_client.AsyncKernelManager = LocalSocketKernelManager


_kernels_over_local_sockets()

settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile("explore" if os.environ.get("FOOTPRINT_HYPOTHESIS") == "explore" else "repeatable")


@pytest.fixture(autouse=True)
def _prices_restored() -> Iterator[None]:
    """The price table is the process's: a test or docs block that prices a model leaves it as it found it."""
    from footprint_lab.providers.prices import PRICES, remove_price, set_price

    kept = dict(PRICES)
    yield
    for name in set(PRICES) - set(kept):
        remove_price(name)
    for name, price in kept.items():
        set_price(name, input=price.input, output=price.output, cache_read=price.cache_read,
                  cache_write=price.cache_write)


@pytest.fixture
def noop_tool():
    return define_tool(name="noop", description="Does nothing.", input_schema={"type": "object", "properties": {}},
                       fn=lambda: "ok")


@pytest.fixture
def compose():
    """Mount an agent as the chosen branch of a ``Conditional`` (a routing decision, then the answer).

    Returns an async function ``build(agent, message) -> (recording, member_recording, mount_step)``.
    """
    from footprint_lab import Agent, Conditional
    from footprint_lab.providers import mock

    async def build(agent, message):
        flow = Conditional([("member", lambda text: True, agent)],
                           otherwise=("other", Agent(provider=mock(reply="unused"))))
        recording = (await flow.run(message)).recording
        member = recording.children[0]
        return recording, member, member.path

    return build


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One real JupyterLab server for the browser tier (``lab_server.start_lab``), stopped at the end."""
    from lab_server import start_lab, stop_lab

    server = start_lab(tmp_path_factory.mktemp("jupyterlab"))
    try:
        yield server
    finally:
        stop_lab(server)


@pytest.fixture
def planted_note():
    """``make(answer) -> run``: a refunds run whose tool result tells an explainer what to answer (``ask_kit``)."""
    from ask_kit import planted_note_run

    return planted_note_run


@pytest.fixture(scope="session")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """``model_server("stock" | "patient" | "tools")``: a real llama.cpp server on SmolLM2-135M, one per
    variant for the session (``real_model_kit``), every one stopped at the end."""
    from real_model_kit import ModelServers

    servers = ModelServers(tmp_path_factory.mktemp("llama"))
    try:
        yield servers
    finally:
        servers.stop_all()
