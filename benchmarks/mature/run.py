"""Precision on mature training code: check pinned training codebases (manifest.toml) with
torchlint and join every finding with its reviewed verdict (verdicts.toml).

    python benchmarks/mature/run.py                  # materialise once, check, score
    python benchmarks/mature/run.py --report-only    # exit 0 even with unreviewed findings
    python benchmarks/mature/run.py --repo nanoGPT --context 6   # unreviewed, with code
    python benchmarks/mature/run.py --stubs new.toml # verdict stubs for unreviewed findings
    python benchmarks/mature/run.py --no-project     # each file alone
    python benchmarks/mature/run.py --json           # the numbers for machines
    python benchmarks/mature/run.py --repo-batch 2026-12 --record-fresh   # first run of a batch

Sources go to benchmarks/.mature/ (ignored by git): from local bare mirrors when there are
some (`--mirrors`, default $TORCHLINT_MIRRORS or /work/.mirror), else from GitHub. A
verdict is keyed on repository, file, code and the stripped text of the reported line, so
it survives line shifts; when one key has several verdicts the one nearest the line wins.

It prints files checked, findings, precision (TP / (TP + FP); "debatable" counts on
neither side), false alarms per 25 files, error-severity false alarms, the false alarms by
mechanism, and every finding without a verdict (exit status 1 when there is one, unless
`--report-only`). Verdicts whose finding is gone are listed too: a TP that disappears is a
lost detection, an FP that disappears is progress.

New codebases come in batches (`batch = "..."` in manifest.toml). The first time a batch is
checked, before any code is changed for it, `--record-fresh` keeps that run's findings in
fresh/<batch>.json. The fresh table joins each kept first run with today's verdicts, so the
project always sees how torchlint did on code it had not been tuned on, next to how it does
on the same code now.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # the project supports 3.10, where tomli is a dependency
    import tomli as tomllib

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from machine import describe
from pinned import (
    DEFAULT_MIRRORS,
    PACKAGING,
    ensure_root,
    extract_tree,
    line_text,
    matches,
    run_torchlint,
)

HERE = Path(__file__).resolve().parent
DEFAULT_DIR = HERE.parent / ".mature"
FRESH_DIR = HERE / "fresh"
KEPT_FIELDS = ("repo", "file", "line", "code", "severity", "message", "text")
VERDICTS = ("TP", "FP", "debatable")
PIN_FILE = ".torchlint-pinned"


@dataclass(frozen=True)
class Repo:
    name: str
    repository: str
    commit: str
    kind: str
    check: tuple[str, ...]
    exclude: tuple[str, ...] = ()
    batch: str = ""


@dataclass
class Verdict:
    repo: str
    file: str
    line: int
    code: str
    text: str
    verdict: str
    why: str
    mechanism: str = ""
    mode: str = ""  # "project" or "no-project": a finding seen in that mode only
    used: int = 0


@dataclass
class Finding:
    repo: str
    file: str
    line: int
    code: str
    severity: str
    message: str
    text: str
    verdict: Verdict | None = None


@dataclass
class Totals:
    files: int = 0
    findings: int = 0
    counts: Counter[str] = field(default_factory=Counter)

    def add(self, finding: Finding) -> None:
        self.findings += 1
        self.counts[finding.verdict.verdict if finding.verdict else "unreviewed"] += 1


def load_manifest(path: Path) -> list[Repo]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    repos = []
    for entry in data["repo"]:
        repos.append(
            Repo(
                name=entry["name"],
                repository=entry["repository"],
                commit=entry["commit"],
                kind=entry.get("kind", ""),
                check=tuple(entry["check"]),
                exclude=tuple(entry.get("exclude", ())),
                batch=entry.get("batch", ""),
            )
        )
    return repos


def load_verdicts(path: Path) -> list[Verdict]:
    if not path.exists():
        return []
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    verdicts = []
    for entry in data.get("verdict", []):
        verdict = Verdict(**entry)
        if verdict.verdict not in VERDICTS:
            raise SystemExit(f"{path}: {verdict.file}:{verdict.line}: verdict must be {VERDICTS}")
        if verdict.verdict == "FP" and not verdict.mechanism:
            raise SystemExit(f"{path}: {verdict.file}:{verdict.line}: an FP needs a mechanism")
        verdicts.append(verdict)
    return verdicts


def materialise(repo: Repo, folder: Path, mirrors: Path) -> Path:
    """The repository's Python and packaging files at the pinned commit, once."""
    dest = folder / repo.name
    pin = dest / PIN_FILE
    if pin.exists() and pin.read_text(encoding="utf-8").strip() == repo.commit:
        return dest
    if dest.exists():
        for path in sorted(dest.rglob("*"), reverse=True):
            path.unlink() if path.is_file() or path.is_symlink() else path.rmdir()
    dest.mkdir(parents=True, exist_ok=True)

    def keep(path: str) -> bool:
        return path.endswith(".py") or path.rsplit("/", 1)[-1] in PACKAGING

    count = extract_tree(repo.repository, repo.commit, dest, keep, mirrors)
    if count == 0:
        raise SystemExit(f"{repo.repository}@{repo.commit}: no Python files")
    ensure_root(dest)
    pin.write_text(repo.commit + "\n", encoding="utf-8")
    return dest


