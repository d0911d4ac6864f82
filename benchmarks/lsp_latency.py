"""How long after an edit does a language server have the diagnostics of the new text?

Simulates someone typing inside function bodies of a training script: a new line under a
statement, a short statement typed a character at a time (with a stray character now and then,
a syntax error in the middle of a word, deleted at once), then the line taken away again, by
backspacing or as a whole. Every version of the text is analysed, in this process, from "the new
text has arrived" to "the diagnostics are ready" (`analyze_source`, the default rules), with

  (a) the plain parser, `parse_source`: a whole-file libcst parse on every edit;
  (b) `IncrementalParser`: only the top-level blocks the edit touched are parsed again;

for a ~300-line script (one file of the corpus that `make_corpus.py` generates) and a
~2,000-line one (whole corpus scripts joined into one valid module). Both parsers see the same
edits, in turn, and their diagnostics are compared on every edit. For reference it also times
`python -m torchlint check FILE --no-cache` (a subprocess, wall time) and one `analyze_source`
of the file in this process.

With `--stdio`, when the language server (`python -m torchlint.lsp`) is installed and answers,
it also drives it over stdio with a minimal JSON-RPC client of its own: `didOpen`, then one
`didChange` per edit (the whole text), timing each until the `publishDiagnostics` for that
version arrives; a second run sends `didSave` right after each `didChange` (a save of a text
just linted with the same configuration lints nothing again: about the same time). (The
server lints an edit at once; the time a real editor adds is measured by the end-to-end test in
VS Code, see `editor_scripts.py` and benchmarks/README.md.)

Not a test: it only prints (a table, or JSON with `--json`).

    python benchmarks/lsp_latency.py [--edits 200] [--seed 1234] [--stdio] [--json]
"""

from __future__ import annotations

import argparse
import ast
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst

from torchlint.analysis.block_split import forget_recent_splits
from torchlint.analysis.incremental import IncrementalParser
from torchlint.analysis.source import ParsedSource, ParseFailure, parse_source
from torchlint.engine import analyze_source, gc_paused
from torchlint.selection import RuleSelection

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe
from make_corpus import DEFAULT_SEED, generate

SELECTION = RuleSelection()  # the default rules, as the language server runs them
Parser = Callable[[str], ParsedSource | ParseFailure]

# Lines typed into function bodies: names only, so that the text is valid again after each
# word; `=` leaves it invalid for two keystrokes ("x =", "x = ").
STATEMENTS = (
    "previous_loss = loss",
    "last_logged_step = step",
    "tracked_value = running_loss",
    "debug_enabled = False",
    "checkpoint_due = True",
    "best_so_far = best_loss",
    "current_epoch = epoch",
)
TYPO = "$"  # not a Python token anywhere outside strings and comments


# --- the scripts ---------------------------------------------------------------------------


def short_script(paths: Sequence[Path], lines: int = 300) -> str:
    """The corpus script whose length is closest to `lines`."""
    texts = [path.read_text(encoding="utf-8") for path in paths]
    return min(texts, key=lambda text: abs(text.count("\n") - lines))


class _Rename(cst.CSTTransformer):
    """Renames the given top-level names everywhere but in attribute names, keyword arguments
    and imports."""

    def __init__(self, names: dict[str, str]) -> None:
        super().__init__()
        self.names = names

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        new = self.names.get(updated_node.value)
        return updated_node.with_changes(value=new) if new else updated_node

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.Attribute:
        return updated_node.with_changes(attr=original_node.attr)

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(keyword=original_node.keyword)


def _top_level_names(module: cst.Module) -> set[str]:
    names: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef | cst.ClassDef):
            names.add(stmt.name.value)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                targets: list[cst.BaseExpression] = []
                if isinstance(small, cst.Assign):
                    targets = [target.target for target in small.targets]
                elif isinstance(small, cst.AnnAssign):
                    targets = [small.target]
                names.update(t.value for t in targets if isinstance(t, cst.Name))
    return names


def _is_import(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(small, cst.Import | cst.ImportFrom) for small in stmt.body
    )


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    )


def _is_main_guard(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.If) and "__main__" in cst.Module([]).code_for_node(stmt.test)


