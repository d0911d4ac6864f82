"""Are the runtime checks right on public training scripts of varied shapes?

Every script of manifest.json (fetched at its pinned commit from the search tool's mirror, or
any bare git directory given with --mirror) goes through every check, each time from a fresh
workspace holding its data (made here) and the files an earlier run left, hashed before and
after. A verdict is right when its outcome (pass / fail / inconclusive / not_applicable) is the
one the manifest expects. Then each bug of planted.json is put into its script (one change) and
its check must give the expected outcome and the finding at the expected line. Last, each script
runs plainly and under each check with its optimizer steps timed, for the overhead ratio.

    python benchmarks/real_scripts/run.py [--torchlint-path DIR] [--scripts a,b] [--checks c]
        [--no-planted] [--no-timing] [--json FILE] [--table FILE]

`--torchlint-path` runs another checkout of torchlint (an older commit) with this Python, to
compare before and after. Nothing fetched is committed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from workspaces import MIRRORS, ROOT, changes, fetch, hashes, make_workspace  # noqa: E402

CACHE = ROOT / "benchmarks" / ".real_scripts"
#: a run's wall-clock limit on an idle machine; each run gets this times the machine's measured
#: slowdown (so a busy machine stretches the limit, not the verdict), at most MAX_SLOWDOWN times
TIMEOUT_S = 300
MAX_SLOWDOWN = 8.0
#: CPU seconds of the calibration loop that measures the slowdown
CALIBRATION_S = 0.25
#: verdicts of envelopes without an `outcome` field (torchlint before schema 3)
OLD_OUTCOMES = {
    "pass": "pass",
    "healthy": "pass",
    "ok": "pass",
    "hints": "pass",
    "suggested": "pass",
    "fail": "fail",
    "nan": "fail",
    "problems": "fail",
    "overfitting": "fail",
    "underfitting": "fail",
    "stopped": "fail",
    "no_suggestion": "inconclusive",
    "inconclusive": "inconclusive",
}
#: steps timed in the plain run (and the first ones dropped as warm-up)
PLAIN_STEPS = 40
WARMUP_STEPS = 5

#: run by `python -c` before the script: times each optimizer step (or backward, for manual
#: updates) of the unmodified script, then ends it
PLAIN_TIMER = """
import atexit, os, runpy, sys, time, torch
from torch.optim.optimizer import register_optimizer_step_post_hook
stamps, limit, first, backwards = [], int(os.environ["TL_BENCH_STEPS"]), [], [0]
def write():
    with open(os.environ["TL_BENCH_OUT"], "w") as out:
        out.write("\\n".join(map(str, stamps)))
atexit.register(write)  # a script shorter than the limit
def note():
    stamps.append(time.perf_counter())
    if len(stamps) >= limit:
        write()
        os._exit(0)
def on_step(optimizer, *_):
    first.append(optimizer) if not first else None
    if optimizer is first[0]:
        note()
register_optimizer_step_post_hook(on_step)
original = torch.autograd.backward
def backward(*args, **kwargs):
    done = original(*args, **kwargs)
    backwards[0] += 1
    if not first and backwards[0] > 2:  # no optimizer: one manual update per backward
        note()
    return done
torch.autograd.backward = backward
sys.argv = sys.argv[1:]
sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def slowdown() -> float:
    """How many times slower than on an idle machine a CPU-bound step runs now: the wall time
    of a pure-Python loop over its CPU time, or the load average per core when that is
    higher (the loop is short and may fall between other processes' bursts); at least 1."""
    wall, cpu = time.perf_counter(), time.process_time()
    count = 0
    while time.process_time() - cpu < CALIBRATION_S:
        count += 1
    measured = (time.perf_counter() - wall) / max(1e-9, time.process_time() - cpu)
    per_core = os.getloadavg()[0] / (os.cpu_count() or 1) if hasattr(os, "getloadavg") else 0
    return round(min(MAX_SLOWDOWN, max(1.0, measured, per_core)), 2)


def options_for(manifest: dict[str, Any], entry: dict[str, Any], check: str) -> list[str]:
    """The check's options: the manifest's, or the script's own where it has them (a script
    whose steps are slow gets fewer)."""
    return list(entry.get("options", {}).get(check, manifest["options"][check]))


def outcome_of(result: dict[str, Any]) -> str:
    status = result.get("status")
    if status != "completed":
        return {"capture_failed": "not_captured"}.get(str(status), "error")
    if "outcome" in result:
        return str(result["outcome"])
    errors = any(d.get("severity") == "error" for d in result.get("diagnostics", []))
    outcome = OLD_OUTCOMES.get(str(result.get("verdict")), "inconclusive")
    return "fail" if errors and outcome == "pass" else outcome