def checked_files(repo: Repo, root: Path) -> list[Path]:
    files = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if matches(relative, repo.check) and not matches(relative, repo.exclude):
            files.append(path)
    return files


def findings_of(repo: Repo, root: Path, files: list[Path], project: bool) -> list[Finding]:
    found = []
    for item in run_torchlint(files, cwd=root, project=project):
        path = Path(item["filename"])
        path = path if path.is_absolute() else root / path
        row = item["location"]["row"]
        found.append(
            Finding(
                repo=repo.name,
                file=path.resolve().relative_to(root.resolve()).as_posix(),
                line=row,
                code=item["code"],
                severity=item["severity"],
                message=item["message"],
                text=line_text(path, row),
            )
        )
    return found


def join(findings: list[Finding], verdicts: list[Verdict]) -> None:
    """Give each finding the verdict with its key (repo, file, code, line text): one verdict per
    finding while there are enough (two findings on one line have two verdicts), the nearest
    line first; a finding beyond them shares the nearest one."""
    by_key: dict[tuple[str, str, str, str], list[Verdict]] = defaultdict(list)
    for verdict in verdicts:
        by_key[(verdict.repo, verdict.file, verdict.code, verdict.text.strip())].append(verdict)
    for finding in sorted(findings, key=lambda f: (f.repo, f.file, f.line)):
        candidates = by_key.get((finding.repo, finding.file, finding.code, finding.text))
        if candidates:
            unused = [v for v in candidates if not v.used] or candidates
            finding.verdict = min(unused, key=lambda v: abs(v.line - finding.line))
            finding.verdict.used += 1


def toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def stub(finding: Finding) -> str:
    return "\n".join(
        [
            "[[verdict]]",
            f"repo = {toml_string(finding.repo)}",
            f"file = {toml_string(finding.file)}",
            f"line = {finding.line}",
            f"code = {toml_string(finding.code)}",
            f"text = {toml_string(finding.text)}",
            'verdict = ""',
            'mechanism = ""',
            'why = ""',
            f"# {finding.severity}: {finding.message}",
            "",
        ]
    )


def context(root: Path, finding: Finding, lines: int) -> str:
    source = (root / finding.file).read_text(encoding="utf-8", errors="replace").splitlines()
    start = max(1, finding.line - lines)
    end = min(len(source), finding.line + lines)
    marks = (">" if number == finding.line else " " for number in range(start, end + 1))
    return "\n".join(
        f"    {mark}{number:5d} {source[number - 1]}"
        for mark, number in zip(marks, range(start, end + 1), strict=True)
    )


def rate(numerator: int, denominator: int) -> str:
    return f"{100 * numerator / denominator:.1f} %" if denominator else "n/a"


def summary(totals: Totals) -> dict[str, Any]:
    tp, fp = totals.counts["TP"], totals.counts["FP"]
    return {
        "files": totals.files,
        "findings": totals.findings,
        "TP": tp,
        "FP": fp,
        "debatable": totals.counts["debatable"],
        "unreviewed": totals.counts["unreviewed"],
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "false_alarms_per_25_files": round(25 * fp / totals.files, 2) if totals.files else None,
    }


def torchlint_commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=HERE,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or "unknown"


