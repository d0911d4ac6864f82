"""The two training scripts the editor's end-to-end latency test types into, and where.

Writes `latency_300.py` (the corpus script closest to 300 lines) and `latency_2000.py` (corpus
scripts joined into one ~2,000-line module), the same two scripts `lsp_latency.py` times, and
`latency.json`, which says for each script where the test types: a `zero_grad()` call in a
training loop whose commenting out makes a TL102 appear ("gradients are never cleared") and
whose uncommenting makes it go away. One keystroke (`#` before the call, then Backspace) turns
the finding on and off, and the text parses after every keystroke.

The probe line is checked here, with the analysis the server runs: the finding must appear when
the line is commented out and be absent otherwise, and the flagged line must be within a screen
(20 lines) below the probe, so that the test sees the squiggle without scrolling.

    python benchmarks/editor_scripts.py OUTDIR [--seed 1234] [--time 8]

With `--time N` it also times the server's own work for the probe keystroke on this machine,
now: the analysis the language server runs (`Workspace.analyse` with an `IncrementalParser`,
the project and the lens targets) of the text with the call commented out and back, N times
each, and records the median as `analysis_ms`. The end-to-end test bounds the keystroke-to-
squiggle time by it (on a loaded machine both grow together).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp_latency import long_script, short_script
from make_corpus import DEFAULT_SEED, generate

from torchlint.analysis.incremental import IncrementalParser
from torchlint.engine import analyze_source
from torchlint.selection import RuleSelection
from torchlint.workspace import Workspace

PROBE_RULE = "TL102"
_ZERO_GRAD = re.compile(r"^(?P<indent>[ \t]+)\S*zero_grad\(\)\s*$")
SCREEN_LINES = 20


def _rows(text: str) -> set[int]:
    return {
        d.location.row for d in analyze_source(text, "train.py").diagnostics if d.code == PROBE_RULE
    }


def probe(text: str) -> dict[str, Any]:
    """The `zero_grad()` line nearest the middle of `text` that toggles a TL102 nearby."""
    lines = text.splitlines(keepends=True)
    before = _rows(text)
    middle = len(lines) / 2
    candidates = sorted(
        (index for index, line in enumerate(lines) if _ZERO_GRAD.match(line)),
        key=lambda index: abs(index - middle),
    )
    for index in candidates:
        indent = _ZERO_GRAD.match(lines[index]).group("indent")  # type: ignore[union-attr]
        commented = [
            *lines[:index],
            indent + "#" + lines[index][len(indent) :],
            *lines[index + 1 :],
        ]
        new = sorted(_rows("".join(commented)) - before)
        if len(new) == 1 and 0 < new[0] - (index + 1) <= SCREEN_LINES:
            return {
                "line": index + 1,  # 1-based, where `#` goes before the call
                "column": len(indent) + 1,
                "text": lines[index].strip(),
                "flagged_line": new[0],
                "rule": PROBE_RULE,
            }
    raise SystemExit(f"no zero_grad() line toggles a single {PROBE_RULE} in this script")


def analysis_ms(path: Path, probe: dict[str, Any], repeat: int) -> float:
    """The median time of the server's analysis of the probe keystroke's two texts."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    index = probe["line"] - 1
    cut = probe["column"] - 1
    commented = "".join(
        [*lines[:index], lines[index][:cut] + "#" + lines[index][cut:], *lines[index + 1 :]]
    )
    workspace, parser, selection = Workspace(), IncrementalParser(), RuleSelection()

    def analyse(source: str) -> None:
        workspace.changed(path)
        workspace.analyse(
            source, str(path), selection, path=path, parse=parser.parse, training_loops=True
        )

    analyse(text)
    times = []
    for round_ in range(2 * repeat):
        start = time.perf_counter()
        analyse(commented if round_ % 2 == 0 else text)
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 1)


def write(folder: Path, seed: int, repeat: int = 0) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = generate(Path(tmp) / "corpus", count=16, seed=seed)
        scripts = {"latency_300.py": short_script(corpus), "latency_2000.py": long_script(corpus)}
    result: dict[str, Any] = {"seed": seed, "scripts": {}}
    for name, text in scripts.items():
        (folder / name).write_text(text, encoding="utf-8")
        result["scripts"][name] = {"lines": text.count("\n"), **probe(text)}
        if repeat:
            found = result["scripts"][name]
            found["analysis_ms"] = analysis_ms(folder / name, found, repeat)
    (folder / "latency.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--time", type=int, default=0, metavar="N", help="time the analysis")
    args = parser.parse_args(argv)
    print(json.dumps(write(args.folder, args.seed, args.time), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