def long_script(paths: Sequence[Path], lines: int = 2000) -> str:
    """Whole corpus scripts joined into one valid module of at least `lines` lines: the first
    script's docstring, every script's imports once at the top, then the scripts' code, each
    script after the first with its top-level names suffixed (`train_one_epoch_2`) so that
    nothing is defined twice, and the first script's `__main__` guard at the end."""
    head: list[cst.SimpleStatementLine | cst.BaseCompoundStatement] = []
    imports: dict[str, cst.SimpleStatementLine] = {}
    body: list[cst.SimpleStatementLine | cst.BaseCompoundStatement] = []
    guard: list[cst.SimpleStatementLine | cst.BaseCompoundStatement] = []
    text = ""
    for index, path in enumerate(paths):
        module = cst.parse_module(path.read_text(encoding="utf-8"))
        if index:
            suffixed = {name: f"{name}_{index}" for name in _top_level_names(module)}
            renamed = module.visit(_Rename(suffixed))
            assert isinstance(renamed, cst.Module)
            module = renamed
        for position, stmt in enumerate(module.body):
            if position == 0 and _is_docstring(stmt):
                if not index:
                    head.append(stmt)
            elif _is_import(stmt):
                assert isinstance(stmt, cst.SimpleStatementLine)
                key = module.code_for_node(stmt.with_changes(leading_lines=())).strip()
                imports.setdefault(key, stmt.with_changes(leading_lines=()))
            elif _is_main_guard(stmt):
                if not index:
                    guard.append(stmt)
            else:
                body.append(stmt)
        text = cst.Module([*head, *imports.values(), *body, *guard]).code
        if text.count("\n") >= lines:
            break
    compile(text, "<long script>", "exec", dont_inherit=True)
    return text


# --- the edits -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    line: int  # 0-based index of a one-line statement inside a function body
    indent: str


def targets(text: str) -> list[Target]:
    """One-line simple statements inside function bodies: a new line can go under each."""
    lines = text.splitlines(keepends=True)
    found: list[Target] = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(node):
            if (
                isinstance(inner, ast.Assign | ast.AugAssign | ast.Expr)
                and inner.lineno == inner.end_lineno
            ):
                line = lines[inner.lineno - 1]
                found.append(Target(inner.lineno - 1, line[: inner.col_offset]))
    return sorted(set(found), key=lambda target: target.line)


def typing_session(text: str, count: int, rng: random.Random) -> Iterator[str]:
    """`count` successive versions of `text`, each one keystroke (or one line deleted) away
    from the one before."""
    lines = text.splitlines(keepends=True)
    spots = targets(text)
    made = 0
    while True:
        spot = rng.choice(spots)
        before = "".join(lines[: spot.line + 1])
        after = "".join(lines[spot.line + 1 :])
        statement = rng.choice(STATEMENTS)
        states = [""]  # Enter: a new line holding only the indentation
        for end in range(1, len(statement) + 1):
            states.append(statement[:end])
            if rng.random() < 0.02 and statement[end - 1].isalpha():  # a stray character
                states += [statement[:end] + TYPO, statement[:end]]
        if rng.random() < 0.5:  # backspace all of it
            states += [statement[:end] for end in range(len(statement) - 1, -1, -1)]
        for state in states:
            yield before + spot.indent + state + "\n" + after
            made += 1
            if made == count:
                return
        yield text  # the line deleted
        made += 1
        if made == count:
            return


# --- timing in this process ----------------------------------------------------------------


@dataclass
class Timings:
    label: str
    ms: list[float] = field(default_factory=list)
    failed: list[bool] = field(default_factory=list)  # the text did not parse

    def summary(self) -> dict[str, Any]:
        def percentiles(values: list[float]) -> dict[str, float]:
            if not values:
                return {}
            ordered = sorted(values)
            return {
                "p50": statistics.median(ordered),
                "p95": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))],
                "max": ordered[-1],
                "mean": statistics.fmean(ordered),
            }

        valid = [ms for ms, failed in zip(self.ms, self.failed, strict=True) if not failed]
        broken = [ms for ms, failed in zip(self.ms, self.failed, strict=True) if failed]
        return {
            "edits": len(self.ms),
            "syntax_errors": len(broken),
            "all": percentiles(self.ms),
            "valid": percentiles(valid),
            "syntax_error": percentiles(broken),
        }


