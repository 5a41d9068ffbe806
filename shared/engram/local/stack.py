"""The embedded stack: PostgreSQL, tantivy, the embedder and model, and the state machines under moto,
wired into the process-wide clients so the handlers run exactly as they would on Lambda."""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from engram.config import Settings
from engram.ingest import resume_interrupted
from engram.model.events import IngestRequest, IngestResponse, SweepResult
from engram.service import Clients, build_clients, set_clients

REPO_ROOT = Path(__file__).resolve().parents[3]
DEMO_FILE = REPO_ROOT / "events" / "conversations" / "demo.json"


class LocalStack:
    """Context manager: enter to start everything, exit to stop it cleanly."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.runtime: Any = None
        self.clients: Clients | None = None
        self.timings: dict[str, float] = {}
        self.resumed: SweepResult | None = None  # the enrichments restarted at start

    def __enter__(self) -> LocalStack:
        from engram.local.cdk_template import profile_imitated
        from engram.local.runtime import LocalWorkflowRuntime

        self.settings.data_dir.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        self.runtime = LocalWorkflowRuntime(cache_dir=self.settings.data_dir / "cdk",
                                            profile=profile_imitated(self.settings.resolved_keyword_index()))
        self.runtime.__enter__()
        t1 = time.perf_counter()
        self.clients = build_clients(self.settings, workflows=self.runtime.workflows())
        set_clients(self.clients)
        # The executions of a process before this one lived in its memory and died with it (Ctrl-C during a
        # burst, a crash, SIGKILL): their events are still pending or enriching, and start again here.
        self.resumed = resume_interrupted(self.clients)
        t2 = time.perf_counter()
        self.timings = {"workflows_s": round(t1 - t0, 2), "clients_s": round(t2 - t1, 2)}
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        set_clients(None)
        if self.clients is not None:
            close = getattr(self.clients.store, "close", None)
            if close:
                close()
            close_index = getattr(self.clients.index, "close", None)
            if close_index:
                close_index()
        if self.runtime is not None:
            self.runtime.__exit__(exc_type, exc, tb)

    def load_sample(self, path: Path = DEMO_FILE) -> IngestResponse | None:
        """Ingest a sample file ({"world_id", "events"}); explicit event ids make this a no-op the
        second time (every event is a duplicate and starts no enrichment)."""
        from engram.ingest import ingest_events

        if not path.exists() or self.clients is None:
            return None
        doc = json.loads(path.read_text(encoding="utf-8"))
        request = IngestRequest.model_validate({"events": doc["events"]})
        return ingest_events(self.clients, doc["world_id"], request)
