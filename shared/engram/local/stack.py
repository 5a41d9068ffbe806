"""The embedded stack: PostgreSQL, tantivy, the embedder and model, and the state machines under moto,
wired into the process-wide clients so the handlers run exactly as they would on Lambda."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta
from pathlib import Path
from types import TracebackType
from typing import Any

from engram.app.compose import build_clients, set_clients
from engram.config import Settings
from engram.enrichment.ingest import resume_interrupted, sweep_orphaned
from engram.model.common import utcnow
from engram.model.events import IngestRequest, IngestResponse, SweepResult
from engram.ports.clients import Clients

REPO_ROOT = Path(__file__).resolve().parents[3]
DEMO_FILE = REPO_ROOT / "events" / "conversations" / "demo.json"
SWEEP_EVERY_S = 30.0  # how often the local stack looks for enrichments left behind (see sweep_orphaned)


class LocalStack:
    """Context manager: enter to start everything, exit to stop it cleanly."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.runtime: Any = None
        self.clients: Clients | None = None
        self.timings: dict[str, float] = {}
        self.resumed: SweepResult | None = None  # the enrichments restarted at start
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None

    def __enter__(self) -> LocalStack:
        from engram.local.cdk_template import profile_imitated
        from engram.local.runtime import LocalWorkflowRuntime

        self.settings.data_dir.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        self.runtime = LocalWorkflowRuntime(cache_dir=self.settings.data_dir / "cdk",
                                            profile=profile_imitated(self.settings.resolved_keyword_index()),
                                            concurrency=self.settings.local_concurrency)
        self.runtime.__enter__()
        t1 = time.perf_counter()
        self.clients = build_clients(self.settings, workflows=self.runtime.workflows())
        set_clients(self.clients)
        # The executions of a process before this one lived in its memory and died with it (Ctrl-C during a
        # burst, a crash, SIGKILL): their events are still pending or enriching, and start again here.
        self.resumed = resume_interrupted(self.clients)
        self._sweeper = threading.Thread(target=self._sweep_while_idle, name="engram-sweeper", daemon=True)
        self._sweeper.start()
        t2 = time.perf_counter()
        self.timings = {"workflows_s": round(t1 - t0, 2), "clients_s": round(t2 - t1, 2)}
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._sweeper is not None:
            self._sweeper.join()
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

    def _sweep_while_idle(self) -> None:
        """What the schedule's sweep does on AWS, for the local stack: while no enrichment runs, restart the
        events a burst left throttled or an execution left behind."""
        from engram.observability import logger

        while not self._stop.wait(SWEEP_EVERY_S):
            try:
                if self.clients is None or self.runtime.running("engram-enrichment"):
                    continue
                swept = sweep_orphaned(self.clients, received_before=utcnow() - timedelta(seconds=SWEEP_EVERY_S))
                if swept.events:
                    logger.info("enrichment restarted for events left behind", extra={"events": swept.events})
            except Exception:  # the next round tries again; the events stay stored whatever happens here
                logger.exception("the local sweep failed")

    def load_sample(self, path: Path = DEMO_FILE) -> IngestResponse | None:
        """Ingest a sample file ({"world_id", "events"}); explicit event ids make this a no-op the
        second time (every event is a duplicate and starts no enrichment)."""
        from engram.enrichment.ingest import ingest_events

        if not path.exists() or self.clients is None:
            return None
        doc = json.loads(path.read_text(encoding="utf-8"))
        request = IngestRequest.model_validate({"events": doc["events"]})
        return ingest_events(self.clients, self.clients.world(doc["world_id"]), request)