def time_edits(text: str, edits: Sequence[str]) -> tuple[list[Timings], dict[str, float | int]]:
    """Every edit analysed with the plain and with the incremental parser, in turn; then, for
    the share of the parse, every edit only parsed, both ways (a parser of its own)."""
    plain = Timings("in-process, plain parser")
    incremental = Timings("in-process, IncrementalParser")
    plain_parse = Timings("  parse only, parse_source")
    incremental_parse = Timings("  parse only, IncrementalParser")
    parser = IncrementalParser()
    only = IncrementalParser()
    analyze_source(text, "train.py", SELECTION, parse=parser.parse)  # didOpen
    only.parse(text)
    reparsed: list[int] = []
    generated = 0  # re-parsed blocks whose code was generated to check them
    fallbacks = 0
    mismatches = 0
    clock = time.perf_counter
    for edit in edits:
        results = []
        for timings, parse in ((plain, parse_source), (incremental, parser.parse)):
            # each analysis splits the text into blocks as if it were the first to see it (a
            # split is remembered for whoever asks about the same text next)
            forget_recent_splits()
            start = clock()
            analysis = analyze_source(edit, "train.py", SELECTION, parse=parse)
            timings.ms.append((clock() - start) * 1000)
            timings.failed.append(any(d.code == "TL001" for d in analysis.diagnostics))
            results.append(analysis.diagnostics)
        reparsed.append(parser.stats.parsed)
        generated += parser.stats.generated
        fallbacks += parser.stats.fallback not in (None, "syntax error")
        mismatches += results[0] != results[1]
        for timings, parse in ((plain_parse, parse_source), (incremental_parse, only.parse)):
            with gc_paused():
                start = clock()
                parse(edit)
                timings.ms.append((clock() - start) * 1000)
            timings.failed.append(plain.failed[-1])
    return (
        [plain, incremental, plain_parse, incremental_parse],
        {
            "blocks": parser.stats.blocks,
            "blocks_parsed_mean": statistics.fmean(reparsed),
            "blocks_generated": generated,
            "fallbacks": fallbacks,
            "mismatched_diagnostics": mismatches,
        },
    )


def time_check(path: Path, repeat: int) -> dict[str, float]:
    """`python -m torchlint check FILE --no-cache` (wall) and `analyze_source` in-process."""
    walls = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "torchlint", "check", str(path), "--no-cache"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        walls.append((time.perf_counter() - start) * 1000)
    text = path.read_text(encoding="utf-8")
    inside = []
    for _ in range(repeat):
        start = time.perf_counter()
        analyze_source(text, str(path), SELECTION)
        inside.append((time.perf_counter() - start) * 1000)
        gc.collect()
    return {
        "cli_wall_best": min(walls),
        "cli_wall_median": statistics.median(walls),
        "analyze_best": min(inside),
        "analyze_median": statistics.median(inside),
    }


# --- timing over stdio ---------------------------------------------------------------------


class _Client:
    """Just enough JSON-RPC over a subprocess's stdio for didOpen / didChange / didSave and
    the publishDiagnostics that come back."""

    def __init__(self, command: Sequence[str], cwd: Path) -> None:
        self.process = subprocess.Popen(
            command,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._next_id = 0
        self._published: dict[int, float] = {}  # version -> when its diagnostics arrived
        self._responses: dict[int, Any] = {}
        self._condition = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = 0
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            message = json.loads(stream.read(length))
            self._handle(message)

    def _handle(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method == "textDocument/publishDiagnostics":
            version = message["params"].get("version")
            with self._condition:
                self._published.setdefault(version, time.perf_counter())
                self._condition.notify_all()
        elif method is not None and "id" in message:  # a request to us: answer with nothing
            self._send({"id": message["id"], "result": None})
        elif "id" in message:
            with self._condition:
                self._responses[message["id"]] = message
                self._condition.notify_all()

    def request(self, method: str, params: Any, timeout: float = 60.0) -> Any:
        self._next_id += 1
        ident = self._next_id
        self._send({"id": ident, "method": method, "params": params})
        with self._condition:
            if not self._condition.wait_for(lambda: ident in self._responses, timeout):
                raise TimeoutError(method)
            return self._responses.pop(ident)

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def published(self, version: int, timeout: float = 60.0) -> float:
        with self._condition:
            if not self._condition.wait_for(lambda: version in self._published, timeout):
                raise TimeoutError(f"publishDiagnostics for version {version}")
            return self._published[version]

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.process.wait(timeout=10)
        except Exception:
            self.process.kill()
            self.process.wait()


def time_stdio(path: Path, edits: Sequence[str], failed: Sequence[bool], save: bool) -> Timings:
    """didChange (and didSave, when `save`) per edit, until its publishDiagnostics arrives;
    `failed` says which edits leave a syntax error."""
    timings = Timings("stdio, didChange + didSave" if save else "stdio, didChange")
    client = _Client([sys.executable, "-m", "torchlint.lsp"], path.parent)
    try:
        uri = path.resolve().as_uri()
        client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": path.parent.resolve().as_uri(),
                "capabilities": {},
                "workspaceFolders": None,
            },
        )
        client.notify("initialized", {})
        text = path.read_text(encoding="utf-8")
        item = {"uri": uri, "languageId": "python", "version": 0, "text": text}
        client.notify("textDocument/didOpen", {"textDocument": item})
        client.published(0)
        for version, edit in enumerate(edits, start=1):
            start = time.perf_counter()
            client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"text": edit}],
                },
            )
            if save:
                client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
            arrived = client.published(version)
            timings.ms.append((arrived - start) * 1000)
            timings.failed.append(failed[version - 1])
    finally:
        client.close()
    return timings


