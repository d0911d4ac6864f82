"""Recall on real bug fixes: for each case of tests/regressions/cases.toml, fetch the file
before and after a public fix commit, check both with torchlint, and say whether the bug was
found.

    python benchmarks/bugfixes/run.py                  # fetch once, check, compare
    python benchmarks/bugfixes/run.py --report-only    # exit 0 even when the record is off
    python benchmarks/bugfixes/run.py --case ID -v     # one case, with every finding shown
    python benchmarks/bugfixes/run.py --json

A case is detected when the expected code fires on the file before the fix within `window`
lines (default 30) of a line the fix changed, and no finding of that code is left on the file
after the fix. A case may name a `match`, text the finding's message must contain, when the
fixed file keeps other, unrelated findings of the same code (another deprecated API). Cases
whose rule does not exist yet (no `code`) count as missed. A fix in one file of a bug that shows
where another file uses it names that file as `reported_in`: the finding must be there, and its
message must name a line of the fixed file within the window (`model.py:137`). The files (and
any `context` files the case names, so that calls into them resolve) go under
benchmarks/.bugfixes/<id>/{before, after}/ (ignored by git), each side its own project.

The `real_detected` field of each case records what the engine did last time; the script
lists every case where that record and today's result differ and exits 1 (unless
`--report-only`), so progress and losses are both written down.

Cases added in a batch (`batch = "2026-12"`) also keep what the engine did the first time it
saw them, before any code was changed for them (`first_real_detected` on the real files,
`first_detected` on the reproductions): the "first seen" table sets that recall beside
today's, the figure of code the engine was not tuned on.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # the project supports 3.10, where tomli is a dependency
    import tomli as tomllib

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from machine import describe
from pinned import DEFAULT_MIRRORS, ensure_root, read_file, run_torchlint

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "regressions" / "cases.toml"
DEFAULT_DIR = ROOT / "benchmarks" / ".bugfixes"
DEFAULT_WINDOW = 30


@dataclass
class Result:
    case: dict[str, Any]
    near: list[int]  # rows of the expected code near the change, before the fix
    elsewhere: list[int]  # rows of the expected code far from the change, before the fix
    after: list[int]  # rows of the expected code after the fix
    changed: tuple[int, int]  # the changed lines of the before file (first, last)
    findings: dict[str, list[dict[str, Any]]]

    @property
    def detected(self) -> bool:
        return bool(self.case.get("code")) and bool(self.near) and not self.after


def load_cases(path: Path) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = tomllib.loads(path.read_text(encoding="utf-8"))["case"]
    return cases


def changed_span(before: str, after: str) -> tuple[int, int]:
    """First and last line (1-based) of the before file that the fix touches; a pure insertion
    counts as the lines around it."""
    old, new = before.splitlines(), after.splitlines()
    rows: list[int] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        rows.extend([i1 + 1, max(i1 + 1, i2)] if i2 > i1 else [max(1, i1), i1 + 1])
    return (min(rows), max(rows)) if rows else (0, 0)


def materialise(case: dict[str, Any], folder: Path, mirrors: Path) -> dict[str, Path]:
    """The case's file (and context files) before and after the fix; the checked file of each
    side."""
    sides = {"before": case["parent"], "after": case["commit"]}
    checked: dict[str, Path] = {}
    paths = [case["path"], *case.get("context", [])]
    for side, commit in sides.items():
        dest = folder / case["id"] / side
        target = dest / case["path"]
        pin = dest / ".torchlint-pinned"
        stamp = " ".join([commit, *paths])
        if not (pin.exists() and pin.read_text(encoding="utf-8").strip() == stamp):
            for path in paths:
                try:
                    data = read_file(case["repository"], commit, path, mirrors)
                except LookupError:
                    if path == case["path"]:
                        raise
                    continue  # a context file that this side does not have
                (dest / path).parent.mkdir(parents=True, exist_ok=True)
                (dest / path).write_bytes(data)
            ensure_root(dest)
            pin.write_text(stamp + "\n", encoding="utf-8")
        checked[side] = target
    return checked


def evaluate(case: dict[str, Any], checked: dict[str, Path]) -> Result:
    before_text = checked["before"].read_text(encoding="utf-8", errors="replace")
    after_text = checked["after"].read_text(encoding="utf-8", errors="replace")
    first, last = changed_span(before_text, after_text)
    window = int(case.get("window", DEFAULT_WINDOW))
    code = case.get("code", "")
    match = case.get("match", "")
    depth = len(Path(case["path"]).parts)
    reported_in = case.get("reported_in")
    findings = {
        side: run_torchlint(
            [path.parents[depth - 1] / reported_in if reported_in else path],
            cwd=path.parents[depth - 1],
        )
        for side, path in checked.items()
    }
    # A fix in one file whose bug shows where another file uses it (`reported_in`): the
    # finding is there, and its message names the fixed file's line (`model.py:137`).
    named = re.compile(rf"\b{re.escape(Path(case['path']).name)}:(\d+)\b")

    def rows(side: str) -> list[int]:
        found = [f for f in findings[side] if f["code"] == code and match in f["message"]]
        if not reported_in:
            return [f["location"]["row"] for f in found]
        return [int(m.group(1)) for f in found for m in named.finditer(f["message"])]

    before_rows = rows("before")
    near = [row for row in before_rows if first - window <= row <= last + window]
    return Result(
        case=case,
        near=near,
        elsewhere=[row for row in before_rows if row not in near],
        after=rows("after"),
        changed=(first, last),
        findings=findings,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="where sources go")
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--case", action="append", help="only this case (repeatable)")
    parser.add_argument("--report-only", action="store_true", help="exit 0 when off record")
    parser.add_argument("-v", "--verbose", action="store_true", help="show every finding")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    args = parser.parse_args(argv)

    cases = [c for c in load_cases(args.cases) if not args.case or c["id"] in args.case]
    results = [evaluate(case, materialise(case, args.dir, args.mirrors)) for case in cases]
    off_record = [r for r in results if r.detected != bool(r.case.get("real_detected"))]
    detected = sum(r.detected for r in results)
    with_rule = [r for r in results if r.case.get("code")]

    first_seen = first_seen_rows(results)
    if args.json:
        rows = [
            {
                "id": r.case["id"],
                "code": r.case.get("code", ""),
                "rule": r.case.get("rule", ""),
                "detected": r.detected,
                "recorded": bool(r.case.get("real_detected")),
                "before_near": r.near,
                "before_elsewhere": r.elsewhere,
                "after": r.after,
                "changed": list(r.changed),
            }
            for r in results
        ]
        summary = {"cases": len(results), "detected": detected, "with_rule": len(with_rule)}
        document = {"machine": describe(), "summary": summary, "first_seen": first_seen}
        print(json.dumps({**document, "cases": rows}, indent=2))
        return 0 if args.report_only or not off_record else 1

    print(f"torchlint on {len(results)} real bug fixes (the file before and after each fix)")
    print(f"{'case':<40} {'code':<6} {'result':<9} before (near / far)  after  changed")
    for r in results:
        code = r.case.get("code") or "-"
        if not r.case.get("code"):
            verdict = "no rule"
        elif r.detected:
            verdict = "detected"
        elif r.near and r.after:
            verdict = "kept"  # fires before and still after the fix
        else:
            verdict = "missed"
        mark = "" if r.detected == bool(r.case.get("real_detected")) else "  <- off record"
        print(
            f"{r.case['id']:<40} {code:<6} {verdict:<9} {len(r.near):>3} / {len(r.elsewhere):<3}"
            f"          {len(r.after):>3}    {r.changed[0]}-{r.changed[1]}{mark}"
        )
        if args.verbose:
            for side, found in r.findings.items():
                for f in found:
                    print(f"    {side}:{f['location']['row']}: {f['code']} {f['message'][:110]}")
    print()
    print(f"detected: {detected} of {len(results)} ({100 * detected / max(1, len(results)):.0f} %)")
    print(f"  of the {len(with_rule)} whose rule exists: {detected}")
    if first_seen:
        print("\nfirst seen (the engine's first run on each batch, before any change for it):")
        print(f"{'batch':<10} {'cases':>5}  {'real files, first':>17}  {'now':>9}  reproductions")
        for row in first_seen:
            n = row["cases"]
            print(
                f"{row['batch']:<10} {n:>5}  {_share(row['first_real_detected'], n):>17}  "
                f"{_share(row['real_detected_now'], n):>9}  {_share(row['first_detected'], n)}"
            )
    if off_record:
        print("\nresult differs from `real_detected` in tests/regressions/cases.toml:")
        for r in off_record:
            print(f"  {r.case['id']}: now {'detected' if r.detected else 'missed'}")
    return 0 if args.report_only or not off_record else 1


def first_seen_rows(results: list[Result]) -> list[dict[str, Any]]:
    """Per batch of cases: how many the engine caught when it first saw them, and today."""
    batches: dict[str, list[Result]] = {}
    for r in results:
        if "batch" in r.case:
            batches.setdefault(str(r.case["batch"]), []).append(r)
    return [
        {
            "batch": batch,
            "cases": len(group),
            "first_real_detected": sum(bool(r.case["first_real_detected"]) for r in group),
            "first_detected": sum(bool(r.case["first_detected"]) for r in group),
            "real_detected_now": sum(r.detected for r in group),
        }
        for batch, group in sorted(batches.items())
    ]


def _share(count: int, total: int) -> str:
    return f"{count} ({100 * count / max(1, total):.0f} %)"


if __name__ == "__main__":
    raise SystemExit(main())
