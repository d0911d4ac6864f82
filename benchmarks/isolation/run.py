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
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from workspaces import MIRRORS, ROOT, fetch, hashes, make_workspace  # noqa: E402

CACHE = ROOT / "benchmarks" / ".isolation"


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
        source = fetch(entry, args.mirror, CACHE)
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