def environment(
    entry: dict[str, Any], workspace: Path, torchlint_path: Path | None
) -> dict[str, str]:
    env = dict(os.environ, MPLBACKEND="Agg", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.update(entry.get("env", {}))
    paths = [str(workspace / p) for p in entry.get("pythonpath", [])]
    if torchlint_path is not None:
        paths.insert(0, str(torchlint_path))
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def run_check(
    entry: dict[str, Any],
    check: str,
    source: Path,
    options: list[str],
    torchlint_path: Path | None,
    plant: dict[str, Any] | None = None,
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tl-real-") as scratch:
        workspace = make_workspace(entry, source, Path(scratch))
        if plant is not None:
            path = workspace / plant["file"]
            text = path.read_text()
            assert plant["old"] in text, (plant["name"], "the planted change does not apply")
            path.write_text(text.replace(plant["old"], plant["new"], 1))
        before = hashes(workspace)
        factor = slowdown()
        limit = TIMEOUT_S * factor
        command = [sys.executable, "-m", "torchlint", "run", check, entry["script"], *options]
        command += ["--timeout", str(round(limit - 20 * factor)), "--output-format", "json"]
        started = time.monotonic()
        try:
            done = subprocess.run(
                [*command, "--", *entry["args"]],
                cwd=workspace,
                env=environment(entry, workspace, torchlint_path),
                capture_output=True,
                text=True,
                timeout=limit,
            )
            stdout = done.stdout
        except subprocess.TimeoutExpired as exc:
            stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        seconds = time.monotonic() - started
        touched = changes(before, hashes(workspace))
        lines = workspace_lines(workspace, plant)
    try:
        result = json.loads(stdout)
    except ValueError:
        result = {"status": "no envelope", "diagnostics": [], "summary": stdout[-300:]}
    return {
        "outcome": outcome_of(result),
        "status": result.get("status"),
        "verdict": result.get("verdict"),
        "summary": str(result.get("summary", ""))[:300],
        "diagnostics": [
            {
                "code": d.get("code"),
                "severity": d.get("severity"),
                "file": Path(d["filename"]).name if d.get("filename") else None,
                "path": d.get("filename"),
                "line": d.get("line"),
            }
            for d in result.get("diagnostics", [])
        ],
        "timing": result.get("timing"),
        "seconds": round(seconds, 1),
        "slowdown": factor,
        "timeout_s": round(limit),
        "touched": touched,
        "lines": lines,
    }


def workspace_lines(workspace: Path, plant: dict[str, Any] | None) -> dict[str, list[str]]:
    """The lines of the file a planted bug's finding must point at (read before the workspace
    goes)."""
    if plant is None:
        return {}
    path = workspace / plant["expect"]["file"]
    return {plant["expect"]["file"]: path.read_text().splitlines()}


def expected_line(plant: dict[str, Any], lines: dict[str, list[str]]) -> int | None:
    expect = plant["expect"]
    found = [i for i, text in enumerate(lines[expect["file"]], 1) if expect["line"] in text]
    index = expect.get("occurrence", 1) - 1
    return found[index] if index < len(found) else None


def planted_verdict(plant: dict[str, Any], row: dict[str, Any]) -> tuple[bool, str]:
    expect = plant["expect"]
    line = expected_line(plant, row.pop("lines"))
    hits = [
        d
        for d in row["diagnostics"]
        if d["code"] == expect["code"]
        and d["path"]
        and d["path"].endswith(expect["file"])
        and d["line"] == line
    ]
    right_outcome = row["outcome"] == expect["outcome"]
    right_verdict = "verdict" not in expect or row["verdict"] == expect["verdict"]
    same_code = [d for d in row["diagnostics"] if d["code"] == expect["code"]]
    why = []
    if not right_outcome or not right_verdict:
        why.append(f"outcome {row['outcome']} ({row['verdict']}), expected {expect['outcome']}")
    if not hits:
        where = ", ".join(f"{d['file']}:{d['line']}" for d in same_code) or "nowhere"
        why.append(f"{expect['code']} at {expect['file']}:{line} expected, found at {where}")
    return right_outcome and right_verdict and bool(hits), "; ".join(why)


def plain_step_ms(entry: dict[str, Any], source: Path) -> float | None:
    """Median time of an optimizer step (or a manual update) of the script run plainly."""
    with tempfile.TemporaryDirectory(prefix="tl-plain-") as scratch:
        workspace = make_workspace(entry, source, Path(scratch))
        out = Path(scratch) / "stamps.txt"
        env = environment(entry, workspace, None)
        env.update(TL_BENCH_STEPS=str(PLAIN_STEPS), TL_BENCH_OUT=str(out))
        try:
            subprocess.run(
                [sys.executable, "-c", PLAIN_TIMER, entry["script"], *entry["args"]],
                cwd=workspace,
                env=env,
                capture_output=True,
                timeout=TIMEOUT_S * slowdown(),
            )
        except subprocess.TimeoutExpired:
            return None
        if not out.exists():
            return None
        stamps = [float(x) for x in out.read_text().split()]
    gaps = [b - a for a, b in itertools.pairwise(stamps)][WARMUP_STEPS:]
    return statistics.median(gaps) * 1e3 if gaps else None


def overhead(entry: dict[str, Any], source: Path, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The script's plain step time and each check's median step over it."""
    plain = plain_step_ms(entry, source)
    ratios = {}
    for row in rows:
        measured = (row.get("timing") or {}).get("step_ms_median")
        if row["script"] == entry["name"] and plain and measured:
            ratios[row["check"]] = round(measured / plain, 3)
    print(f"timing {entry['name']:22} plain {plain and round(plain, 2)} ms  {ratios}", flush=True)
    return {"plain_step_ms": plain and round(plain, 3), "ratios": ratios}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torchlint-path", type=Path, default=None)
    parser.add_argument("--mirror", type=Path, default=MIRRORS)
    parser.add_argument("--scripts", default=None, help="comma-separated names (default: all)")
    parser.add_argument("--checks", default=None, help="comma-separated (default: all)")
    parser.add_argument("--no-planted", action="store_true")
    parser.add_argument("--no-checks", action="store_true", help="the planted bugs only")
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--json", type=Path, default=None, help="write every row here")
    args = parser.parse_args()
    manifest = json.loads((HERE / "manifest.json").read_text())
    planted = json.loads((HERE / "planted.json").read_text())["bugs"]
    checks = args.checks.split(",") if args.checks else manifest["checks"]
    chosen = set(args.scripts.split(",")) if args.scripts else None
    entries = [e for e in manifest["scripts"] if chosen is None or e["name"] in chosen]
    sources = {e["name"]: fetch(e, args.mirror, CACHE) for e in entries}
    rows: list[dict[str, Any]] = []
    timing: dict[str, Any] = {}
    for entry in [] if args.no_checks else entries:
        for check in checks:
            expected, why = entry["expected"][check]
            row = run_check(
                entry,
                check,
                sources[entry["name"]],
                options_for(manifest, entry, check),
                args.torchlint_path,
            )
            row.pop("lines")
            row.update(script=entry["name"], check=check, expected=expected, why=why)
            row["right"] = row["outcome"] == expected
            rows.append(row)
            save(args.json, rows, [], timing)
            touched = sum(len(v) for v in row["touched"].values())
            mark = "ok " if row["right"] else "BAD"
            print(
                f"{mark} {entry['name']:22} {check:8} {row['outcome']:15} (expected {expected:14})"
                f" {row['seconds']:6.1f}s x{row['slowdown']} files-touched={touched}"
                f"  {row['summary'][:110]}",
                flush=True,
            )
        if not args.no_timing:  # right after the checks, under the same load
            timing[entry["name"]] = overhead(entry, sources[entry["name"]], rows)
    bug_rows: list[dict[str, Any]] = []
    if not args.no_planted:
        for plant in planted:
            entry = next((e for e in entries if e["name"] == plant["script"]), None)
            if entry is None or plant["check"] not in checks:
                continue
            row = run_check(
                entry,
                plant["check"],
                sources[entry["name"]],
                options_for(manifest, entry, plant["check"]),
                args.torchlint_path,
                plant,
            )
            caught, why = planted_verdict(plant, row)
            row.update(bug=plant["name"], script=plant["script"], check=plant["check"])
            row.update(caught=caught, why=why)
            bug_rows.append(row)
            save(args.json, rows, bug_rows, timing)
            mark = "ok " if caught else "BAD"
            print(f"{mark} planted {plant['name']:40} {row['outcome']:14} {why}", flush=True)
    right = sum(r["right"] for r in rows)
    touched_runs = sum(1 for r in rows + bug_rows if any(r["touched"].values()))
    print(f"\nverdicts right: {right} of {len(rows)} ({100 * right / max(1, len(rows)):.0f}%)")
    if bug_rows:
        caught = sum(r["caught"] for r in bug_rows)
        print(f"planted bugs caught with the right outcome and line: {caught} of {len(bug_rows)}")
    print(f"runs that changed a file of the workspace: {touched_runs}")
    save(args.json, rows, bug_rows, timing)
    return 0


def save(
    path: Path | None,
    rows: list[dict[str, Any]],
    bug_rows: list[dict[str, Any]],
    timing: dict[str, Any],
) -> None:
    """Writes what has been measured so far (after every run: a stopped benchmark keeps it)."""
    if path is not None:
        path.write_text(
            json.dumps({"rows": rows, "planted": bug_rows, "timing": timing}, indent=1) + "\n"
        )


if __name__ == "__main__":
    raise SystemExit(main())
