"""The child process of `torchlint run`: runs the user's script under `Capture` and reports.

Started only by `torchlint.runtime.launcher` as
``python -m torchlint.runtime.child --check overfit --steps N --events-fd FD --script PATH --
ARGS...``. Progress and the final envelope go to the events file descriptor as JSON lines, so
nothing the script prints can be mistaken for them. The process ends with `os._exit`, so
leftover non-daemon threads or `atexit` handlers of the script cannot keep it alive.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import errno
import faulthandler
import json
import os
import runpy
import signal
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, TextIO

from torchlint.runtime.checks import CHECK_ENVIRONMENT, CHECKS


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m torchlint.runtime.child")
    parser.add_argument("--check", choices=tuple(CHECKS), required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--options", type=json.loads, default={})
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--events-fd", type=int)
    where.add_argument("--events-file", help="a path; {rank} is replaced by the RANK variable")
    parser.add_argument("--timeout", type=float, required=True)
    parser.add_argument("--hang-dump", default=None)
    parser.add_argument("--dump-after", type=float, default=None)
    parser.add_argument("--script", required=True)
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.script_args and args.script_args[0] == "--":
        args.script_args = args.script_args[1:]
    return args


_OOM_MESSAGES = ("out of memory", "can't allocate memory", "cannot allocate memory")


def is_out_of_memory(exc: BaseException) -> bool:
    """MemoryError, torch.OutOfMemoryError (CUDA), or the CPU allocator's RuntimeError."""
    if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and any(m in text for m in _OOM_MESSAGES)


def defines_setup(script: Path) -> bool:
    """Whether the script defines a module-level `torchlint_setup()` (read, never run)."""
    try:
        tree = ast.parse(script.read_bytes(), filename=str(script))
    except (SyntaxError, ValueError, OSError):
        return False
    return any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "torchlint_setup"
        for node in tree.body
    )


