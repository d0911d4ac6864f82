"""The parent side of `torchlint run`: starts the child, watches it, and always returns an
envelope, whatever the user's script does.

The script runs in its own process group (so DataLoader workers and anything else it forks are
killed with it), with a wall-clock limit. Progress and the result arrive as JSON lines on a
dedicated pipe; the script's own stdout and stderr are read into bounded buffers (a script that
prints megabytes cannot block or exhaust us), and their last lines go into error reports. Just
before the limit, the child's `faulthandler` writes every thread's stack to a file, so a hang is
reported with the line the script was stuck on. Needs no torch in this process.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from torchlint.runtime.checks import CHECK_ENVIRONMENT, CHECKS
from torchlint.runtime.confirm import confirm_envelope
from torchlint.runtime.envelope import envelope, error_info, plain_text
from torchlint.runtime.sandbox.namespace import UNAVAILABLE_EXIT
from torchlint.runtime.sandbox.scratch import RunFiles, protected_folders
from torchlint.runtime.sites import parse_traceback_dump

OnEvent = Callable[[dict[str, Any]], None]

DEFAULT_TIMEOUT_S = 300.0
#: set for the script and everything it starts, so leftovers can be found and killed
RUN_ID_VARIABLE = "TORCHLINT_RUN_ID"
#: verdicts of a completed check that exit 0 (a profile with hints, an inconclusive fit and an
#: lr-find suggestion are results, not failures)
PASSING_VERDICTS = ("pass", "healthy", "ok", "hints", "inconclusive", "suggested")
#: lines of the script's output kept for error reports, and the longest line kept
TAIL_LINES = 200
MAX_LINE = 2000
#: lines of output quoted in an error report
REPORTED_TAIL = 20


@dataclass
class RunRequest:
    """One runtime check of one script. `python` is the interpreter that runs the script (it
    needs torch; torchlint itself is put on its path); `cwd` is the script's working directory
    (default: the current one, where the user would run `python train.py`)."""

    check: str
    script: Path
    args: list[str] = field(default_factory=list)
    steps: int | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    python: str = sys.executable
    cwd: Path | None = None
    echo_output: IO[str] | None = None
    #: processes to start through torchrun (`--nproc-per-node`); 1 runs the script directly
    nproc_per_node: int = 1
    #: check-specific options (profile: warmup, trace, sync; fit: epochs, limit_batches,
    #: plot; lr-find: lr_min, lr_max), passed to the child as JSON
    options: dict[str, Any] = field(default_factory=dict)
    #: how the script's writes are kept away from the user's files: `auto` (an overlay mount
    #: where the system allows one, else the in-process redirection), `overlay`, `redirect`
    isolation: str = "auto"
    #: a new or empty folder that receives a copy of every file the run wrote
    keep_outputs: Path | None = None

    @property
    def step_count(self) -> int:
        return self.steps if self.steps is not None else CHECKS[self.check].default_steps


class _Tail:
    """The last lines of one of the script's streams, read on a thread (optionally echoed)."""

    def __init__(self, stream: IO[bytes], echo: IO[str] | None, lock: threading.Lock) -> None:
        self.lines: deque[str] = deque(maxlen=TAIL_LINES)
        self._echo = echo
        self._lock = lock  # shared by both streams, so echoed lines never interleave mid-line
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[bytes]) -> None:
        for raw in iter(lambda: stream.readline(1 << 16), b""):
            text = raw.decode("utf-8", "replace").rstrip("\r\n")
            with self._lock:
                self.lines.append(text[:MAX_LINE])
                if self._echo is not None:
                    try:
                        self._echo.write(text + "\n")
                    except (OSError, ValueError):
                        self._echo = None
        stream.close()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


