"""Does a runtime check leave the user's files alone on real public scripts?

For every script of manifest.json (fetched at its pinned commit from the search tool's mirror,
or any bare git directory given with --mirror) and every check, this builds a workspace with
the script's files, synthetic data made here, and the files an earlier real run would have left
(the checkpoint the script writes, its logs); hashes it; runs `torchlint run CHECK` on it; and
hashes it again. It prints, per run: the status, whether the script itself failed (TLR001) or
torchlint did (TLR005), and how many of the user's files were changed, created or removed.

    python benchmarks/isolation/run.py [--torchlint-path DIR] [--checks overfit,grads]
        [--isolation overlay|redirect]

`--torchlint-path` runs another checkout of torchlint (an older commit) with this Python, to
compare before and after. Nothing of the fetched code is committed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CACHE = ROOT / "benchmarks" / ".isolation"
MIRRORS = Path("/work/.mirror")


def fetch(entry: dict[str, Any], mirror_root: Path) -> Path:
    """The script's files at its commit, extracted from a bare mirror (cached)."""
    target = CACHE / entry["repo"].replace("/", "+") / entry["commit"] / entry["folder"]
    if all((target / name).exists() for name in entry["files"]):
        return target
    git_dir = mirror_root / entry["repo"].replace("/", "+") / "repo"
    target.mkdir(parents=True, exist_ok=True)
    for name in entry["files"]:
        path = f"{entry['folder']}/{name}" if entry["folder"] else name
        blob = subprocess.run(
            ["git", f"--git-dir={git_dir}", "show", f"{entry['commit']}:{path}"],
            capture_output=True,
            check=True,
        ).stdout
        (target / name).write_bytes(blob)
    return target


def make_text_corpus(workspace: Path) -> None:
    rng = random.Random(0)
    words = [f"w{i}" for i in range(40)]
    folder = workspace / "data" / "wikitext-2"
    folder.mkdir(parents=True)
    for split, lines in (("train", 60), ("valid", 12), ("test", 12)):
        text = "\n".join(" ".join(rng.choice(words) for _ in range(12)) for _ in range(lines))
        (folder / f"{split}.txt").write_text(text + "\n")


def make_token_memmap(workspace: Path) -> None:
    import numpy as np

    folder = workspace / "data" / "shakespeare_char"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for split, size in (("train", 4000), ("val", 800)):
        rng.integers(0, 32, size, dtype=np.uint16).tofile(folder / f"{split}.bin")
    meta = {"vocab_size": 32, "itos": {i: chr(65 + i) for i in range(32)}}
    (folder / "meta.pkl").write_bytes(pickle.dumps(meta))


DATA = {"text_corpus": make_text_corpus, "token_memmap": make_token_memmap, "none": None}


def make_workspace(entry: dict[str, Any], source: Path, root: Path) -> Path:
    workspace = root / entry["name"]
    workspace.mkdir(parents=True)
    for name in entry["files"]:
        shutil.copy(source / name, workspace / name)
    maker = DATA[entry["data"]]
    if maker is not None:
        maker(workspace)
    for relative in entry["user_files"]:  # what an earlier, real run left behind
        path = workspace / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f"an earlier run's {relative}\n".encode() * 64)
    (workspace / "runs").mkdir()
    (workspace / "runs" / "notes.txt").write_text("my experiment notes\n")
    return workspace


def hashes(folder: Path) -> dict[str, str]:
    found = {}
    for path in sorted(folder.rglob("*")):
        if "__pycache__" in path.parts:
            continue
        if path.is_file():
            found[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.is_dir():
            found[str(path.relative_to(folder))] = "dir"
    return found


def run_one(
    entry: dict[str, Any],
    check: str,
    source: Path,
    torchlint_path: Path | None,
    isolation: str | None,
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tl-iso-") as scratch:
        workspace = make_workspace(entry, source, Path(scratch))
        before = hashes(workspace)
        env = dict(os.environ)
        if torchlint_path is not None:
            env["PYTHONPATH"] = str(torchlint_path)
        steps = {"overfit": "30", "grads": "5", "profile": "4", "fit": "1", "lr-find": "12"}[check]
        command = [sys.executable, "-m", "torchlint", "run", check, entry["script"]]
        command += ["--steps", steps, "--timeout", "240", "--output-format", "json"]
        if check == "fit":
            command += ["--epochs", "2", "--limit-batches", "3"]
        if isolation is not None:
            command += ["--isolation", isolation]
        done = subprocess.run(
            [*command, "--", *entry["args"]],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        after = hashes(workspace)
    try:
        result = json.loads(done.stdout)
    except ValueError:
        result = {"status": "no envelope", "diagnostics": []}
    codes = {d.get("code") for d in result.get("diagnostics", [])}
    changed = [p for p in before if p in after and before[p] != after[p]]
    created = [p for p in after if p not in before]
    removed = [p for p in before if p not in after]
    return {
        "script": entry["name"],
        "check": check,
        "status": result.get("status"),
        "verdict": result.get("verdict"),
        "script_crashed": "TLR001" in codes,
        "torchlint_failed": "TLR005" in codes,
        "error": ((result.get("error") or {}).get("message") or "")[:160],
        "changed": changed,
        "created": created,
        "removed": removed,
        "mechanism": ((result.get("isolation") or {}).get("files") or {}).get("mechanism"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torchlint-path", type=Path, default=None)
    parser.add_argument("--mirror", type=Path, default=MIRRORS)
    parser.add_argument("--checks", default=None, help="comma-separated (default: all)")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    parser.add_argument("--isolation", default=None, help="passed to torchlint run")
    args = parser.parse_args()
    manifest = json.loads((HERE / "manifest.json").read_text())
    checks = args.checks.split(",") if args.checks else manifest["checks"]
    rows = []
    for entry in manifest["scripts"]:
        source = fetch(entry, args.mirror)
        for check in checks:
            row = run_one(entry, check, source, args.torchlint_path, args.isolation)
            rows.append(row)
            touched = len(row["changed"]) + len(row["created"]) + len(row["removed"])
            print(
                f"{row['script']:32} {check:8} {row['status']!s:15} "
                f"script-crash={row['script_crashed']!s:5} "
                f"torchlint-fault={row['torchlint_failed']!s:5} "
                f"user-files-touched={touched} {row['mechanism'] or ''}",
                flush=True,
            )
            for key in ("changed", "created", "removed"):
                if row[key]:
                    print(f"    {key}: {', '.join(row[key][:6])}")
            if row["script_crashed"] or row["status"] in ("error", "no envelope"):
                print(f"    {row['error']}")
    touched_runs = sum(1 for r in rows if r["changed"] or r["created"] or r["removed"])
    crashed = sum(1 for r in rows if r["script_crashed"] or r["torchlint_failed"])
    print(f"\n{len(rows)} runs: {touched_runs} changed the user's files; {crashed} crashed")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
