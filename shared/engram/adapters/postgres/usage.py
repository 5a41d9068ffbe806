"""PostgreSQL repository: the model usage ledger (tokens and requests by world, UTC day and stage)."""

from __future__ import annotations

from datetime import date

from engram.adapters.postgres.base import PostgresBase
from engram.config import Stage
from engram.model.usage import StageUsage
from engram.ports import Usage


class UsageRepo(PostgresBase):
    def record_usage(self, world_id: str, day: date, stage: Stage, usage: Usage) -> None:
        with self.tx(world_id) as cur:
            cur.execute("INSERT INTO llm_usage (world_id, day, stage, input_tokens, output_tokens, calls) "
                        "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (world_id, day, stage) DO UPDATE SET "
                        "input_tokens = llm_usage.input_tokens + EXCLUDED.input_tokens, "
                        "output_tokens = llm_usage.output_tokens + EXCLUDED.output_tokens, "
                        "calls = llm_usage.calls + EXCLUDED.calls",
                        (world_id, day, stage, usage.sent_tokens, usage.output_tokens, usage.calls))

    def tokens_used(self, world_id: str, day: date) -> int:
        with self.tx(world_id) as cur:
            cur.execute("SELECT coalesce(sum(input_tokens + output_tokens), 0) AS tokens FROM llm_usage "
                        "WHERE world_id = %s AND day = %s", (world_id, day))
            row = cur.fetchone()
            return int(row["tokens"]) if row else 0

    def usage_since(self, world_id: str, first_day: date) -> list[StageUsage]:
        with self.tx(world_id) as cur:
            cur.execute("SELECT day, stage, input_tokens, output_tokens, calls FROM llm_usage "
                        "WHERE world_id = %s AND day >= %s ORDER BY day, stage", (world_id, first_day))
            return [StageUsage.model_validate(r) for r in cur.fetchall()]