class Events:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, event: dict[str, Any]) -> None:
        try:
            self.stream.write(json.dumps(event, allow_nan=False) + "\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass  # the parent went away; the run ends anyway


#: when the child started, before torch was imported
CHILD_STARTED = time.monotonic()


def main(argv: list[str] | None = None) -> None:
    args = _parse(sys.argv[1:] if argv is None else argv)
    if args.events_file is not None:  # one file per rank under torchrun
        path = args.events_file.replace("{rank}", os.environ.get("RANK", "0"))
        events = Events(open(path, "w", encoding="utf-8"))  # noqa: SIM115 (kept until exit)
    else:
        events = Events(os.fdopen(args.events_fd, "w", encoding="utf-8"))
    code = 0
    try:
        _run(args, events)
    except BaseException as exc:  # our own failure: report it, never a bare traceback
        from torchlint.runtime.envelope import envelope, error_info

        detail = "".join(traceback.format_exception(exc)).splitlines()[-12:]
        result = envelope(args.check, "error", None, f"torchlint internal error: {exc!r}", None, {})
        result["error"] = error_info("internal", repr(exc), None, None, detail)
        result["script"] = args.script
        result["argv"] = list(args.script_args)
        events({"event": "result", "envelope": result})
        code = 3
    for stream in (sys.stdout, sys.stderr, events.stream):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def watch_parent(interval: float = 0.5) -> None:
    """End this process group when the launcher dies (a killed language server or terminal):
    nothing else would enforce the time limit then."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(interval)
            if os.getppid() != parent:
                with contextlib.suppress(OSError):
                    os.killpg(os.getpgrp(), signal.SIGKILL)
                os._exit(1)

    threading.Thread(target=watch, name="torchlint-parent-watch", daemon=True).start()


def _isolation_problem() -> str | None:
    """Why the run's file writes are not isolated in this process (None: they are). The
    launcher's `boot/sitecustomize.py` installs the redirection at start-up; a Python started
    with -S or -I skips it, and then it is installed here."""
    from torchlint.runtime.sandbox.install import active, install_from_environment

    failed = os.environ.get("TORCHLINT_ISOLATION_FAILED")
    not_run = "the script was not run"
    if failed:
        return f"torchlint could not isolate the run's file writes ({failed}); {not_run}"
    try:
        if active() is None and install_from_environment() is None:
            return (
                "torchlint's child process was started without its file isolation "
                "(TORCHLINT_REDIRECT); the script was not run"
            )
    except Exception as exc:
        return f"torchlint could not isolate the run's file writes ({exc!r}); {not_run}"
    return None


def _run(args: argparse.Namespace, events: Events) -> None:
    watch_parent()
    script = Path(args.script).resolve()
    if args.hang_dump and args.dump_after:
        rank = os.environ.get("RANK", "0")
        dump = open(args.hang_dump.replace("{rank}", rank), "w", encoding="utf-8")  # noqa: SIM115 (kept until exit)
        faulthandler.dump_traceback_later(args.dump_after, repeat=False, file=dump)
    started = time.monotonic()
    os.environ.update(CHECK_ENVIRONMENT)
    sys.argv = [str(script), *args.script_args]
    sys.path[0] = str(script.parent)
    isolation = {
        "process": "child",
        "timeout_s": args.timeout,
        "working_directory": os.getcwd(),
        "environment": dict(CHECK_ENVIRONMENT),
    }
    problem = _isolation_problem()
    if problem is not None:  # fail closed: the script never runs without its files isolated
        from torchlint.runtime.envelope import envelope, error_info

        result = envelope(args.check, "error", None, problem, None, {})
        result["error"] = error_info("setup", problem)
        result.update(script=str(script), argv=list(args.script_args), isolation=isolation)
        events({"event": "result", "envelope": result})
        return
    try:
        import torch  # noqa: F401
    except ImportError as exc:
        from torchlint.runtime.envelope import envelope, error_info

        result = envelope(
            args.check,
            "error",
            None,
            f"PyTorch cannot be imported by {sys.executable}: {exc}",
            None,
            {},
        )
        result["error"] = error_info("setup", str(exc))
        result.update(script=str(script), argv=list(args.script_args), isolation=isolation)
        events({"event": "result", "envelope": result})
        return

    if CHECKS[args.check].accepts_setup and defines_setup(script):
        # the factory gives a model, a loader and a loss: enough for these two; profile, fit
        # and lr-find are about the script's own loop, so they run it
        from torchlint.runtime.child.setup_factory import run_setup

        result = run_setup(args.check, script, args.steps, events)
    else:
        result = _run_script(args, script, events, isolation)
    result["duration_s"] = round(time.monotonic() - started, 3)
    result["script"] = str(script)
    result["argv"] = list(args.script_args)
    if result.get("isolation") is None:
        result["isolation"] = isolation
    events({"event": "result", "envelope": result})


def _run_script(
    args: argparse.Namespace, script: Path, events: Events, isolation: dict[str, Any]
) -> dict[str, Any]:

    from torchlint.runtime.child.assemble import Outcome, build_envelope
    from torchlint.runtime.child.capture import Capture
    from torchlint.runtime.child.captured import StopRun

    # the hang guard's clock: --timeout runs from the child's start (torch's import included)
    options = {**args.options, "timeout": args.timeout, "started": CHILD_STARTED}
    capture = Capture(args.check, args.steps, script.parent, events, options)
    started = time.monotonic()
    capture.install()
    outcome: Outcome
    try:
        runpy.run_path(str(script), run_name="__main__")
        outcome = Outcome("finished")
    except StopRun as stop:
        outcome = Outcome("stopped", reason=stop.reason)
    except SystemExit as exc:
        code = exc.code
        exit_code = code if isinstance(code, int) else (0 if code is None else 1)
        message = "" if isinstance(code, int) or code is None else str(code)
        outcome = Outcome(
            "exit",
            exit_code=exit_code,
            message=message,
            site=capture.finder.find_in_traceback(exc.__traceback__),
        )
    except BaseException as exc:
        from torchlint.runtime.child.blame import script_traceback, torchlint_fault

        shown = script_traceback(exc)
        sys.stderr.write(shown)  # to the script's stderr, as Python itself would
        from torchlint.runtime.child.loss_checks import labels_from_crash

        labels = labels_from_crash(capture, exc)
        if labels is not None:  # what the loss spy would have said, had it been watching
            capture._add_once(labels)
            capture.stopped_in_first_step()

        oom = is_out_of_memory(exc)
        tail = shown.splitlines()[-20:]
        message = f"{type(exc).__name__}: {exc}".strip()[:2000]
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            message += (
                " (the run writes into its scratch folder "
                f"{os.path.dirname(os.environ.get('TMPDIR') or '.')}: set TMPDIR to a folder "
                "on a larger disk before starting torchlint)"
            )
        outcome = (
            Outcome(
                "stopped",
                reason="label_out_of_range",
            )
            if labels is not None
            else Outcome(
                "crash",
                message=message,
                site=capture.finder.find_in_traceback(exc.__traceback__),
                oom=oom,
                traceback_tail=tail,
                torchlint_fault=torchlint_fault(exc),
            )
        )
    finally:
        capture.uninstall()
    return build_envelope(
        capture,
        outcome,
        script=str(script),
        argv=list(args.script_args),
        duration_s=time.monotonic() - started,
        isolation=isolation,
    )


if __name__ == "__main__":
    main()
