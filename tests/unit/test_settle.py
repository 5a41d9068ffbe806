"""A started process's objects leave the cyclic collector's sight once its clients are built."""

from __future__ import annotations

import gc
import weakref

from engram.app.compose import settle


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_settling_frees_the_garbage_then_freezes_what_the_process_holds() -> None:
    garbage = _Cycle()
    gone = weakref.ref(garbage)
    del garbage  # a cycle: only the collector frees it
    gc.unfreeze()
    try:
        settle()
        assert gone() is None  # freed, not frozen for the process's life
        assert gc.get_freeze_count() > len(gc.get_objects())  # a full collection now walks only what came after
    finally:
        gc.unfreeze()
