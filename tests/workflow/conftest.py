"""The state machines CDK synthesizes, run by moto with the real handlers in process, over the real
parts of tests/conftest.py (embedded PostgreSQL, tantivy, the hash embedder)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engram.app.compose import set_clients
from engram.local.runtime import LocalWorkflowRuntime
from engram.ports import LLM
from engram.ports.clients import Clients
from tests.workflow.executions import Executions


@pytest.fixture(scope="session")
def cdk_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One template cache for the session: the stack is synthesized once, later runtimes reuse it."""
    return tmp_path_factory.mktemp("cdk")


@pytest.fixture(scope="module")
def runtime(cdk_cache: Path) -> Iterator[LocalWorkflowRuntime]:
    with LocalWorkflowRuntime(cdk_cache, instant_retries=True) as runtime:
        yield runtime


@pytest.fixture(scope="module")
def workflow_clients(clients: Clients, runtime: LocalWorkflowRuntime) -> Iterator[Clients]:
    """The module's real parts with Step Functions (moto) as the workflows, installed for the handlers."""
    installed = dataclasses.replace(clients, workflows=runtime.workflows())
    set_clients(installed)
    yield installed
    set_clients(None)


@pytest.fixture
def install_llm(workflow_clients: Clients) -> Iterator[Callable[[LLM], None]]:
    """Swap the model the handlers see for this test only."""
    original = workflow_clients.llm

    def install(llm: LLM) -> None:
        workflow_clients.llm = llm

    yield install
    workflow_clients.llm = original


@pytest.fixture(scope="module")
def executions(runtime: LocalWorkflowRuntime) -> Executions:
    return Executions(runtime)
