"""A world's model spend over its last days: what `GET /v1/worlds/{world}/usage` reads."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, timedelta

from engram.model.usage import UsageReport
from engram.ports.clients import Clients

MAX_DAYS = 366


def usage_report(clients: Clients, world_id: str, days: int, *, today: date | None = None) -> UsageReport:
    """Tokens and requests by day and stage over the last `days` UTC days (today included), with the budget in
    force and today's spend against it."""
    today = today or datetime.now(UTC).date()
    first_day = today - timedelta(days=days - 1)
    rows = clients.store.usage_since(world_id, first_day)
    by_stage: Counter[str] = Counter()
    for r in rows:
        by_stage[r.stage] += r.tokens
    budget = clients.world_config(world_id).llm_budget
    return UsageReport(
        world_id=world_id, first_day=first_day, today=today,
        daily_tokens=budget if budget is not None else clients.settings.llm_daily_tokens,
        tokens_today=sum(r.tokens for r in rows if r.day == today), tokens=sum(r.tokens for r in rows),
        calls=sum(r.calls for r in rows), by_stage=dict(by_stage), days=rows)  # type: ignore[arg-type]
