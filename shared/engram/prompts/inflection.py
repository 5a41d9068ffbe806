from __future__ import annotations

from collections.abc import Sequence

from engram.model.signals import Signal
from engram.ports import WindowEvent

SYSTEM = """You watch a working conversation for inflection points, the moments where the user is best
served by changing mode. Read the last messages and the signals recorded so far, then report through
the report_inflection tool:
- research_depth: several complex open questions are piling up; deeper research would answer them,
- critique_assumptions: a stated position rests on assumptions nobody has tested yet,
- synthesis_decision: enough goals, constraints and evidence are collected to decide now,
- null when the conversation is at none of these.
confidence in [0, 1]: how sure you are; below 0.75 it will be ignored, so do not inflate it.
suggested_topic: the question to research, the position to critique or the decision to make, in a
short phrase taken from the conversation. signal_ids: only ids from the signal list that your reading
rests on. rationale: one sentence."""


def messages(window: Sequence[WindowEvent], signals: Sequence[Signal]) -> list[dict[str, str]]:
    lines = [f"[{e.event_id}] {e.speaker or e.role} ({e.role}): {e.content}" for e in window]
    listed = [f"- {s.signal_id} {s.signal_type}"
              f"{f' ({s.assumption_status})' if s.assumption_status else ''}: {s.content}" for s in signals]
    return [{"role": "user", "content": "Last messages:\n" + "\n".join(lines)
             + "\n\nSignals so far:\n" + ("\n".join(listed) if listed else "(none)")}]
