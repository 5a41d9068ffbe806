"""Progress for benchmarks that run for minutes: a bar per long step and one-line notes between them.

On a terminal the bar moves (rich); in a log (stdout not a TTY) a bar is a plain line at every tenth of the
way, so a CI log shows the same progress without cursor tricks."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rich.console import Console

Advance = Callable[[int], None]


class Progress(Protocol):
    """What a benchmark reports while it works."""

    def note(self, line: str) -> None:
        """One line of news (a step finished, what it measured)."""

    def bar(self, description: str, total: int) -> AbstractContextManager[Advance]:
        """A bar of `total` steps, shown while the block runs; the block calls `advance(n)` as it goes."""


class ConsoleProgress:
    """Progress on a rich console (stdout by default; `Console(quiet=True)` for none at all)."""

    def __init__(self, console: Console | None = None, *, prefix: str = "") -> None:
        from rich.console import Console

        self.console = console or Console()
        self.prefix = prefix

    def note(self, line: str) -> None:
        self.console.print(f"{self.prefix}{line}", markup=False, highlight=False, soft_wrap=True)

    def bar(self, description: str, total: int) -> AbstractContextManager[Advance]:
        return self._bars(description, total) if self.console.is_terminal else self._lines(description, total)

    @contextmanager
    def _lines(self, description: str, total: int) -> Iterator[Advance]:
        started = time.monotonic()
        done = shown = 0

        def advance(steps: int) -> None:
            nonlocal done, shown
            done += steps
            tenths = done * 10 // max(total, 1)
            if tenths > shown:
                shown = tenths
                self.note(f"{description}: {done:,}/{total:,} ({done / max(total, 1):.0%}) "
                          f"in {time.monotonic() - started:.0f} s")

        yield advance

    @contextmanager
    def _bars(self, description: str, total: int) -> Iterator[Advance]:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as Bars

        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TaskProgressColumn(),
                   TimeElapsedColumn(), TimeRemainingColumn())
        with Bars(*columns, console=self.console) as bars:
            task = bars.add_task(f"{self.prefix}{description}", total=total)

            def advance(steps: int) -> None:
                bars.advance(task, steps)

            yield advance
