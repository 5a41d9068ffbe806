"""The memory browser in headless Chromium (Debian's package, driven by Playwright): pick a world and a
user, see what engram remembers, ask a question and watch the loop trace. A screenshot is kept."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import REPO, Server

pytestmark = pytest.mark.e2e
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = REPO / "tests" / "artifacts"
WORLD = "browser"
# What this machine's closed network needs (field notes): no background connections, no sandbox as root.
# A container's small /dev/shm crashes the renderer after the page loads: --disable-dev-shm-usage uses /tmp.
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


@pytest.fixture(scope="module")
def remembered(local_server: Server) -> Server:
    events = [
        {"event_id": "br-1", "role": "user", "content": "My name is Ines and I live in Braga."},
        {"event_id": "br-2", "role": "assistant", "content": "Nice to meet you, Ines."},
        {"event_id": "br-3", "role": "user", "content": "Tomas is my brother. I work at Minho Foods."},
    ]
    body = {"events": [{**e, "user_id": "ines", "conversation_id": "b1"} for e in events]}
    assert httpx.post(f"{local_server.url}/v1/worlds/{WORLD}/events", json=body, timeout=30).status_code == 202
    deadline = time.monotonic() + 120
    status = "pending"
    while status != "enriched":
        if time.monotonic() > deadline:
            pytest.fail(f"br-3 is still {status} after 120 s; server log tail:\n{local_server.log.read_text()[-3000:]}")
        time.sleep(0.3)
        status = httpx.get(f"{local_server.url}/v1/worlds/{WORLD}/events/br-3", timeout=30).json()["enrichment_status"]
    return local_server


def test_the_browser_shows_a_users_memory_and_answers_a_question_with_its_trace(remembered: Server) -> None:
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
                _browse(page, remembered)
            except playwright_api.Error as exc:
                try:
                    status = page.locator("#status").inner_text(timeout=2000)
                except playwright_api.Error as again:
                    status = f"(unreadable: {again})"
                pytest.fail(f"{exc}\nstatus line: {status!r}\nwhat the page reported:\n" + "\n".join(seen)
                            + f"\nserver log tail:\n{remembered.log.read_text()[-3000:]}")
            assert [line for line in seen if not line.startswith("console")] == []
        finally:
            browser.close()


def _browse(page: Any, server: Server) -> None:
    page.goto(f"{server.url}/?world={WORLD}")
    page.get_by_role("button", name="ines").first.wait_for()
    page.get_by_role("button", name="ines").first.click()
    events = page.locator("#events tbody tr")
    events.first.wait_for()
    assert events.count() == 3
    assert "enriched" in page.locator("#events tbody").inner_text()
    facts = page.locator("#facts tbody").inner_text()
    assert "Braga" in facts and "lives in" in facts
    page.locator("#entities .list button", has_text="Braga").first.click()
    page.locator("#graph circle").first.wait_for()
    assert page.locator("#graph line").count() >= 1

    page.fill("#q", "Where does Ines live?")
    page.get_by_role("button", name="Ask").click()
    page.locator("#answer .content").wait_for()
    assert "Braga" in page.locator("#answer .content").inner_text()
    assert "init" in page.locator("#answer table").inner_text()
    page.screenshot(path=str(ARTIFACTS / "memory-browser.png"), full_page=True)
