"""A world's model spend: tokens and requests by UTC day and stage, and the daily budget they count against."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, ConfigDict, Field

from engram.config import Stage


class StageUsage(BaseModel):
    """A world's model spend on one stage on one UTC day."""

    model_config = ConfigDict(frozen=True)

    day: date
    stage: Stage
    input_tokens: int = Field(ge=0, description="input tokens sent, cached or not")
    output_tokens: int = Field(ge=0)
    calls: int = Field(ge=0, description="requests sent (a corrective retry is a second)")

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class UsageReport(BaseModel):
    """`GET /v1/worlds/{world}/usage`: the last `days` UTC days of spend, by day and stage."""

    model_config = ConfigDict(frozen=True)

    world_id: str
    first_day: date
    today: date
    daily_tokens: int | None = Field(description="the world's daily token budget in force (its `llm_budget`, else "
                                                 "the deployment's); null: no limit")
    tokens_today: int = Field(ge=0, description="tokens in and out today, every stage: past `daily_tokens`, the "
                                                "world's stages answer from the offline engine until tomorrow")
    tokens: int = Field(ge=0, description="tokens in and out over the period")
    calls: int = Field(ge=0, description="requests over the period")
    by_stage: dict[Stage, int] = Field(default_factory=dict, description="tokens over the period by stage")
    days: list[StageUsage] = Field(default_factory=list, description="one row per day and stage that spent anything")
