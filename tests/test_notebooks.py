"""Jupyter notebooks: `torchlint check` on `.ipynb` files, as a subprocess, and the mapping of the
virtual source back to cells."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torchlint.diagnostics import Diagnostic, Edit, Fix, Location, Severity
from torchlint.notebook import (
    BOUNDARY,
    analyze_notebook,
    edits_within_cells,
    read,
)

if TYPE_CHECKING:
    from conftest import RunTorchlint

SELECT = ("--select", "TL001,TL101,TL204,TL301", "--no-cache")


def code(source: str, count: int | None = None, outputs: list[Any] | None = None) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "execution_count": count,
        "metadata": {"tags": ["keep-me"]},
        "outputs": outputs or [],
        "source": source.splitlines(keepends=True),
    }


def markdown(source: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "metadata": {}, "source": source.splitlines(keepends=True)}


def notebook(*cells: dict[str, Any]) -> dict[str, Any]:
    return {
        "cells": list(cells),
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def write_notebook(path: Path, content: dict[str, Any]) -> Path:
    # As Jupyter writes it: indent 1, non-ASCII as is, a final newline.
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


SETUP = (
    "%matplotlib inline\n"
    "import torch\n"
    "model = torch.nn.Linear(2, 1)\n"
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)"
)
LOOP = (
    "!pip install torch\n"
    "for x, y in [(torch.randn(4, 2), torch.randn(4, 1))]:\n"
    "    optimizer.zero_grad()\n"
    "    loss = torch.nn.functional.mse_loss(model(x), y)\n"
    "    loss.backward()\n"
)
OUTPUT = {"output_type": "stream", "name": "stdout", "text": ["tensor(0.5)\n"]}


def split_loop() -> dict[str, Any]:
    """A training loop split across cells: TL101 on line 5 of cell 3 (the markdown cell is 2)."""
    return notebook(code(SETUP, 1, [OUTPUT]), markdown("# Train\n"), code(LOOP, 2))


def test_loop_split_across_cells_reported_with_cell_and_line(
    tmp_path: Path, run_torchlint: RunTorchlint
) -> None:
    write_notebook(tmp_path / "train.ipynb", split_loop())
    full = run_torchlint("check", *SELECT, "train.ipynb", cwd=tmp_path)
    assert full.returncode == 1, full.stderr
    lines = full.stdout.splitlines()
    assert lines[0].startswith("train.ipynb:cell 3:5:5: TL101 ")
    # The code frame shows the cell's own lines.
    assert "3 |     optimizer.zero_grad()" in full.stdout
    assert "5 |     loss.backward()" in full.stdout
    assert lines[-1] == "Found 1 error."

    result = run_torchlint("check", *SELECT, "--output-format", "json", ".", cwd=tmp_path)
    data = json.loads(result.stdout)
    assert [(d["code"], d["cell"], d["location"], d["end_location"]) for d in data] == [
        ("TL101", 3, {"row": 5, "column": 5}, {"row": 5, "column": 20})
    ]
    assert list(data[0])[5:8] == ["filename", "cell", "location"]

    concise = run_torchlint("check", *SELECT, "--output-format", "concise", ".", cwd=tmp_path)
    assert concise.stdout.splitlines()[0].startswith("train.ipynb:cell 3:5:5: TL101 ")
    github = run_torchlint("check", *SELECT, "--output-format", "github", ".", cwd=tmp_path)
    assert "file=train.ipynb,line=5,col=5,endLine=5,endColumn=20::cell 3: TL101 " in github.stdout
    sarif = json.loads(
        run_torchlint("check", *SELECT, "--output-format", "sarif", ".", cwd=tmp_path).stdout
    )
    (found,) = sarif["runs"][0]["results"]
    assert found["properties"] == {"cell": 3}
    assert found["locations"][0]["physicalLocation"]["region"]["startLine"] == 5


def test_py_json_output_has_no_cell(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    (tmp_path / "a.py").write_text("from torch.cuda.amp import GradScaler\nGradScaler()\n")
    result = run_torchlint("check", *SELECT, "--output-format", "json", ".", cwd=tmp_path)
    assert "cell" not in json.loads(result.stdout)[0]


def test_near_miss_notebook_is_clean(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    loop = LOOP + "    optimizer.step()\n"
    content = notebook(code(SETUP, 1), markdown("text"), code(loop, 2), code("%%time\nx y z\n"))
    write_notebook(tmp_path / "ok.ipynb", content)
    result = run_torchlint("check", *SELECT, ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "All checks passed!"


def test_fix_rewrites_only_that_cell(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    content = notebook(
        code("%load_ext autoreload\nimport torch", 1, [OUTPUT]),
        markdown("## Mixed precision ü\n"),
        code("from torch.cuda.amp import GradScaler\nscaler = GradScaler()\nscaler?", 7, [OUTPUT]),
        code("print('untouched')", None),
    )
    content["metadata"]["custom"] = {"z": 1, "a": [1.5, "é"]}
    path = write_notebook(tmp_path / "amp.ipynb", content)
    before = json.loads(path.read_text(encoding="utf-8"))

    result = run_torchlint("check", *SELECT, "--fix", "amp.ipynb", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Fixed 1 error." in result.stdout
    text = path.read_text(encoding="utf-8")
    after = json.loads(text)
    # `torch` is imported in the first cell: the import the fix leaves unused goes.
    assert after["cells"][2]["source"] == [
        'scaler = torch.amp.GradScaler("cuda")\n',
        "scaler?",
    ]
    # Everything else is as it was: other cells, outputs, metadata, counts, key order, layout.
    before["cells"][2]["source"] = after["cells"][2]["source"]
    assert after == before
    assert list(after) == list(before)
    assert text == json.dumps(before, indent=1, ensure_ascii=False) + "\n"

    mtime = path.stat().st_mtime_ns
    again = run_torchlint("check", *SELECT, "--fix", "amp.ipynb", cwd=tmp_path)
    assert again.returncode == 0
    assert again.stdout.strip() == "All checks passed!"
    assert path.stat().st_mtime_ns == mtime  # nothing to change: not rewritten


def test_diff_shows_cells_and_writes_nothing(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    content = notebook(code("from torch.cuda.amp import GradScaler\nscaler = GradScaler()\n"))
    path = write_notebook(tmp_path / "amp.ipynb", content)
    original = path.read_bytes()
    result = run_torchlint("check", *SELECT, "--diff", "amp.ipynb", cwd=tmp_path)
    assert result.returncode == 1
    assert "--- a/amp.ipynb:cell 1" in result.stdout
    assert '+scaler = torch.amp.GradScaler("cuda")' in result.stdout
    assert path.read_bytes() == original


def test_malformed_notebooks_are_one_tl001_each(
    tmp_path: Path, run_torchlint: RunTorchlint
) -> None:
    (tmp_path / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    (tmp_path / "old.ipynb").write_text(
        json.dumps({"nbformat": 3, "worksheets": []}), encoding="utf-8"
    )
    (tmp_path / "list.ipynb").write_text("[1, 2]", encoding="utf-8")
    result = run_torchlint("check", *SELECT, "--output-format", "concise", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("broken.ipynb:1:1: TL001 Cannot read the notebook: not valid JSON")
    assert lines[1].startswith("list.ipynb:1:1: TL001 Cannot read the notebook: not a notebook")
    assert lines[2].startswith("old.ipynb:1:1: TL001 Cannot read the notebook: nbformat 3")
    fixed = run_torchlint("check", *SELECT, "--fix", ".", cwd=tmp_path)
    assert fixed.returncode == 1 and "Traceback" not in fixed.stderr


def test_discovery_and_exclude(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    write_notebook(tmp_path / "nb" / "a.ipynb", split_loop())
    write_notebook(tmp_path / "skip" / "b.ipynb", split_loop())
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nexclude = ["skip/"]\n')
    result = run_torchlint("check", *SELECT, "--output-format", "concise", ".", cwd=tmp_path)
    assert [line.split(":")[0] for line in result.stdout.splitlines()[:-1]] == [
        str(Path("nb") / "a.ipynb")
    ]


def test_cache_hit_keeps_cells(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    write_notebook(tmp_path / "train.ipynb", split_loop())
    args = ("check", "--select", "TL101", "--output-format", "concise", ".")
    first = run_torchlint(*args, cwd=tmp_path)
    second = run_torchlint(*args, cwd=tmp_path)
    assert first.stdout == second.stdout
    assert second.stdout.startswith("train.ipynb:cell 3:5:5: TL101")


# --- the virtual source ----------------------------------------------------------------------


def _bytes(content: dict[str, Any]) -> bytes:
    return json.dumps(content).encode()


def test_virtual_source_keeps_lines_aligned() -> None:
    content = notebook(
        code("%%bash\necho hi"),
        markdown("x"),
        code("import torch\n!ls\nfiles = !ls\nfor i in range(3):\n    %time f()\nhelp?"),
        code("?torch.zeros\nx = 1 % 2"),
    )
    parsed = read(_bytes(content))
    assert [cell.index for cell in parsed.cells] == [3, 4]
    assert parsed.virtual.splitlines()[6] == BOUNDARY
    assert parsed.virtual.splitlines()[8] == "x = 1 % 2"
    assert parsed.rows[5] == (3, 5)
    assert parsed.rows[9] == (4, 2)
    assert analyze_notebook(_bytes(content), "n.ipynb").diagnostics == []


def test_non_python_notebook_is_skipped() -> None:
    content = notebook(code("x <- c(1, 2"))
    content["metadata"] = {"kernelspec": {"language": "R"}}
    assert analyze_notebook(_bytes(content), "r.ipynb").diagnostics == []


def test_syntax_error_in_a_cell_names_the_cell() -> None:
    content = notebook(code("import torch"), markdown("m"), code("x = (\n"))
    (found,) = analyze_notebook(_bytes(content), "s.ipynb").diagnostics
    assert found.code == "TL001"
    assert found.cell == 3


def _with_edit(start: Location, end: Location) -> Diagnostic:
    fix = Fix("safe", "m", (Edit("x", start, end),))
    return Diagnostic("TL204", "n", "m", Severity.WARNING, "f", start, end, fix)


def test_edits_across_a_boundary_are_refused() -> None:
    text = f"a = 1\n{BOUNDARY}\nb = 2\n"
    assert edits_within_cells(text, _with_edit(Location(1, 1), Location(1, 2)))
    assert edits_within_cells(text, _with_edit(Location(1, 1), Location(2, 1)))
    assert not edits_within_cells(text, _with_edit(Location(1, 1), Location(3, 1)))
    assert not edits_within_cells(text, _with_edit(Location(2, 1), Location(2, 1)))
    assert edits_within_cells(text, _with_edit(Location(3, 1), Location(3, 3)))