def stdio_available() -> str | None:
    """None when `python -m torchlint.lsp` can be started, else why not."""
    try:
        import torchlint.lsp  # noqa: F401
    except ImportError as exc:
        return f"no language server ({exc})"
    return None


# --- report ----------------------------------------------------------------------------------


def print_table(result: dict[str, Any]) -> None:
    env = result["environment"]
    print("torchlint language-server latency: a new text in, its diagnostics out")
    print(
        f"python {env['python']}, libcst {env['libcst']}, torchlint {env['torchlint']}, "
        f"{env['cpus']} CPUs, load average before {env['load_before'][0]:.2f}"
    )
    print(
        f"{result['edits']} edits per file (seed {result['seed']}); times in ms, "
        "time.perf_counter, default rules"
    )
    for script in result["scripts"]:
        print()
        print(
            f"{script['name']}: {script['lines']} lines, {script['blocks']} top-level blocks; "
            f"{script['syntax_errors']} of the edits leave a syntax error; the incremental "
            f"parser re-parsed {script['blocks_parsed_mean']:.2f} blocks per edit on average "
            f"(generated the code of {script['blocks_generated']} to check them), fell back "
            f"{script['fallbacks']} times; diagnostics differed "
            f"{script['mismatched_diagnostics']} times"
        )
        header = (
            f"{'':36} {'p50':>7} {'p95':>7} {'max':>7} {'mean':>7}   {'p50 valid':>9} "
            f"{'p50 error':>9}"
        )
        print(header)
        print("-" * len(header))
        for label, summary in script["timings"].items():
            every, valid, broken = summary["all"], summary["valid"], summary["syntax_error"]
            print(
                f"{label:36} {every['p50']:7.1f} {every['p95']:7.1f} {every['max']:7.1f} "
                f"{every['mean']:7.1f}   {valid.get('p50', float('nan')):9.1f} "
                f"{broken.get('p50', float('nan')):9.1f}"
            )
        check = script["check"]
        print(
            f"torchlint check FILE --no-cache (subprocess wall): best {check['cli_wall_best']:.0f}"
            f", median {check['cli_wall_median']:.0f}; analyze_source once in-process: best "
            f"{check['analyze_best']:.1f}, median {check['analyze_median']:.1f}"
        )
    if result.get("stdio_skipped"):
        print(f"\nstdio: skipped ({result['stdio_skipped']})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=200, help="edits per script")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="corpus and edit seed")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the one-off check")
    parser.add_argument("--stdio", action="store_true", help="also time the language server")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)

    load_before = os.getloadavg()
    result: dict[str, Any] = {"edits": args.edits, "seed": args.seed, "scripts": []}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        corpus = generate(folder / "corpus", count=16, seed=args.seed)
        scripts = {
            "~300-line script": short_script(corpus),
            "~2,000-line script": long_script(corpus),
        }
        skipped = stdio_available() if args.stdio else "not asked for (--stdio)"
        for index, (name, text) in enumerate(scripts.items()):
            path = folder / f"train_{index}.py"
            path.write_text(text, encoding="utf-8")
            rng = random.Random(f"{args.seed}:{name}")
            edits = list(typing_session(text, args.edits, rng))
            measured, stats = time_edits(text, edits)
            timings = {each.label: each.summary() for each in measured}
            if skipped is None:
                try:
                    for save in (False, True):
                        stdio = time_stdio(path, edits, measured[0].failed, save)
                        timings[stdio.label] = stdio.summary()
                except Exception as exc:  # a server still being built: report what we have
                    skipped = f"the language server did not answer ({exc!r})"
            result["scripts"].append(
                {
                    "name": name,
                    "lines": text.count("\n"),
                    "syntax_errors": measured[0].summary()["syntax_errors"],
                    **stats,
                    "timings": timings,
                    "check": time_check(path, args.repeat),
                }
            )
        result["stdio_skipped"] = skipped
    result["environment"] = describe(load_before=load_before)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
