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

    python benchmarks/editor_scripts.py OUTDIR [--seed 1234]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp_latency import long_script, short_script
from make_corpus import DEFAULT_SEED, generate

from torchlint.engine import analyze_source

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


def write(folder: Path, seed: int) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = generate(Path(tmp) / "corpus", count=16, seed=seed)
        scripts = {"latency_300.py": short_script(corpus), "latency_2000.py": long_script(corpus)}
    result: dict[str, Any] = {"seed": seed, "scripts": {}}
    for name, text in scripts.items():
        (folder / name).write_text(text, encoding="utf-8")
        result["scripts"][name] = {"lines": text.count("\n"), **probe(text)}
    (folder / "latency.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    print(json.dumps(write(args.folder, args.seed), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
