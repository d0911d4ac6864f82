"""Analysing many files across processes.

`analyze_all(tasks, workers)` returns one `Outcome` per task, in the order of the tasks,
whatever order the workers finish in. With one worker (or one task) everything runs in this
process: no pool is started for a handful of files. The workers send back diagnostics and
messages only, never libcst trees (a process holding many trees pays for them on every garbage
collection; see benchmarks/README.md).

With a project layout, a task's file is analysed as part of its project: calls into other
project files are followed. Each process keeps one `Project` per layout for its whole life, so
a file that many others call into is read and parsed once per process, not once per caller; the
outcome names the files the analysis read, with their hashes, for the results cache.

A task never raises: an exception in the analysis becomes an error message of its outcome. A
worker process that dies (a crash in a C extension, the out-of-memory killer) breaks the pool;
the tasks that had not finished are then run again one by one, each in a process of its own,
so that only the file that kills its process gets an "internal error" and no run hangs.

On Linux, workers are forked from this process (the modules are already imported, so a worker
starts in milliseconds); where forking is not safe (other threads running, other systems) a
fork server or spawned processes import torchlint once per worker instead.
"""

from __future__ import annotations

import gc
import math
import os
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from torchlint.diagnostics import Diagnostic
from torchlint.notebook import analyze_file
from torchlint.project.layout import ProjectLayout
from torchlint.project_view import AnalysisProject, open_project
from torchlint.selection import RuleSelection

if TYPE_CHECKING:
    from concurrent.futures import Future
    from multiprocessing.context import BaseContext

    from torchlint.engine import Analysis

# `multiprocessing` and `concurrent.futures` are imported when a pool is needed: a run that
# checks a few files never pays for them.

# Fewer files than this are analysed in this process unless `--jobs` asks otherwise.
MIN_PARALLEL_FILES = 8
# Each worker should get at least this many files: starting one costs about as much as that.
FILES_PER_WORKER = 4


@dataclass(frozen=True)
class Task:
    filename: str
    data: bytes
    selection: RuleSelection
    # The project the file belongs to; None: analyse the file on its own (`--no-project`,
    # notebooks).
    layout: ProjectLayout | None = None


@dataclass
class Outcome:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # internal errors: exit 2
    # The decoded text, for code frames; only sent back when there is something to show.
    text: str = ""
    # The other project files the analysis read: absolute path -> content hash.
    dependencies: dict[str, str] = field(default_factory=dict)


Worker = Callable[[Task], Outcome]

# This process's projects, one per layout: what they parsed serves every later task.
_projects: dict[ProjectLayout, AnalysisProject] = {}


def project_for(
    layout: ProjectLayout | None, projects: dict[ProjectLayout, AnalysisProject] | None = None
) -> AnalysisProject | None:
    """The `Project` of `layout` in `projects` (by default, this process's), made on first use.
    A `Project` serves one analysis at a time: each process or thread needs its own."""
    if layout is None:
        return None
    registry = _projects if projects is None else projects
    found = registry.get(layout)
    if found is None:
        found = registry[layout] = open_project(layout)
    return found


def outcome_of(analysis: Analysis) -> Outcome:
    text = analysis.text if analysis.diagnostics else ""
    dependencies = {str(path): digest for path, digest in analysis.dependencies.items()}
    return Outcome(list(analysis.diagnostics), list(analysis.errors), text, dependencies)


def analyze_task(task: Task) -> Outcome:
    """Analyse one file; never raises."""
    try:
        project = project_for(task.layout)
        analysis = analyze_file(task.data, task.filename, task.selection, project=project)
    except Exception as exc:  # a bug outside the engine's own guards must cost one file
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return Outcome(errors=[f"{task.filename}: internal error: {detail}"])
    return outcome_of(analysis)


def available_cpus() -> int:
    if hasattr(os, "sched_getaffinity"):
        try:
            return max(len(os.sched_getaffinity(0)), 1)
        except OSError:  # pragma: no cover - a platform that lists it but refuses
            pass
    return os.cpu_count() or 1


def worker_count(pending: int, jobs: int | None = None, cpus: int | None = None) -> int:
    """How many processes analyse `pending` files: 1 (this process) for a handful of files,
    else `min(cpus, pending / FILES_PER_WORKER)`; `jobs` (from `--jobs`, 0 or None for
    automatic) overrides the automatic choice."""
    if pending <= 1:
        return 1
    if jobs is not None and jobs > 0:
        return min(jobs, pending)
    if pending < MIN_PARALLEL_FILES:
        return 1
    cpus = available_cpus() if cpus is None else cpus
    return max(1, min(cpus, math.ceil(pending / FILES_PER_WORKER)))


def _context() -> BaseContext:
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    if sys.platform.startswith("linux") and "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__])
        return context
    return multiprocessing.get_context("spawn")


def _worker_started() -> None:
    # What a forked worker inherited is never garbage: keep the collector off it.
    gc.freeze()


def _crash_message(task: Task, exc: BaseException) -> str:
    return (
        f"{task.filename}: internal error: the worker process analysing this file stopped "
        f"unexpectedly ({type(exc).__name__}: {exc or 'no detail'})"
    )


def _failure_message(task: Task, exc: BaseException) -> str:
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return f"{task.filename}: internal error in a worker process: {detail}"


def _run_alone(task: Task, worker: Worker, context: BaseContext) -> Outcome:
    """One task in a process of its own, so that a crash is pinned on its file."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        future = pool.submit(worker, task)
        try:
            return future.result()
        except BrokenProcessPool as exc:
            return Outcome(errors=[_crash_message(task, exc)])
        except Exception as exc:
            return Outcome(errors=[_failure_message(task, exc)])


def analyze_all(
    tasks: Sequence[Task], workers: int, worker: Worker = analyze_task
) -> list[Outcome]:
    """Run `worker` on every task, across `workers` processes when that is more than one."""
    if workers <= 1 or len(tasks) <= 1:
        return [worker(task) for task in tasks]
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    context = _context()
    outcomes: list[Outcome | None] = [None] * len(tasks)
    unfinished: list[int] = []
    pool = ProcessPoolExecutor(
        max_workers=min(workers, len(tasks)), mp_context=context, initializer=_worker_started
    )
    try:
        futures: list[Future[Outcome] | None] = []
        for task in tasks:
            try:
                futures.append(pool.submit(worker, task))
            except BrokenProcessPool:  # a worker died already: the rest is run alone
                futures.append(None)
        for index, future in enumerate(futures):
            if future is None:
                unfinished.append(index)
                continue
            try:
                outcomes[index] = future.result()
            except BrokenProcessPool:
                unfinished.append(index)
            except Exception as exc:  # the result could not be sent back, say
                outcomes[index] = Outcome(errors=[_failure_message(tasks[index], exc)])
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    for index in unfinished:
        outcomes[index] = _run_alone(tasks[index], worker, context)
    return [outcome if outcome is not None else Outcome() for outcome in outcomes]
