"""The CPU clock of the thread that trains, which a busy machine does not stretch."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


def thread_cpu_clock() -> Callable[[], float]:
    """The CPU clock of the calling thread, readable from any thread (the step hooks of a
    framework may run elsewhere); the process's CPU time where threads have no clock."""
    getter = getattr(time, "pthread_getcpuclockid", None)
    if getter is not None:
        try:
            clock = getter(threading.get_ident())
            time.clock_gettime(clock)
        except (OSError, OverflowError):
            pass
        else:
            return lambda: time.clock_gettime(clock)
    return time.process_time