def record_fresh(
    batch: str, repos: list[Repo], files: dict[str, int], found: list[Finding]
) -> Path:
    """Keep a batch's first run: what torchlint said before anyone tuned it on that code."""
    path = FRESH_DIR / f"{batch}.json"
    if path.exists():
        raise SystemExit(f"{path} exists: a batch has one first run (add a new batch instead)")
    FRESH_DIR.mkdir(exist_ok=True)
    names = {r.name for r in repos if r.batch == batch}
    record = {
        "batch": batch,
        "date": datetime.date.today().isoformat(),
        "torchlint": torchlint_commit(),
        "files": {name: files[name] for name in sorted(names)},
        "findings": [
            {
                k: getattr(f, k)
                for k in ("repo", "file", "line", "code", "severity", "message", "text")
            }
            for f in found
            if f.repo in names
        ],
    }
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def fresh_rows(verdicts: list[Verdict]) -> list[dict[str, Any]]:
    """Each recorded batch's first run, judged by today's verdicts."""
    rows = []
    for path in sorted(FRESH_DIR.glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        first = [Finding(verdict=None, **item) for item in record["findings"]]
        for verdict in verdicts:
            verdict.used = 0
        join(first, [v for v in verdicts if v.mode in ("", "project")])
        totals = Totals(files=sum(record["files"].values()))
        mechanisms: Counter[str] = Counter()
        errors = 0
        for finding in first:
            totals.add(finding)
            if finding.verdict and finding.verdict.verdict == "FP":
                mechanisms[finding.verdict.mechanism] += 1
                errors += finding.severity == "error"
        rows.append(
            summary(totals)
            | {
                "batch": record["batch"],
                "date": record["date"],
                "torchlint": record["torchlint"],
                "repos": len(record["files"]),
                "error_false_alarms": errors,
                "mechanisms": dict(mechanisms.most_common()),
            }
        )
    for verdict in verdicts:
        verdict.used = 0
    return rows


def print_fresh(rows: list[dict[str, Any]], now: dict[str, dict[str, Any]]) -> None:
    print("\nfresh: each batch of new codebases on its first run (today's verdicts), and now")
    print(
        f"{'batch':<9} {'first run':<19} {'repos':>5} {'files':>6} {'findings':>9} {'TP':>4} "
        f"{'FP':>4} {'deb':>4} {'new':>4} {'FA/25':>6} {'err FP':>6} {'FA/25 now':>10}"
    )
    for row in rows:
        current = now.get(row["batch"])
        now_text = "-" if current is None else f"{current['false_alarms_per_25_files']}"
        print(
            f"{row['batch']:<9} {row['date'] + ' ' + row['torchlint']:<19} {row['repos']:>5} "
            f"{row['files']:>6} {row['findings']:>9} {row['TP']:>4} {row['FP']:>4} "
            f"{row['debatable']:>4} {row['unreviewed']:>4} "
            f"{row['false_alarms_per_25_files']:>6} {row['error_false_alarms']:>6} {now_text:>10}"
        )
        for mechanism, count in row["mechanisms"].items():
            print(f"{'':<9} {count:>4}  {mechanism}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifest", type=Path, default=HERE / "manifest.toml")
    parser.add_argument("--verdicts", type=Path, default=HERE / "verdicts.toml")
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="where sources go")
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--repo", action="append", help="only this repository (repeatable)")
    parser.add_argument("--no-project", action="store_true", help="check each file alone")
    parser.add_argument("--report-only", action="store_true", help="exit 0 when unreviewed")
    parser.add_argument("--context", type=int, default=0, help="lines of code shown around")
    parser.add_argument("--stubs", type=Path, help="write verdict stubs for unreviewed ones")
    parser.add_argument("--show", help="list every finding of this verdict (TP, FP, debatable)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--repo-batch", help="only the repositories of this batch")
    parser.add_argument(
        "--record-fresh", action="store_true", help="keep this run as --repo-batch's first run"
    )
    args = parser.parse_args(argv)
    if args.record_fresh and (not args.repo_batch or args.repo or args.no_project):
        parser.error("--record-fresh needs --repo-batch, whole-project mode and no --repo")

    repos = [r for r in load_manifest(args.manifest) if not args.repo or r.name in args.repo]
    repos = [r for r in repos if not args.repo_batch or r.batch == args.repo_batch]
    if args.repo_batch:
        args.repo = [r.name for r in repos]
    verdicts = load_verdicts(args.verdicts)
    mode = "no-project" if args.no_project else "project"
    verdicts = [v for v in verdicts if not args.repo or v.repo in args.repo]
    verdicts = [v for v in verdicts if v.mode in ("", mode)]
    roots: dict[str, Path] = {}
    findings: list[Finding] = []
    per_repo: dict[str, Totals] = {}
    for repo in repos:
        root = materialise(repo, args.dir, args.mirrors)
        roots[repo.name] = root
        files = checked_files(repo, root)
        found = findings_of(repo, root, files, project=not args.no_project)
        findings.extend(found)
        per_repo[repo.name] = Totals(files=len(files))
    if args.record_fresh:
        kept = record_fresh(
            args.repo_batch, repos, {n: t.files for n, t in per_repo.items()}, findings
        )
        print(f"first run of batch {args.repo_batch} kept in {kept}", file=sys.stderr)
    join(findings, verdicts)

    total = Totals(files=sum(t.files for t in per_repo.values()))
    per_code: dict[str, Totals] = defaultdict(Totals)
    mechanisms: Counter[str] = Counter()
    error_fps: list[Finding] = []
    for finding in findings:
        total.add(finding)
        per_repo[finding.repo].add(finding)
        per_code[finding.code].add(finding)
        if finding.verdict and finding.verdict.verdict == "FP":
            mechanisms[finding.verdict.mechanism] += 1
            if finding.severity == "error":
                error_fps.append(finding)
    unreviewed = [f for f in findings if f.verdict is None]
    gone = [v for v in verdicts if v.used == 0]
    batch_of = {r.name: r.batch for r in repos}
    per_batch: dict[str, Totals] = defaultdict(Totals)
    for name, t in per_repo.items():
        if batch_of[name]:
            per_batch[batch_of[name]].files += t.files
    for finding in findings:
        if batch_of[finding.repo]:
            per_batch[batch_of[finding.repo]].add(finding)
    now = {batch: summary(t) for batch, t in per_batch.items()} if not args.no_project else {}
    all_verdicts = load_verdicts(args.verdicts)
    fresh = fresh_rows(all_verdicts)

    if args.stubs and unreviewed:
        args.stubs.write_text("\n".join(stub(f) for f in unreviewed), encoding="utf-8")

    if args.json:
        report = {
            "machine": describe(),
            "project": not args.no_project,
            "total": summary(total) | {"error_false_alarms": len(error_fps)},
            "repos": {name: summary(t) for name, t in per_repo.items()},
            "codes": {code: summary(t) for code, t in sorted(per_code.items())},
            "mechanisms": dict(mechanisms.most_common()),
            "fresh": fresh,
            "batches_now": now,
            "unreviewed": [f.__dict__ | {"verdict": None} for f in unreviewed],
            "gone": [{k: v for k, v in g.__dict__.items() if k != "used"} for g in gone],
        }
        print(json.dumps(report, indent=2))
        return 0 if args.report_only or not unreviewed else 1

    title = "each file alone (--no-project)" if args.no_project else "whole project"
    print(f"torchlint on {len(repos)} mature training codebases, {title}")
    print(
        f"{'repository':<28} {'files':>6} {'findings':>9} {'TP':>4} {'FP':>4} {'deb':>4} "
        f"{'new':>4} {'FA/25':>6}"
    )
    for name, t in per_repo.items():
        c = t.counts
        per_25 = 25 * c["FP"] / t.files if t.files else 0.0
        print(
            f"{name:<28} {t.files:>6} {t.findings:>9} {c['TP']:>4} {c['FP']:>4} "
            f"{c['debatable']:>4} {c['unreviewed']:>4} {per_25:>6.1f}"
        )
    s = summary(total)
    print()
    print(f"files checked:               {s['files']}")
    print(f"findings:                    {s['findings']}")
    print(f"  TP / FP / debatable:       {s['TP']} / {s['FP']} / {s['debatable']}")
    print(f"  without a verdict:         {s['unreviewed']}")
    print(f"precision TP/(TP+FP):        {rate(s['TP'], s['TP'] + s['FP'])}")
    print(f"false alarms per 25 files:   {s['false_alarms_per_25_files']}")
    print(f"error-severity false alarms: {len(error_fps)}")
    print()
    print(f"{'code':<7} {'findings':>9} {'TP':>4} {'FP':>4} {'deb':>4} {'new':>4}")
    for code, t in sorted(per_code.items()):
        c = t.counts
        print(
            f"{code:<7} {t.findings:>9} {c['TP']:>4} {c['FP']:>4} {c['debatable']:>4} "
            f"{c['unreviewed']:>4}"
        )
    if mechanisms:
        print("\nfalse alarms by mechanism:")
        for mechanism, count in mechanisms.most_common():
            print(f"  {count:>4}  {mechanism}")
    if error_fps:
        print("\nerror-severity false alarms:")
        for f in error_fps:
            print(f"  {f.repo}/{f.file}:{f.line}: {f.code} [{f.verdict and f.verdict.mechanism}]")
    if fresh:
        print_fresh(fresh, now)
    if args.show:
        print(f"\nfindings judged {args.show}:")
        for f in findings:
            if f.verdict and f.verdict.verdict == args.show:
                print(
                    f"  {f.repo}/{f.file}:{f.line}: {f.code} {f.verdict.mechanism}: {f.verdict.why}"
                )
    if gone:
        print(f"\nverdicts whose finding is gone ({len(gone)}):")
        for v in gone:
            print(f"  {v.verdict:<9} {v.repo}/{v.file}:{v.line}: {v.code} {v.text[:60]}")
    if unreviewed:
        print(f"\nfindings without a verdict ({len(unreviewed)}):")
        for f in unreviewed:
            print(f"  {f.repo}/{f.file}:{f.line}: {f.code} ({f.severity}) {f.message}")
            if args.context:
                print(context(roots[f.repo], f, args.context))
    return 0 if args.report_only or not unreviewed else 1


if __name__ == "__main__":
    raise SystemExit(main())
