"""PostgresStore: the Store port, composed of one repository per aggregate."""

from __future__ import annotations

from engram.adapters.postgres.entities import EntityRepo
from engram.adapters.postgres.erase import EraseRepo
from engram.adapters.postgres.events import EventRepo
from engram.adapters.postgres.graph import GraphRepo
from engram.adapters.postgres.insights import InsightRepo
from engram.adapters.postgres.memories import MemoryRepo
from engram.adapters.postgres.mentions import MentionRepo
from engram.adapters.postgres.outbox import OutboxRepo
from engram.adapters.postgres.portability import PortabilityRepo
from engram.adapters.postgres.queries import QueryRepo
from engram.adapters.postgres.relationships import RelationshipRepo
from engram.adapters.postgres.retrieval import RetrievalRepo
from engram.adapters.postgres.search import SearchRepo
from engram.adapters.postgres.signals import SignalRepo
from engram.adapters.postgres.summaries import SummaryRepo
from engram.adapters.postgres.usage import UsageRepo


class PostgresStore(EventRepo, EntityRepo, MentionRepo, RelationshipRepo, MemoryRepo, OutboxRepo, QueryRepo, SearchRepo, SignalRepo, SummaryRepo,
                    InsightRepo, RetrievalRepo, GraphRepo, EraseRepo, PortabilityRepo, UsageRepo):
    """Every method takes the world id first and filters on it."""
