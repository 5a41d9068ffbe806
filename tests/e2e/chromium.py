"""Headless Chromium (Debian's package, driven by Playwright) for the memory browser's tests: a page that reports
what went wrong (the page's own errors, the status line, the server log) instead of a bare timeout."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import REPO, Server

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = REPO / "tests" / "artifacts"
# What this machine's closed network needs (field notes): no background connections, no sandbox as root.
# A container's small /dev/shm crashes the renderer after the page loads: --disable-dev-shm-usage uses /tmp.
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


def drive(server: Server, steps: Callable[[Any], None]) -> None:
    """Run `steps(page)` in a fresh page; skip without Playwright or Chromium; fail with what the page reported.
    The page must raise no error of its own (console messages are only reported)."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (make setup installs it when run as root)")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(90_000)  # a loaded 2-core machine: waits are for content, not for speed
            seen: list[str] = []
            page.on("pageerror", lambda exc: seen.append(f"page error: {exc}"))
            page.on("console", lambda msg: seen.append(f"console {msg.type}: {msg.text}"))
            page.on("requestfailed", lambda req: seen.append(f"request failed: {req.url} {req.failure}"))
            page.on("crash", lambda _: seen.append("the renderer crashed"))
            try:
                steps(page)
            except playwright_api.Error as exc:
                try:
                    status = page.locator("#status").inner_text(timeout=2000)
                except playwright_api.Error as again:
                    status = f"(unreadable: {again})"
                pytest.fail(f"{exc}\nstatus line: {status!r}\nwhat the page reported:\n" + "\n".join(seen)
                            + f"\nserver log tail:\n{server.log.read_text()[-3000:]}")
            assert [line for line in seen if not line.startswith("console")] == []
        finally:
            browser.close()
