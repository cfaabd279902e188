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

from footprint_lab import define_tool

#: The slow tier: modules that start kernels, subprocesses, clusters or builds, or test huge values, by name (what
#: they start). Plain ``pytest`` runs the fast tier (``addopts`` in pyproject.toml leaves ``slow``, ``browser`` and
#: ``real_model`` out); the README's test command (``scripts/test``) runs every tier.
SLOW_MODULES = {
    "test_setup_scripts": "clones the repository, builds virtual environments and a wheel",
    "test_docs": "builds the documentation site and runs every code block of it",
    "test_typed_surface": "type-checks a user's script with mypy --strict in a subprocess",
    "test_notebooks": "executes every shipped notebook in a kernel",
    "test_huge_values": "runs, shows and exports answers of 20 MB",
    "test_batch_folders_hostile": "races processes saving run sets and starts a Dask cluster",
    "test_batch_cluster": "starts a Dask cluster",
    "test_batch_stopped": "interrupts a real kernel",
    "test_seal_display": "displays runs in real kernels and runs the CLI",
    "test_cli_exit_codes": "runs the console script in subprocesses",
    "test_cli_hostile": "runs the console script in subprocesses",
    "test_scrub_corners": "runs the console script in subprocesses",
    "test_lab_extension": "runs cells in a real kernel",
    "test_lab_magics": "runs cells in a real kernel",
    "test_ask_magic": "runs cells in a real kernel",
    "test_lab_chat": "runs cells in a real kernel",
    "test_errors_teach": "runs cells in a real kernel",
    "test_notebook_sharing": "runs cells in a real kernel",
    "test_provider_concurrency": "holds requests on local servers for seconds",
    "test_determinism": "runs fresh interpreters under other hash seeds",
    "test_saved_files_property": "corrupts saved files a few hundred ways",
    "test_otel_openinference": "runs the real frameworks' agents",
    "test_package": "imports every public name in fresh interpreters",
}
#: single tests of the slow tier (``module.py::test``), each taking seconds
SLOW_TESTS = {
    "test_explain_difference.py::test_a_long_run_view_draws_a_bounded_part_and_says_where_the_rest_is",
    "test_explain_search.py::test_two_arms_that_act_only_together_are_confirmed_together_within_48_reruns_at_25_percent_noise",
}


@pytest.hookimpl(tryfirst=True)  # marked before ``-m`` deselects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = item.path.stem
        if module in SLOW_MODULES or f"{item.path.name}::{item.originalname}" in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


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
