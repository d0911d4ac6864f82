"""Precision on real code: check pinned releases of well-known PyTorch training libraries and
count what torchlint reports, per package and per rule, with and without following calls into
other files.

    python benchmarks/real_world.py [--dir benchmarks/.real-world] [--show TL108] [--json]

The wheels are downloaded from PyPI once (`pip download --no-deps`, pinned below) and unpacked
under `--dir`, each package as its own project (a `pyproject.toml` marks its root). Every
finding is something a maintainer of that library would have to read: the counts are where
false alarms show first. `--show CODE` prints the findings of one rule for review.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

from machine import describe

# Libraries with training loops, trainers, losses and metrics in their own code and tests.
PACKAGES = {
    "skorch": "1.4.0",
    "pytorch-ignite": "0.5.5",
    "torchmetrics": "1.9.0",
    "accelerate": "1.15.0",
    "fastai": "2.8.12",
    "lightning": "2.6.6",
    "pytorch-tabnet": "4.1.0",
    "torchtune": "0.6.1",
    "transformers": "5.24.0",
}
DEFAULT_DIR = Path(__file__).parent / ".real-world"


def fetch(folder: Path) -> dict[str, Path]:
    """Download (once) and unpack each pinned wheel; the folder of each package."""
    folder.mkdir(parents=True, exist_ok=True)
    roots: dict[str, Path] = {}
    for name, pinned in PACKAGES.items():
        dist = name.replace("-", "_")
        wheels = sorted(folder.glob(f"{dist}-{pinned}-*.whl"))
        if not wheels:
            pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet"]
            options = ["--disable-pip-version-check", "--dest", str(folder)]
            subprocess.run([*pip, *options, f"{name}=={pinned}"], check=True)
            wheels = sorted(folder.glob(f"{dist}-{pinned}-*.whl"))
        root = folder / f"{dist}-{pinned}"
        if not (root / "pyproject.toml").exists():
            with zipfile.ZipFile(wheels[0]) as archive:
                archive.extractall(root)
            (root / "pyproject.toml").write_text("", encoding="utf-8")
        roots[name] = root
    return roots


def check(root: Path, project: bool) -> tuple[list[dict[str, Any]], float, int]:
    """Findings (JSON objects), wall time and the number of files checked."""
    command = [sys.executable, "-m", "torchlint", "check", str(root), "--no-cache"]
    command += ["--output-format", "json", *([] if project else ["--no-project"])]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"torchlint failed on {root}:\n{done.stderr}")
    files = sum(1 for _ in root.rglob("*.py"))
    return json.loads(done.stdout or "[]"), elapsed, files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="download folder")
    parser.add_argument("--show", help="print the findings of this rule (e.g. TL108)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    roots = fetch(args.dir)
    rows = []
    for name, root in roots.items():
        found, seconds, files = check(root, project=True)
        alone, _, _ = check(root, project=False)
        codes = Counter(item["code"] for item in found)
        rows.append(
            {
                "package": f"{name} {PACKAGES[name]}",
                "files": files,
                "seconds": round(seconds, 2),
                "findings": len(found),
                "alone": len(alone),
                "codes": dict(sorted(codes.items())),
            }
        )
        if args.show:
            for item in found:
                if item["code"] == args.show:
                    where = Path(item["filename"]).relative_to(root)
                    print(f"{where}:{item['location']['row']}: {item['message']}")
    if args.json:
        print(json.dumps({"machine": describe(), "packages": rows}, indent=2))
        return 0
    print(f"{'package':<24} {'files':>6} {'time':>7} {'findings':>9} {'alone':>6}  per rule")
    for row in rows:
        codes = " ".join(f"{code}:{count}" for code, count in row["codes"].items())
        print(
            f"{row['package']:<24} {row['files']:>6} {row['seconds']:>6.1f}s "
            f"{row['findings']:>9} {row['alone']:>6}  {codes}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
