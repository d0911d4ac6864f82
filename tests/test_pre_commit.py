"""The hooks of `.pre-commit-hooks.yaml`, run by the real `pre-commit` in a throwaway git
repository that uses this checkout as its hook repository.

pre-commit installs a hook repository from a commit, so the test first snapshots the working
tree of this checkout (tracked files and untracked ones git does not ignore, uncommitted edits
included) into a repository of its own and points `rev:` at that commit. pre-commit then builds
one virtual environment and pip-installs torchlint into it from the snapshot (its dependencies
come from the package index). `PRE_COMMIT_HOME` lies under the test's temporary folder, so the
test neither uses nor leaves anything in `~/.cache/pre-commit`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

CHECKOUT = Path(__file__).resolve().parent.parent

MISSING_STEP = """\
import torch
model = torch.nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in [(torch.randn(4, 2), torch.randn(4, 1))]:
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
"""
CLEAN = "import torch\n\nx = torch.zeros(3)\n"
DEPRECATED_SCALER = "from torch.cuda.amp import GradScaler\nscaler = GradScaler()\n"
FIXED_SCALER = 'import torch\nscaler = torch.amp.GradScaler("cuda")\n'


def git(*args: str, cwd: Path, env: dict[str, str]) -> str:
    completed = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True, timeout=60
    )
    return completed.stdout


def snapshot_checkout(target: Path, env: dict[str, str]) -> str:
    """Copy the checkout's working tree into a new repository at `target`; its commit."""
    listed = git(
        "ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=CHECKOUT, env=env
    )
    for relative in filter(None, listed.split("\0")):
        source = CHECKOUT / relative
        if not source.is_file():  # deleted in the working tree
            continue
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination)
    git("init", "-q", cwd=target, env=env)
    git("add", "-A", cwd=target, env=env)
    git("commit", "-q", "-m", "snapshot", cwd=target, env=env)
    return git("rev-parse", "HEAD", cwd=target, env=env).strip()


def test_pre_commit_hooks(tmp_path: Path) -> None:
    global_config = tmp_path / "gitconfig"
    global_config.write_text("", encoding="utf-8")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("GIT_", "PRE_COMMIT", "TORCHLINT_"))
        and key not in ("FORCE_COLOR", "NO_COLOR", "VIRTUAL_ENV")
    }
    env.update(
        {
            "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
            "PRE_COMMIT_COLOR": "never",
            "GIT_CONFIG_GLOBAL": str(global_config),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "test",
            "GIT_AUTHOR_EMAIL": "test@example.invalid",
            "GIT_COMMITTER_NAME": "test",
            "GIT_COMMITTER_EMAIL": "test@example.invalid",
        }
    )

    hooks_repo = tmp_path / "torchlint-hooks"
    hooks_repo.mkdir()
    rev = snapshot_checkout(hooks_repo, env)
    declared = yaml.safe_load((hooks_repo / ".pre-commit-hooks.yaml").read_text("utf-8"))
    by_id = {hook["id"]: hook for hook in declared}
    assert set(by_id) == {"torchlint", "torchlint-fix"}
    for hook in declared:
        assert hook["language"] == "python"
        assert hook["types_or"] == ["python", "pyi"]
        assert hook["require_serial"] is True
        assert "--force-exclude" in hook["entry"]
    assert "--fix" in by_id["torchlint-fix"]["entry"]

    project = tmp_path / "project"
    project.mkdir()
    git("init", "-q", cwd=project, env=env)
    config = {
        # The interpreter running the tests builds the hooks' environment.
        "default_language_version": {"python": sys.executable},
        "repos": [
            {
                "repo": str(hooks_repo),
                "rev": rev,
                "hooks": [{"id": "torchlint"}, {"id": "torchlint-fix"}],
            }
        ],
    }
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    (project / "clean.py").write_text(CLEAN, encoding="utf-8")
    (project / "bad.py").write_text(MISSING_STEP, encoding="utf-8")
    (project / "notes.txt").write_text("not python: loss.backward()\n", encoding="utf-8")
    git("add", "-A", cwd=project, env=env)

    def pre_commit(hook: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", hook, "--all-files"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    failing = pre_commit("torchlint")  # builds the one environment both hooks use
    output = failing.stdout + failing.stderr
    assert failing.returncode == 1, output
    assert "TL101" in output and "bad.py" in output
    assert "clean.py:" not in output

    (project / "bad.py").unlink()
    git("add", "-A", cwd=project, env=env)
    passing = pre_commit("torchlint")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout

    amp = project / "amp.py"
    amp.write_text(DEPRECATED_SCALER, encoding="utf-8")
    git("add", "-A", cwd=project, env=env)
    fixing = pre_commit("torchlint-fix")
    assert fixing.returncode == 1, fixing.stdout + fixing.stderr  # it changed a file
    assert amp.read_text(encoding="utf-8") == FIXED_SCALER
    git("add", "-A", cwd=project, env=env)
    fixed = pre_commit("torchlint-fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr

    # The hooks' cache stays out of git: only the fix shows as a change.
    status = git("status", "--porcelain", "--untracked-files=all", cwd=project, env=env)
    assert ".torchlint_cache" not in status
    assert (project / ".torchlint_cache" / ".gitignore").is_file()
    environments = [p for p in (tmp_path / "pre-commit-home").iterdir() if p.is_dir()]
    assert len(environments) == 1  # one hook repository, one environment
