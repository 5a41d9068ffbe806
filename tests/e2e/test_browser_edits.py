"""Editing memory from the browser, in headless Chromium: settle a conflict (both statements shown, never ids) and
a disambiguation, correct a fact and delete one, each checked through the API afterwards; an API error shows on the
page; an unknown world says so and leaves nothing of the previous world on screen."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx
import pytest

from tests.e2e.chromium import ARTIFACTS, drive
from tests.e2e.conftest import Server

pytestmark = pytest.mark.e2e
WORLD = "browser-edits"


def _say(server: Server, *events: tuple[str, str, str]) -> None:
    """(event id, content, occurred_at) for user ana, enriched before this returns."""
    body = {"events": [{"event_id": i, "user_id": "ana", "conversation_id": "edits", "role": "user", "content": c,
                        "occurred_at": at} for i, c, at in events]}
    reply = httpx.post(f"{server.url}/v1/worlds/{WORLD}/events", params={"wait": "true", "wait_timeout_s": 25},
                       json=body, timeout=60)
    assert reply.status_code in (200, 202), reply.text
    deadline = time.monotonic() + 120
    for event_id, _, _ in events:  # a loaded machine may need longer than the wait
        while (status := httpx.get(f"{server.url}/v1/worlds/{WORLD}/events/{event_id}", timeout=30
                                   ).json()["enrichment_status"]) != "enriched":
            if time.monotonic() > deadline:
                pytest.fail(f"{event_id} is still {status}; server log tail:\n{server.log.read_text()[-3000:]}")
            time.sleep(0.3)


@pytest.fixture(scope="module")
def seeded(local_server: Server) -> Server:
    # Two people of near names first, so a third spelling between them waits for the user; two employers three
    # days apart with nothing to decide between them: an open conflict.
    _say(local_server, ("ed-1", "I work at Acme.", "2026-03-01T09:00:00Z"),
         ("ed-2", "Mario Pereira is my manager.", "2026-03-01T09:01:00Z"),
         ("ed-3", "Mariana Pereira is my dentist.", "2026-03-01T09:02:00Z"),
         ("ed-4", "I live in Braga.", "2026-03-01T09:03:00Z"))
    _say(local_server, ("ed-5", "I work at Globex.", "2026-03-04T09:00:00Z"),
         ("ed-6", "We met at the office. Maria Pereira sent the report. It was long.", "2026-03-04T09:01:00Z"))
    return local_server


def _api(server: Server, path: str, **params: Any) -> Any:
    reply = httpx.get(f"{server.url}/v1/worlds/{WORLD}{path}", params=params, timeout=30)
    assert reply.status_code == 200, reply.text
    return reply.json()


def _facts(server: Server) -> dict[str, dict[str, Any]]:
    return {f["object_value"]: f for f in _api(server, "/users/ana/memories", layer="semantic", limit=100)}


def test_the_browser_settles_conflicts_and_disambiguations_corrects_and_deletes_facts(seeded: Server) -> None:
    [conflict] = _api(seeded, "/conflicts", status="open")
    assert {conflict["memory"]["object_value"], conflict["conflicting_memory"]["object_value"]} == {"Acme", "Globex"}
    [waiting] = _api(seeded, "/disambiguations", user_id="ana")
    assert waiting["text"] == "Maria Pereira"
    drive(seeded, lambda page: _edit(page, seeded, conflict, waiting))


def _edit(page: Any, server: Server, conflict: dict[str, Any], waiting: dict[str, Any]) -> None:
    page.on("dialog", lambda dialog: dialog.accept())  # the delete's "are you sure?"
    page.goto(f"{server.url}/?world={WORLD}")
    item = page.locator(f"#conflicts li[data-conflict='{conflict['conflict_id']}']")
    item.wait_for()
    shown = item.inner_text()
    assert "ana works at Acme" in shown and "ana works at Globex" in shown and "0.90" in shown
    assert not re.search(r"\b(sem|cfl)_[0-9a-f]", shown)  # statements, never ids

    # The conflict: keep Globex; the API reports it resolved by the user with Globex the winner.
    globex = _facts(server)["Globex"]["memory_id"]
    item.locator(f".side[data-memory='{globex}'] button").click()
    item.locator(".badge.resolved").wait_for()
    [settled] = [c for c in _api(server, "/conflicts") if c["conflict_id"] == conflict["conflict_id"]]
    assert (settled["status"], settled["resolved_by"], settled["winner_memory_id"]) == ("resolved", "user", globex)
    assert item.locator("button").count() == 0  # the user's answer is final: nothing left to press

    # The disambiguation: the mention in its sentence, the candidates; Mario Pereira is meant.
    mention = page.locator(f"#disambiguations li[data-mention='{waiting['mention_id']}']")
    assert "Maria Pereira sent the report." in mention.locator(".sentence").inner_text()
    assert "We met" not in mention.inner_text()
    mention.get_by_role("button", name="Mario Pereira").click()
    mention.wait_for(state="detached")
    page.locator("#disambiguations li", has_text="none waiting").wait_for()
    assert _api(server, "/disambiguations", user_id="ana") == []
    [mario] = [c for c in waiting["candidates"] if c["name"] == "Mario Pereira"]
    aliases = _api(server, f"/entities/{mario['entity_id']}")["alias_details"]
    assert ("Maria Pereira", "ana") in {(a["alias"], a["user_id"]) for a in aliases}

    # A correction the API refuses shows its reason on the page, the editor stays; then a good one is saved.
    braga = _facts(server)["Braga"]
    page.locator(f"#facts tr[data-memory='{braga['memory_id']}']").get_by_role("button", name="correct").click()
    editor = page.locator(f"#facts tr.editing[data-memory='{braga['memory_id']}']")
    editor.locator("input[name=object_value]").fill("Porto")
    editor.locator("input[name=confidence]").fill("0.7")
    editor.locator("input[name=valid_to]").fill("2026-02-01T00:00")  # before it began: refused
    editor.get_by_role("button", name="save").click()
    refusal = page.locator("#facts-problem")
    refusal.wait_for()
    assert "422" in refusal.inner_text() and "valid_to must not be before valid_from" in refusal.inner_text()
    assert _facts(server)["Braga"]["object_value"] == "Braga"
    editor.locator("input[name=valid_to]").fill("")
    editor.get_by_role("button", name="save").click()
    page.locator("#facts tbody tr", has_text="Porto").wait_for()
    assert refusal.is_hidden()
    corrected = {f["memory_id"]: f for f in _facts(server).values()}[braga["memory_id"]]
    assert (corrected["object_value"], corrected["confidence"]) == ("Porto", pytest.approx(0.7))

    # Delete the losing employer: gone from the page and the API, its audit kept.
    acme = _facts(server)["Acme"]["memory_id"]
    page.locator(f"#facts tr[data-memory='{acme}']").get_by_role("button", name="delete").click()
    page.locator(f"#facts tr[data-memory='{acme}']").wait_for(state="detached")
    assert "Acme" not in _facts(server)
    assert [a["action"] for a in _api(server, f"/memories/{acme}/audit")] == ["delete"]
    page.screenshot(path=str(ARTIFACTS / "memory-browser-edits.png"), full_page=True)

    # A mistyped world: said so, and nothing of the previous world stays on screen.
    page.fill("#world", "browser-edit")
    page.get_by_role("button", name="Open").click()
    page.locator("#status", has_text='no world named "browser-edit"').wait_for()
    assert page.locator("#facts").is_hidden() and page.locator("#users li").count() == 0
    assert "Porto" not in page.locator("main").inner_text() and "Mario Pereira" not in page.locator("main").inner_text()
    assert "world=browser-edit" in page.url
    page.goto(f"{server.url}/?world=no%20such%20world")  # a link to a world that cannot exist: said so too
    page.locator("#status", has_text='no world named "no such world"').wait_for()
    assert page.locator("#users li").count() == 0
    # The picker lists the worlds that exist and opens one.
    page.select_option("#worlds", WORLD)
    page.locator("#facts tbody tr", has_text="Porto").wait_for()
    assert page.locator("#status").inner_text().startswith("1 users")