class _Output:
    """The script's stdout and stderr. Reported as the last lines of stdout followed by the
    last lines of stderr (where tracebacks go): the two pipes are read concurrently, so their
    relative order is not known, and stderr last puts the error where people look."""

    def __init__(self, stdout: IO[bytes], stderr: IO[bytes], echo: IO[str] | None) -> None:
        lock = threading.Lock()
        self.out = _Tail(stdout, echo, lock)
        self.err = _Tail(stderr, echo, lock)

    def join(self, timeout: float) -> None:
        self.out.join(timeout)
        self.err.join(timeout)

    def last(self, count: int) -> list[str]:
        err = list(self.err.lines)[-(count * 2) // 3 :]
        out = list(self.out.lines)[-(count - len(err)) :] if count > len(err) else []
        return out + err


class _RankEvents:
    """The events of every rank under torchrun, one file each: rank 0's progress is followed
    while the run goes on; every rank's result is read at the end and combined."""

    def __init__(self, folder: Path, ranks: int, on_event: OnEvent | None) -> None:
        self.paths = [folder / f"events-{rank}.jsonl" for rank in range(ranks)]
        self.results: list[dict[str, Any] | None] = [None] * ranks
        self.last_step: dict[str, Any] | None = None
        self.captured = False
        self._on_event = on_event
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        offset = 0
        while True:
            finished = self._done.is_set()
            try:
                with open(self.paths[0], "rb") as stream:
                    stream.seek(offset)
                    chunk = stream.read()
            except OSError:
                chunk = b""
            complete = chunk[: chunk.rfind(b"\n") + 1]
            offset += len(complete)
            for raw in complete.splitlines():
                self._dispatch(raw)
            if finished:
                return
            self._done.wait(0.1)

    def _dispatch(self, raw: bytes) -> None:
        try:
            event = json.loads(raw)
        except ValueError:
            return
        if not isinstance(event, dict) or event.get("event") == "result":
            return
        if event.get("event") == "step":
            self.last_step = event
        elif event.get("event") == "captured":
            self.captured = True
        if self._on_event is not None:
            try:
                self._on_event(event)
            except Exception:
                self._on_event = None

    def join(self, timeout: float) -> None:
        self._done.set()
        self._thread.join(timeout)
        for rank, path in enumerate(self.paths):
            try:
                lines = path.read_bytes().splitlines()
            except OSError:
                continue
            for raw in lines:
                try:
                    event = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(event, dict) and event.get("event") == "result":
                    self.results[rank] = event.get("envelope")

    @property
    def result(self) -> dict[str, Any] | None:
        from torchlint.runtime.distributed import combine_ranks

        return combine_ranks(self.results)


class _Events:
    def __init__(self, fd: int, on_event: OnEvent | None) -> None:
        self.result: dict[str, Any] | None = None
        self.last_step: dict[str, Any] | None = None
        self.captured = False
        self._on_event = on_event
        self._thread = threading.Thread(target=self._read, args=(fd,), daemon=True)
        self._thread.start()

    def _read(self, fd: int) -> None:
        with open(fd, "rb") as stream:
            for raw in stream:
                try:
                    event = json.loads(raw)
                except ValueError:
                    continue
                if not isinstance(event, dict):
                    continue
                kind = event.get("event")
                if kind == "result" and isinstance(event.get("envelope"), dict):
                    self.result = event["envelope"]
                elif kind == "step":
                    self.last_step = event
                elif kind == "captured":
                    self.captured = True
                if self._on_event is not None:
                    try:
                        self._on_event(event)
                    except Exception:  # a broken progress display must not lose the result
                        self._on_event = None

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


def _kill_group(process: subprocess.Popen[bytes], run_id: str) -> None:
    """Kill the script's process group, then anything else that carries this run's id in its
    environment: a worker the script put in a session of its own (`setsid`, as daemons do)
    left the group but inherited the environment."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    for pid in processes_of_run(run_id):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def processes_of_run(run_id: str) -> list[int]:
    """Live processes whose environment holds `TORCHLINT_RUN_ID=<run_id>` (Linux /proc; empty
    where there is none)."""
    marker = f"{RUN_ID_VARIABLE}={run_id}".encode()
    found: list[int] = []
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def _child_env(run_id: str, files: RunFiles) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("TORCHLINT_ISOLATION_FAILED", None)
    env[RUN_ID_VARIABLE] = run_id
    env.update(files.environment())
    paths = (files.boot_path(), files.import_path(), env.get("PYTHONPATH", ""))
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONFAULTHANDLER"] = "1"
    return env


def run_check(
    request: RunRequest,
    on_event: OnEvent | None = None,
    cancel: threading.Event | None = None,
) -> dict[str, Any]:
    """Run one check in a child process and return its envelope. Never raises for anything the
    script does; a child that does not report (crash of the interpreter, kill, timeout,
    `os._exit`) gets an envelope built here."""
    started = time.monotonic()
    cwd = request.cwd if request.cwd is not None else Path.cwd()
    folder = Path(tempfile.mkdtemp(prefix="tl-run-"))  # short: AF_UNIX paths are made inside
    files = RunFiles(folder, request.isolation)
    try:
        result = _run_in(request, files, cwd, started, on_event, cancel)
        files.deliver(result)
        confirm_envelope(result)  # runtime findings on the line of a static one say so
        kept = request.keep_outputs
        if kept is not None:
            files.keep(kept, cwd)
        isolation = result.get("isolation")
        if not isinstance(isolation, dict):
            isolation = result["isolation"] = _isolation(request, cwd)
        isolation["files"] = files.summary(cwd, kept)
        return result
    finally:
        files.remove()


def _run_in(
    request: RunRequest,
    files: RunFiles,
    cwd: Path,
    started: float,
    on_event: OnEvent | None,
    cancel: threading.Event | None,
) -> dict[str, Any]:
    """One run of the child, in the scratch folder `files`; its envelope."""
    script = request.script.resolve()
    timeout = max(1.0, float(request.timeout_s))
    ranks = max(1, int(request.nproc_per_node))
    run_id = uuid.uuid4().hex
    folder = files.root
    dump = folder / ("stacks-{rank}.txt" if ranks > 1 else "stacks.txt")
    read_fd, write_fd = os.pipe()
    child = [
        "torchlint.runtime.child",
        "--check",
        request.check,
        "--steps",
        str(request.step_count),
        "--options",
        json.dumps(files.deliverable_options(request.options)),
        "--timeout",
        str(timeout),
        "--hang-dump",
        str(dump),
        "--dump-after",
        str(max(0.5, timeout - min(2.0, timeout * 0.1))),
    ]
    if ranks > 1:  # PyTorch's own launcher starts one child per rank
        command = [
            request.python,
            "-m",
            "torch.distributed.run",
            "--standalone",
            f"--nproc-per-node={ranks}",
            "-m",
            *child,
            "--events-file",
            str(folder / "events-{rank}.jsonl"),
        ]
    else:
        command = [request.python, "-m", *child, "--events-fd", str(write_fd)]
    command += ["--script", str(script), "--", *request.args]
    command = files.wrap(command, request.python, protected_folders(cwd, script))
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(write_fd,),
            start_new_session=True,
            cwd=str(cwd),
            env=_child_env(run_id, files),
        )
    except OSError as exc:
        os.close(read_fd)
        os.close(write_fd)
        return _parent_envelope(
            request,
            "error",
            error_info("setup", f"could not start {request.python}: {exc}"),
            f"{request.check}: could not start {request.python}: {exc}",
            started,
        )
    os.close(write_fd)
    assert process.stdout is not None and process.stderr is not None
    events: _Events | _RankEvents
    if ranks > 1:
        os.close(read_fd)
        events = _RankEvents(folder, ranks, on_event)
    else:
        events = _Events(read_fd, on_event)
    output = _Output(process.stdout, process.stderr, request.echo_output)
    deadline = started + timeout
    ended = "exited"
    while process.poll() is None:
        if cancel is not None and cancel.is_set():
            ended = "cancelled"
            break
        if time.monotonic() >= deadline:
            ended = "timeout"
            break
        time.sleep(0.05)
    _kill_group(process, run_id)  # the script's leftover workers and forks go with it
    process.wait()
    for reader in (events, output):
        reader.join(2.0)
    first_dump = Path(str(dump).replace("{rank}", "0"))
    hang_text = first_dump.read_text("utf-8", "replace") if first_dump.exists() else ""

    result = events.result
    if result is not None and ended == "exited":
        _fill_tail(result, output)
        return result
    if ended == "exited" and process.returncode == UNAVAILABLE_EXIT and result is None:
        reason = files.status().get("reason") or "unknown"
        message = f"overlay isolation is not available here ({reason}); the script was not run"
        return _parent_envelope(
            request,
            "error",
            error_info("setup", message, None, process.returncode, output.last(REPORTED_TAIL)),
            f"{request.check}: {message}",
            started,
        )
    return _failure_envelope(request, ended, process.returncode, events, output, hang_text, started)


def _fill_tail(result: dict[str, Any], output: _Output) -> None:
    """The error's output tail is what the script printed last (its traceback included)."""
    error = result.get("error")
    tail = [plain_text(line) for line in output.last(REPORTED_TAIL)]
    if isinstance(error, dict) and tail:
        error["output_tail"] = tail


def _parent_envelope(
    request: RunRequest,
    status: str,
    error: dict[str, Any],
    summary: str,
    started: float,
    diagnostics: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    result = envelope(request.check, status, None, summary, None, {})
    result.update(
        script=str(request.script.resolve()),
        argv=list(request.args),
        duration_s=round(time.monotonic() - started, 3),
        isolation=_isolation(request, request.cwd or Path.cwd()),
        error=error,
        diagnostics=diagnostics or [],
    )
    return result


def _isolation(request: RunRequest, cwd: Path) -> dict[str, Any]:
    return {
        "process": "child",
        "timeout_s": float(request.timeout_s),
        "working_directory": str(cwd),
        "environment": dict(CHECK_ENVIRONMENT),
    }


def main_thread_stack(dump: str, limit: int = 12) -> list[str]:
    """The `File "...", line N in f` lines of the main thread in a faulthandler dump (the
    thread whose outermost frame is module level), innermost last, at most `limit`."""
    threads: list[list[str]] = []
    for line in dump.splitlines():
        if line.rstrip().endswith("(most recent call first):"):
            threads.append([])
        elif threads and line.strip().startswith('File "'):
            threads[-1].append(line.strip())
    main = next((t for t in threads if any(f.endswith("in <module>") for f in t)), None)
    if main is None:
        return []
    frames = list(reversed(main))  # outermost first
    ours = str(Path(__file__).resolve().parents[1])
    start = next(
        (
            i
            for i, frame in enumerate(frames)
            if not frame.startswith('File "<frozen') and ours not in frame
        ),
        0,
    )
    return frames[start:][-limit:]


#: a total of steps at least this is the child's "until the script ends" (capture.py's
#: UNBOUNDED_STEPS; the parent does not import the child)
UNBOUNDED = 10**9


def step_progress(last_step: dict[str, Any]) -> str:
    """ "after 25 of 40 steps" from the child's last step event, whose `of` is the total the
    check was running to at that moment (fit and profile grow it as they go); "after 25
    steps" when that total is unknown or unbounded."""
    steps = last_step.get("step", 0)
    total = last_step.get("of")
    if isinstance(total, int) and steps <= total < UNBOUNDED:
        return f"after {steps} of {total} steps"
    return f"after {steps} step{'' if steps == 1 else 's'}"


def _failure_envelope(
    request: RunRequest,
    ended: str,
    returncode: int | None,
    events: _Events | _RankEvents,
    output: _Output,
    hang_text: str,
    started: float,
) -> dict[str, Any]:
    tail = output.last(REPORTED_TAIL)
    progress = (
        step_progress(events.last_step or {})
        if events.captured
        else "before a training step was captured"
    )
    steps = (events.last_step or {}).get("step", 0)
    name = request.script.name
    if ended == "timeout":
        site = parse_traceback_dump(hang_text, request.script.resolve().parent)
        where = f", at {Path(site.filename).name}:{site.line} in {site.function}" if site else ""
        message = (
            f"{name} did not finish within {request.timeout_s:g} s ({progress}{where}); it was "
            "stopped with its whole process group. Raise --timeout for slow first steps, or "
            "look for a loop that waits forever."
        )
        diagnostics = []
        if site is not None:
            diagnostics.append(
                {
                    "code": "TLR002",
                    "name": "script-timeout",
                    "severity": "error",
                    "message": message,
                    "advice": "Raise --timeout for slow first steps, or look for a loop that "
                    "waits forever.",
                    "filename": site.filename,
                    "line": site.line,
                    "evidence": {"timeout_s": request.timeout_s, "steps": steps},
                }
            )
        stack = main_thread_stack(hang_text)
        if stack:
            tail = [*tail, "--- where the script was when it was stopped ---", *stack]
        return _parent_envelope(
            request,
            "timeout",
            error_info("timeout", message, site.to_json() if site else None, None, tail),
            f"{request.check}: timed out {progress}",
            started,
            diagnostics,
        )
    if ended == "cancelled":
        message = f"{request.check} of {name} was cancelled {progress}"
        return _parent_envelope(
            request, "error", error_info("cancelled", message, None, None, tail), message, started
        )
    if returncode is not None and returncode < 0:
        signame = _signal_name(-returncode)
        if -returncode == signal.SIGKILL:
            kind = "killed"
            message = (
                f"{name} was killed by {signame} {progress}; with no other cause, this is "
                "usually the kernel's out-of-memory killer: reduce the batch size or the model."
            )
        else:
            kind = "crash"
            message = f"{name} was killed by {signame} {progress}"
        return _parent_envelope(
            request,
            "error",
            error_info(kind, message, None, returncode, tail),
            f"{request.check}: {message}",
            started,
        )
    message = (
        f"{name} ended the process with exit status {returncode} {progress} without letting "
        "torchlint report (os._exit or a fatal error in native code)"
    )
    return _parent_envelope(
        request,
        "error",
        error_info("exit", message, None, returncode, tail),
        f"{request.check}: {message}",
        started,
    )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def exit_status(result: dict[str, Any]) -> int:
    """0 the check passed, was inconclusive or does not apply; 1 it failed (its verdict, or an
    error-severity finding such as leaked validation data); 2 it could not run."""
    if result.get("status") != "completed":
        return 2
    outcome = result.get("outcome")
    if isinstance(outcome, str):
        return 1 if outcome == "fail" else 0
    errors = any(
        isinstance(d, dict) and d.get("severity") == "error" for d in result.get("diagnostics", [])
    )
    return 0 if result.get("verdict") in PASSING_VERDICTS and not errors else 1
