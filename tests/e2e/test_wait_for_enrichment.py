"""Remember, then ask at once: with `wait` the events route answers once their enrichment has finished, so the
question asked next reads them (the HTTP API, the Python client, `engram ingest --wait` and the README's curls)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import httpx
import pytest

from engram.sdk.client import EngramClient
from tests.e2e.conftest import REPO, Server

pytestmark = pytest.mark.e2e

WORLD = "wait"


def _said(user: str, content: str) -> dict[str, Any]:
    return {"events": [{"user_id": user, "conversation_id": "c1", "role": "user", "content": content}]}


def _ask(server: Server, world: str, user: str, question: str) -> str:
    reply = httpx.post(f"{server.url}/v1/worlds/{world}/queries", json={"user_id": user, "question": question},
                       timeout=120)
    assert reply.status_code == 200, reply.text
    return str(reply.json()["answer"]["content"])


def test_with_wait_the_events_route_answers_200_once_enriched_and_the_next_question_reads_them(
        local_server: Server) -> None:
    stored = httpx.post(f"{local_server.url}/v1/worlds/{WORLD}/events?wait=true",
                        json=_said("bea", "My name is Bea and I live in Braga."), timeout=60)
    assert stored.status_code == 200, stored.text
    assert stored.json()["enrichment_status"] == "enriched"
    assert [e["enrichment_status"] for e in stored.json()["events"]] == ["enriched"]
    assert "Braga" in _ask(local_server, WORLD, "bea", "Where does Bea live?")


def test_a_wait_that_times_out_answers_202_while_enrichment_goes_on(local_server: Server) -> None:
    stored = httpx.post(f"{local_server.url}/v1/worlds/{WORLD}/events",
                        params={"wait": "true", "wait_timeout_s": 0.001},
                        json=_said("caio", "My name is Caio and I live in Coimbra."), timeout=60)
    assert stored.status_code == 202, stored.text
    assert stored.json()["enrichment_status"] in ("pending", "enriching")
    assert stored.json()["accepted"] == 1


def test_a_replayed_batch_with_wait_answers_at_once_with_its_enrichment(local_server: Server) -> None:
    event = {"event_id": "wait-replay", "user_id": "dora", "conversation_id": "c1", "role": "user",
             "content": "I prefer green tea."}
    first = httpx.post(f"{local_server.url}/v1/worlds/{WORLD}/events?wait=true", json={"events": [event]}, timeout=60)
    again = httpx.post(f"{local_server.url}/v1/worlds/{WORLD}/events?wait=true", json={"events": [event]}, timeout=60)
    assert first.status_code == again.status_code == 200
    assert (again.json()["duplicates"], again.json()["enrichment_status"]) == (1, "enriched")
    assert again.elapsed.total_seconds() < 2


@pytest.mark.parametrize("query", ["wait=maybe", "wait=true&wait_timeout_s=26", "wait=true&wait_timeout_s=0",
                                   "wait=true&wait_timeout_s=soon", "wait=true&wait_timeout_s=nan"])
def test_bad_wait_parameters_answer_422_and_store_nothing(local_server: Server, query: str) -> None:
    event = {"event_id": f"wait-bad-{abs(hash(query))}", "user_id": "eva", "conversation_id": "c1",
             "role": "user", "content": "I live in Evora."}
    reply = httpx.post(f"{local_server.url}/v1/worlds/{WORLD}/events?{query}", json={"events": [event]}, timeout=30)
    assert reply.status_code == 422, reply.text
    assert reply.json()["error"]["code"]
    assert httpx.get(f"{local_server.url}/v1/worlds/{WORLD}/events/{event['event_id']}").status_code == 404


def test_the_client_with_wait_true_is_answered_from_what_it_just_added(local_server: Server) -> None:
    with EngramClient(local_server.url) as engram:
        added = engram.add_events(WORLD, _said("fabio", "My name is Fabio and I live in Faro.")["events"], wait=True)
        assert added.enrichment_status == "enriched"
        reply = engram.ask(WORLD, "fabio", "Where does Fabio live?")
    assert reply.answer is not None and "Faro" in reply.answer.content


def test_engram_ingest_wait_reports_the_enrichment_and_the_next_question_reads_it(local_server: Server,
                                                                                  tmp_path: Path) -> None:
    events = tmp_path / "events.json"
    events.write_text(json.dumps(_said("gil", "My name is Gil and I live in Guarda.")), encoding="utf-8")
    done = local_server.cli("ingest", str(events), "--world", WORLD, "--wait")
    assert done.returncode == 0, done.stderr
    assert "1 events accepted" in done.stdout and "enrichment: 1 enriched" in done.stdout
    asked = local_server.cli("ask", "Where does Gil live?", "--world", WORLD, "--user", "gil")
    assert asked.returncode == 0, asked.stderr
    assert "Guarda" in asked.stdout


def _readme_try_it() -> list[list[str]]:
    """The commands of the README's "Try it" block, each split as the shell would."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Try it\n\n```bash\n(.*?)```", readme, re.S)
    assert block is not None, "the README has no `Try it` block"
    commands, pending = [], ""
    for line in block.group(1).replace("\\\n", " ").splitlines():
        pending += line + "\n"
        try:
            commands.append(shlex.split(pending))
            pending = ""
        except ValueError:  # a quoted argument goes on to the next line
            continue
    return [c for c in commands if c]


def test_the_readmes_try_it_commands_run_back_to_back_answer_from_what_was_just_said(local_server: Server) -> None:
    answers = []
    for command in _readme_try_it():
        if command[0] == "curl":
            url = next(a for a in command if "localhost:8000" in a).replace("localhost:8000", local_server.url)
            body = json.loads(command[command.index("-d") + 1])
            reply = httpx.post(url, json=body, timeout=120)
            assert reply.status_code == 200, reply.text  # waited for, then answered
            answers.append(reply.json().get("answer", {}).get("content", ""))
        else:
            assert command[0].endswith("engram"), command
            done = local_server.cli(*command[1:])
            assert done.returncode == 0, done.stderr
            answers.append(done.stdout)
    assert len(answers) == 3
    assert all("Porto" in a for a in answers[1:]), answers
