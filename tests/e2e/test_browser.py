"""The memory browser in headless Chromium (Debian's package, driven by Playwright): pick a world and a
user, see what engram remembers, ask a question and watch the loop trace. A screenshot is kept."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.e2e.chromium import ARTIFACTS, drive
from tests.e2e.conftest import Server

pytestmark = pytest.mark.e2e
WORLD = "browser"


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
    drive(remembered, lambda page: _browse(page, remembered))


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
