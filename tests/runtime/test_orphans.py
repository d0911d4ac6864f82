"""A check's child process must not outlive the process that launched it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

SCRIPTS = Path(__file__).parent / "scripts"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); it is dead for our purposes
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def test_the_script_dies_with_a_killed_launcher(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    launcher = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path;"
            "from torchlint.runtime.launcher import RunRequest, run_check;"
            "run_check(RunRequest('overfit', Path(sys.argv[1]), timeout_s=120),"
            " on_event=lambda e: Path(sys.argv[2]).write_text(str(__import__('os').getpid())))",
            str(SCRIPTS / "hang.py"),
            str(pid_file),
        ],
    )
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pid_file.exists(), "the check never reported progress"
    children = [
        int(line.split()[0])
        for line in subprocess.run(
            ["ps", "-o", "pid=,ppid=", "-e"], capture_output=True, text=True, check=True
        ).stdout.splitlines()
        if int(line.split()[1]) == launcher.pid
    ]
    assert children, "no child process found"
    launcher.send_signal(signal.SIGKILL)
    launcher.wait()
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(pid) for pid in children)
