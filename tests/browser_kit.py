"""Headless Chromium for the browser tests: Debian's system browser, driven by Playwright.

Playwright's own browser download cannot be reached here, so every browser test launches
``/usr/bin/chromium`` (installed by ``scripts/test`` with apt-get when missing) with the flags
that keep it from calling out to the network. Tests that need it are marked ``browser``.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
#: where a failing browser test leaves its screenshot and console log
ARTIFACTS = Path(__file__).parent.parent / "test-artifacts"


@contextmanager
def chromium(*, javascript: bool = True, offline: bool = False) -> Iterator[Any]:
    """A fresh browser context (``page = context.new_page()``); ``offline`` blocks every request but file:// ones."""
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (scripts/test installs it with apt-get)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(java_script_enabled=javascript, viewport={"width": 1280, "height": 900})
            if offline:
                context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                              else route.abort())
            yield context
        finally:
            browser.close()


def screenshot(page: Any, path: Path | str) -> None:
    """A screenshot kept as evidence: the whole page, or the part in view when Chromium cannot capture the whole (a
    page taller than it draws at once, a machine under load). The check beside it is the test, not the picture."""
    from playwright.sync_api import Error

    try:
        page.screenshot(path=str(path), full_page=True)
    except Error:
        page.screenshot(path=str(path))


def keep_evidence(page: Any, name: str, console: list[str]) -> str:
    """Save a screenshot and the console log of a failing page; return where they went."""
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / f"{name}.png"
    screenshot(page, shot)
    (ARTIFACTS / f"{name}.console.txt").write_text("\n".join(console), encoding="utf-8")
    return f"screenshot {shot}, console log {ARTIFACTS / (name + '.console.txt')}"


def rgb(colour: str) -> str:
    """``#rrggbb`` (or a palette colour, by its light value) as the browser reports a computed colour."""
    from footprint_lab.markup.theme import plain

    colour = plain(colour)
    red, green, blue = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgb({red}, {green}, {blue})"
