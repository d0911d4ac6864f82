"""The language server collects cyclic garbage in the pauses of typing (`torchlint.lsp.idle_gc`):
real `gc`, a real event loop."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from torchlint.lsp.idle_gc import IdleCollector


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the cyclic collector frees it


@pytest.fixture
def collector_off() -> Iterator[None]:
    """No automatic collection during a test (only the collector's own), then as before."""
    was_enabled, threshold = gc.isenabled(), gc.get_threshold()
    gc.disable()
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        if was_enabled:
            gc.enable()


def _garbage() -> weakref.ref[_Node]:
    return weakref.ref(_Node())


def test_install_makes_automatic_collections_rare(collector_off: None) -> None:
    _, middle, old = gc.get_threshold()
    IdleCollector(threshold=123_456).install()
    assert gc.get_threshold() == (123_456, middle, old)


def test_garbage_is_collected_once_the_server_is_idle(collector_off: None) -> None:
    async def scenario() -> tuple[bool, bool, int]:
        collector = IdleCollector(idle_seconds=0.5)
        ref = _garbage()
        collector.activity()
        await asyncio.sleep(0.01)
        alive_while_busy = ref() is not None
        await asyncio.sleep(0.8)
        return alive_while_busy, ref() is None, collector.collections

    alive_while_busy, freed_when_idle, collections = asyncio.run(scenario())
    assert alive_while_busy
    assert freed_when_idle
    assert collections == 1


def test_a_burst_of_activity_postpones_the_collection(collector_off: None) -> None:
    async def scenario() -> tuple[list[bool], bool, int]:
        collector = IdleCollector(idle_seconds=1.0)
        ref = _garbage()
        alive = []
        for _ in range(5):  # a keystroke every 20 ms: never idle for a second
            collector.activity()
            await asyncio.sleep(0.02)
            alive.append(ref() is not None)
        await asyncio.sleep(1.3)
        return alive, ref() is None, collector.collections

    alive, freed, collections = asyncio.run(scenario())
    assert alive == [True] * 5
    assert freed
    assert collections == 1


def test_activity_outside_an_event_loop_schedules_nothing() -> None:
    collector = IdleCollector(idle_seconds=0.0)
    collector.activity()
    assert collector.collections == 0
