"""A runtime check changes no file the user had, and the script still sees what it wrote.

Each script here runs for real (real torch, NumPy, TensorBoard, Lightning, transformers) from a
workspace with the user's own data, checkpoints and logs, under both mechanisms: overlay mounts
(`--isolation overlay`) and the in-process redirection (`--isolation redirect`). The workspace
is hashed before and after every run (tests/workspace_guard.py); what the run wrote is checked
in its `--keep-outputs` copy and in the envelope's `isolation.files`.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from envelope_schema import validate_envelope
from script_marks import SCRIPTS
from workspace_guard import WORKSPACE_FILES, make_workspace, unchanged

from torchlint.runtime.child.blame import torchlint_fault
from torchlint.runtime.launcher import RunRequest, exit_status, run_check
from torchlint.runtime.sandbox.redirect import Redirect
from torchlint.runtime.sandbox.scratch import remove_tree

MECHANISMS = ("overlay", "redirect")
ROOT = Path(__file__).resolve().parents[2]


def run_guarded(
    script: str,
    workspace: Path,
    isolation: str,
    check: str = "grads",
    steps: int = 50,
    keep: Path | None = None,
    timeout: float = 120,
) -> dict[str, Any]:
    with unchanged(workspace, SCRIPTS):
        result = run_check(
            RunRequest(
                check,
                SCRIPTS / f"{script}.py",
                steps=steps,
                timeout_s=timeout,
                cwd=workspace,
                isolation=isolation,
                keep_outputs=keep,
            )
        )
    return validate_envelope(result)


def written(result: dict[str, Any]) -> set[str]:
    return {w["path"] for w in result["isolation"]["files"]["written"]}


# --- every kind of writer ----------------------------------------------------------------------


@pytest.fixture(scope="module", params=MECHANISMS)
def writers_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Any], Path, dict[str, str]]:
    root = tmp_path_factory.mktemp(f"writers-{request.param}")
    workspace = make_workspace(root / "workspace")
    kept = root / "kept"
    result = run_guarded("writers", workspace, request.param, steps=5, keep=kept)
    assert result["status"] == "completed", result["summary"]
    assert result["isolation"]["files"]["mechanism"] == request.param
    outcomes = json.loads((kept / "writers.json").read_text())
    return result, kept, outcomes


WRITERS = {
    # writer -> files it leaves in the run's outputs (relative to the working directory)
    "torch_save_path": ["model.pt"],
    "torch_save_file_object": ["checkpoint.pt"],
    "open_modes": ["notes.txt", "data/train.csv", "fresh_renamed.txt"],
    "pathlib_writes": ["runs/exp1/summary.txt", "out/deep/x.bin"],
    "moves_and_deletions": ["best_old.pt", "archive/features.npy", "archive/copy.npy"],
    "numpy_save": ["data/features.npy", "arrays.npz"],
    "tensorboard_writer": [],
    "csv_logger": ["metrics.csv"],
    "python_subprocess": ["notes.txt"],
}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_each_writer_lands_in_the_scratch_folder_and_reads_back(
    writers_run: tuple[dict[str, Any], Path, dict[str, str]], writer: str
) -> None:
    result, kept, outcomes = writers_run
    assert outcomes[writer] == "ok", outcomes[writer]  # the script read back what it wrote
    for relative in WRITERS[writer]:
        assert relative in written(result), (relative, written(result))
        assert (kept / relative).is_file()


def test_the_runs_versions_are_kept_and_the_users_files_are_not_touched(
    writers_run: tuple[dict[str, Any], Path, dict[str, str]],
) -> None:
    result, kept, _ = writers_run
    files = result["isolation"]["files"]
    assert files["kept_in"] == str(kept) and files["written_count"] == len(files["written"])
    # what the run wrote over the user's own files is marked, and is the run's version
    existed = {w["path"] for w in files["written"] if w["existed"]}
    assert {"model.pt", "checkpoint.pt", "notes.txt", "data/train.csv"} <= existed
    assert (kept / "notes.txt").read_text().startswith("rewritten by the run")
    assert (kept / "data/train.csv").read_bytes() == WORKSPACE_FILES["data/train.csv"] + (
        b"0.5,0.5,1\n"
    )
    events = list((kept / "runs/exp1").glob("events.out.tfevents.*"))
    assert len(events) == 1 and events[0].stat().st_size > 0  # TensorBoard's real writer
    # deletions and moves of the user's files are listed, not applied
    assert {"best.pt", "checkpoints/last.ckpt"} <= set(files["deleted"])
    manifest = json.loads((kept / "torchlint-outputs.json").read_text())
    assert {item["kept_as"] for item in manifest["written"]} == written(result)
    assert files["mechanism"] != "redirect" or files["reason"]


# --- objects pickle as if torchlint were not there ---------------------------------------------


@pytest.mark.parametrize("check", ["overfit", "grads", "profile", "fit", "lr-find"])
def test_models_optimizers_and_copies_pickle_without_torchlint(check: str, workspace: Path) -> None:
    steps = {"overfit": 12, "grads": 5, "profile": 4, "fit": 1, "lr-find": 12}[check]
    request = RunRequest(
        check,
        SCRIPTS / "pickles.py",
        steps=steps,
        timeout_s=120,
        cwd=workspace,
        options={"epochs": 2, "limit_batches": 4} if check == "fit" else {},
    )
    result = validate_envelope(run_check(request))
    assert result["status"] == "completed", (result["summary"], result.get("error"))
    codes = {d["code"] for d in result["diagnostics"]}
    assert not codes & {"TLR001", "TLR005"}, result["diagnostics"]
    assert {"whole_model.pt", "optimizer.pt"} <= written(result)


# --- frameworks' own checkpoint writers --------------------------------------------------------


@pytest.mark.parametrize("isolation", MECHANISMS)
def test_lightning_checkpoints_are_written_and_the_best_is_reloaded(
    isolation: str, workspace: Path
) -> None:
    result = run_guarded("lightning_checkpoints", workspace, isolation)
    assert result["status"] == "completed", (result["summary"], result.get("error"))
    assert not {d["code"] for d in result["diagnostics"]} & {"TLR001", "TLR005"}
    paths = written(result)
    assert any(p.startswith("checkpoints/epoch=") and p.endswith(".ckpt") for p in paths), paths
    assert any(p.startswith("lightning_logs/version_1/") for p in paths), paths  # CSVLogger
    assert any("events.out.tfevents" in p for p in paths), paths  # TensorBoardLogger
    sizes = {w["path"]: w["bytes"] for w in result["isolation"]["files"]["written"]}
    assert all(sizes[p] > 1000 for p in paths if p.endswith(".ckpt")), sizes


@pytest.mark.parametrize("isolation", MECHANISMS)
def test_hugging_face_save_pretrained_overwrites_nothing(isolation: str, workspace: Path) -> None:
    (workspace / "hf_model").mkdir()
    (workspace / "hf_model/config.json").write_text('{"an": "earlier export"}\n')
    (workspace / "hf_model/model.safetensors").write_bytes(b"earlier weights")
    (workspace / "weights.safetensors").write_bytes(b"the user's weights")
    result = run_guarded("hf_checkpoints", workspace, isolation)
    assert result["status"] == "completed", (result["summary"], result.get("error"))
    assert {"hf_model/model.safetensors", "hf_model/config.json", "weights.safetensors"} <= (
        written(result)
    )


# --- native code and other processes: only the overlay covers them -----------------------------


def test_the_overlay_also_contains_native_and_non_python_writers(workspace: Path) -> None:
    script = workspace.parent / "native_writes.py"
    script.write_text(
        "import subprocess, numpy as np, torch\n"
        "from torch import nn\n"
        "subprocess.run(['sh', '-c', 'echo from a shell > notes.txt; rm data/train.csv'],"
        " check=True)\n"
        "np.arange(4.0).tofile('model.pt')  # C's fopen, not Python's open\n"
        "assert open('notes.txt').read() == 'from a shell\\n'\n"
        "assert np.fromfile('model.pt').tolist() == [0.0, 1.0, 2.0, 3.0]\n"
        "m = nn.Linear(2, 1); o = torch.optim.SGD(m.parameters(), lr=0.1)\n"
        "loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset("
        "torch.randn(8, 2)), batch_size=4)\n"
        "for (x,) in loader:\n"
        "    o.zero_grad(); m(x).sum().backward(); o.step()\n"
    )
    with unchanged(workspace, script.parent):
        result = validate_envelope(
            run_check(
                RunRequest("grads", script, timeout_s=120, cwd=workspace, isolation="overlay")
            )
        )
    assert result["status"] == "completed", (result["summary"], result.get("error"))
    files = result["isolation"]["files"]
    assert files["mechanism"] == "overlay"
    assert any(workspace.is_relative_to(folder) for folder in files["protected"]), files
    assert {"notes.txt", "model.pt"} <= written(result) and "data/train.csv" in files["deleted"]


def test_overlay_mode_refuses_to_run_when_the_overlay_cannot_be_had(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the scratch folder inside the working directory: an overlay there would cover itself
    inside = workspace / "tmp"
    inside.mkdir()
    monkeypatch.setenv("TMPDIR", str(inside))
    monkeypatch.setattr(tempfile, "tempdir", None)
    marker = workspace / "ran.txt"
    script = workspace.parent / "touch.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    strict = validate_envelope(
        run_check(RunRequest("grads", script, timeout_s=60, cwd=workspace, isolation="overlay"))
    )
    assert strict["status"] == "error" and exit_status(strict) == 2
    assert "overlay isolation is not available here" in strict["error"]["message"]
    assert "inside" in strict["error"]["message"] and not marker.exists()
    # auto falls back to the redirection, and says why
    relaxed = validate_envelope(
        run_check(RunRequest("grads", script, timeout_s=60, cwd=workspace, isolation="auto"))
    )
    files = relaxed["isolation"]["files"]
    assert files["mechanism"] == "redirect" and "inside" in files["reason"]
    assert not marker.exists() and "ran.txt" in written(relaxed)
    assert list(inside.iterdir()) == []  # the scratch folder went with the run


def test_the_overlay_works_without_root() -> None:
    """The namespace is created unprivileged (a user namespace) when not run as root."""
    tmp_path = Path(tempfile.mkdtemp(prefix="tl-test-"))  # reachable by an ordinary user
    folder, scratch = tmp_path / "project", tmp_path / "scratch"
    folder.mkdir()
    scratch.mkdir()
    (folder / "keep.txt").write_text("the user's\n")
    command = [sys.executable, "-S", "-m", "torchlint.runtime.sandbox.namespace"]
    command += ["--scratch", str(scratch), "--mode", "overlay", "--protect", str(folder), "--"]
    command += ["sh", "-c", "echo changed > keep.txt && cat keep.txt && id -u"]
    prefix: list[str] = []
    if os.geteuid() == 0:  # drop to an ordinary user, as most people run this
        for path in (tmp_path, folder, scratch, folder / "keep.txt"):
            os.chown(path, 65534, 65534)
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    done = subprocess.run(
        [*prefix, *command],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    status = json.loads((scratch / "isolation.json").read_text())
    assert status["mechanism"] == "overlay", status
    assert done.stdout.split() == ["changed", str(os.geteuid() if not prefix else 65534)]
    assert (folder / "keep.txt").read_text() == "the user's\n"
    assert (scratch / "overlay/0/upper/keep.txt").read_text() == "changed\n"
    remove_tree(tmp_path)


# --- the redirection's file semantics, in this process ------------------------------------------


def test_redirected_views_read_what_was_written_and_keep_the_originals(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "workspace")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    code = (
        "import os, shutil, glob\n"
        "open('model.pt', 'wb').write(b'new')\n"
        "assert open('model.pt', 'rb').read() == b'new'\n"
        "os.makedirs('ckpt/best')\n"
        "open('ckpt/best/a.pt', 'w').write('a')\n"
        "assert glob.glob('ckpt/**/*.pt', recursive=True) == ['ckpt/best/a.pt']\n"
        "os.chdir('ckpt')\n"
        "assert os.getcwd().endswith('/workspace/ckpt') and open('../notes.txt').read()\n"
        "os.chdir('..')\n"
        "shutil.rmtree('runs')\n"
        "assert not os.path.exists('runs') and 'runs' not in os.listdir('.')\n"
        "os.mkdir('runs')\n"
        "assert os.listdir('runs') == []\n"
        "try:\n"
        "    open('runs/exp1/events.out.tfevents.1700000000.host')\n"
        "    raise SystemExit('a deleted folder came back')\n"
        "except FileNotFoundError as exc:\n"
        "    assert 'tl-' not in str(exc) and 'files' not in str(exc), exc\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "torchlint/runtime/sandbox/boot"), str(ROOT)]),
        "TORCHLINT_REDIRECT": json.dumps({"scratch": str(scratch), "passthrough": []}),
    }
    with unchanged(workspace):
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=workspace, env=env, capture_output=True, text=True
        )
    assert done.returncode == 0, done.stderr
    assert (scratch / "files" / str(workspace / "model.pt").lstrip("/")).read_bytes() == b"new"


def test_installing_twice_keeps_one_redirection(tmp_path: Path) -> None:
    """(in a child process: installing patches this interpreter's os module)"""
    code = (
        "import builtins, os\n"
        "from torchlint.runtime.sandbox.install import install, active\n"
        "from torchlint.runtime.sandbox.redirect import Redirect\n"
        "first = install(Redirect(os.environ['S']))\n"
        "assert install(Redirect(os.environ['S'])) is first\n"
        "opened = builtins.open\n"
        "first.uninstall()\n"
        "assert active() is None and builtins.open is not opened\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "S": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# --- whose fault -----------------------------------------------------------------------------


def test_a_failure_inside_torchlint_is_blamed_on_torchlint(tmp_path: Path) -> None:
    redirect = Redirect(str(tmp_path))
    try:
        redirect.for_write(None)  # type: ignore[arg-type]
    except TypeError as exc:
        assert torchlint_fault(exc) is not None
        assert "torchlint/runtime/sandbox/redirect.py" in (torchlint_fault(exc) or "")
    # the redirection passing on the system's answer is the script's business
    redirect.mark_deleted(str(tmp_path / "gone"))
    try:
        redirect.for_read(str(tmp_path / "gone"))
    except FileNotFoundError as exc:
        assert torchlint_fault(exc) is None
    try:
        pickle.dumps(lambda: None)
    except (pickle.PicklingError, AttributeError) as exc:
        assert torchlint_fault(exc) is None
    try:
        raise pickle.PicklingError("Can't pickle <class 'torchlint.runtime.child.capture.Capture'>")
    except pickle.PicklingError as exc:
        assert torchlint_fault(exc) is not None
    try:
        raise ValueError("a bug in the user's script")
    except ValueError as exc:
        assert torchlint_fault(exc) is None


def test_keep_outputs_needs_a_new_or_empty_folder(run_torchlint: Any, tmp_path: Path) -> None:
    used = tmp_path / "used"
    used.mkdir()
    (used / "result.txt").write_text("mine")
    done = run_torchlint(
        "run", "grads", str(SCRIPTS / "plain.py"), "--keep-outputs", str(used), cwd=tmp_path
    )
    assert done.returncode == 2 and "--keep-outputs" in done.stderr and "not empty" in done.stderr
    assert (used / "result.txt").read_text() == "mine"


def test_the_cli_keeps_outputs_and_reports_them(run_torchlint: Any, workspace: Path) -> None:
    kept = workspace.parent / "outputs"
    done = run_torchlint(
        "run", "grads", str(SCRIPTS / "plain.py"), "--steps", "3", "--keep-outputs", str(kept),
        cwd=workspace,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 file written (checkpoint.pt) went to a scratch folder" in " ".join(
        done.stdout.split()
    )
    assert f"kept in {kept}" in " ".join(done.stdout.split())
    assert (kept / "checkpoint.pt").stat().st_size > 1000
    shutil.rmtree(kept)
