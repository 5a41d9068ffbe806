"""What a turn replies to, as the search reads it from the turns around its best events: the turn just before it,
said by someone else, its end up to the question it asks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engram.model.search import IndexDocument
from engram.retrieval.replies import previous_turns, replied_end

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


@pytest.mark.parametrize(("turn", "end"), [
    ("Melanie: Wow, that agency looks great! What made you pick it?",
     "Melanie: Wow, that agency looks great! What made you pick it?"),
    ("Caroline: Wow, sounds wonderful! Your love for your kids is so awesome. What concert was it? The advocacy event "
     "was a cool experience - so much love and support, amazing!",
     "Caroline: Wow, sounds wonderful! Your love for your kids is so awesome. What concert was it?"),
    ("Melanie: Here's our latest work from last weekend. Do you paint too? [image: a photo of a sunset painting]",
     "Melanie: Here's our latest work from last weekend. Do you paint too?"),
    ("I went to the support group yesterday and it was so powerful, everyone shared their stories and I felt heard "
     "for once in my life, truly", "…so powerful, everyone shared their stories and I felt heard for once in my life, truly"),
])
def test_a_reply_carries_the_end_of_the_turn_before_it_up_to_its_question(turn: str, end: str) -> None:
    assert replied_end(turn) == end
    assert len(replied_end(turn)) <= len("Caroline: ") + 91


def _turn(event_id: str, speaker: str, minute: int) -> IndexDocument:
    return IndexDocument(world_id="w", doc_id=event_id, kind="event", text=f"{speaker}: turn {event_id}",
                         user_id=speaker.lower(), speaker=speaker, occurred_at=T0 + timedelta(minutes=minute))


def test_the_turn_replied_to_is_the_one_just_before_said_by_someone_else_on_either_side_of_a_best_event() -> None:
    docs = {d.doc_id: d for d in [_turn("D1:1", "Caroline", 0), _turn("D1:2", "Melanie", 1),
                                  _turn("D1:3", "Melanie", 2), _turn("D1:4", "Caroline", 3)]}
    # D1:2 is a best event: its neighbours D1:1 (before) and D1:3 (after, the same speaker); D1:4 one of D1:3.
    before = previous_turns(["D1:2", "D1:3", "D1:4", "D1:1"], {"D1:2": ["D1:1", "D1:3"], "D1:4": ["D1:3"]}, docs)

    assert {e: d.doc_id for e, d in before.items()} == {"D1:2": "D1:1", "D1:4": "D1:3"}
