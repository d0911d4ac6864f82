"""Cyclic garbage collection while the editor is idle, not between a keystroke and its squiggles.

An analysis runs with the collector paused (`engine.gc_paused`), so everything it allocates is
young when it ends; with CPython's default threshold (700 allocations) the collections then
fall on whatever the server does next: serialising the diagnostics, reading the next keystroke.
Measured in the server on a 2,000-line file (benchmarks/README.md), 120 edits cost 281 young,
25 middle and one full collection, pauses of up to 11, 20 and 27 ms on the keystroke path.

So the server raises the young generation's threshold (automatic collections still happen,
rarely: a backstop, bounding what cycles can pile up) and collects everything once nothing has
been published for `IDLE_SECONDS`: after a burst of typing, in the pause before the next one.
"""

from __future__ import annotations

import asyncio
import gc

IDLE_SECONDS = 0.3
YOUNG_THRESHOLD = 100_000  # CPython's default is 700


class IdleCollector:
    def __init__(self, idle_seconds: float = IDLE_SECONDS, threshold: int = YOUNG_THRESHOLD):
        self.idle_seconds = idle_seconds
        self.threshold = threshold
        self.collections = 0  # made by us, for tests
        self._pending: asyncio.TimerHandle | None = None

    def install(self) -> None:
        """Make automatic collections rare (for the whole process: the server's)."""
        _, middle, old = gc.get_threshold()
        gc.set_threshold(self.threshold, middle, old)

    def activity(self) -> None:
        """Something was answered: collect once nothing else is for `idle_seconds`. Outside an
        event loop (a test calling a handler directly), nothing is scheduled."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._pending is not None:
            self._pending.cancel()
        self._pending = loop.call_later(self.idle_seconds, self._collect)

    def _collect(self) -> None:
        self._pending = None
        gc.collect()
        self.collections += 1
