"""The rule docs in rules/: each rule has one, laid out the same way, and its code blocks tell the
truth: every `## Example` block gets the rule's finding, and no `## Use instead` or
`## Not flagged` block does. The packaging test at the end checks that the docs ship in the
wheel and are found there through importlib.resources."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path
from typing import NamedTuple

import pytest

from torchlint.docs import (
    CHECKOUT_DOCS,
    CHECKOUT_ROOT,
    doc_examples,
    doc_filename,
    doc_title,
    facts_line,
    python_blocks,
    rule_doc,
    rule_sections,
    rules_table_markdown,
)
from torchlint.engine import analyze
from torchlint.rules import ALL_RULES, Rule
from torchlint.rules.syntax_error import SyntaxErrorRule
from torchlint.selection import RuleSelection

ALL = RuleSelection(select=("ALL",))

# The `##` sections a doc may have, in the order they must appear.
SECTION_ORDER = (
    "What it does",
    "Why is this bad?",
    "Example",
    "Use instead",
    "Not flagged",
    "Fix",
    "Options",
    "References",
)
REQUIRED = ("What it does", "Why is this bad?", "Example", "Use instead", "Not flagged")
MIN_LINES, MAX_LINES = 5, 30


class Block(NamedTuple):
    rule: type[Rule]
    section: str  # "example" | "use instead" | "not flagged"
    number: int  # 1-based, within the section
    source: str


def _doc_path(rule: type[Rule]) -> Path:
    return CHECKOUT_DOCS / doc_filename(rule)


def _blocks() -> list[Block]:
    blocks = []
    for rule in ALL_RULES:
        path = _doc_path(rule)
        if not path.is_file():
            continue  # test_doc_exists reports it
        examples = doc_examples(path.read_text(encoding="utf-8"))
        for section in ("example", "use instead", "not flagged"):
            for number, source in enumerate(examples[section], start=1):
                blocks.append(Block(rule, section, number, source))
    return blocks


def _block_id(block: Block) -> str:
    return f"{block.rule.code}-{block.rule.name}/{block.section.replace(' ', '-')}-{block.number}"


BLOCKS = _blocks()
FIRING = [b for b in BLOCKS if b.section == "example"]
SILENT = [b for b in BLOCKS if b.section != "example"]


def _report(block: Block) -> str:
    lines = [f"{n:3}  {line}" for n, line in enumerate(block.source.splitlines(), start=1)]
    found = [
        f"{d.code} line {d.location.row}: {d.message}" for d in analyze(block.source, "doc.py", ALL)
    ]
    return "\n".join([*lines, "findings:", *(found or ["(none)"])])


# --- every rule has a doc, laid out the same way --------------------------------------------------


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_doc_exists(rule: type[Rule]) -> None:
    path = _doc_path(rule)
    assert path.is_file(), f"missing {path.relative_to(CHECKOUT_ROOT)}"
    text = path.read_text(encoding="utf-8")
    assert rule_doc(rule.code) == text
    assert rule_doc(rule.code.lower()) == text
    assert rule_doc(rule.name) == text


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_doc_layout(rule: type[Rule]) -> None:
    text = _doc_path(rule).read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == doc_title(rule), "the first line must be `# <name> (<code>)`"
    sections = rule_sections(text)
    titles = list(sections)
    assert titles[0] == doc_title(rule)[2:]
    assert sections[titles[0]] == facts_line(rule), "the line under the title is out of date"
    headings = titles[1:]
    unknown = [h for h in headings if h not in SECTION_ORDER]
    assert not unknown, f"unexpected sections {unknown}; allowed: {SECTION_ORDER}"
    assert headings == sorted(headings, key=SECTION_ORDER.index), "sections out of order"
    required = (*REQUIRED, "Fix") if rule.fixable else REQUIRED
    missing = [h for h in required if h not in headings]
    assert not missing, f"missing sections {missing}"
    for heading in headings:
        assert sections[heading].strip(), f"`## {heading}` is empty"


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_doc_has_code_in_each_example_section(rule: type[Rule]) -> None:
    examples = doc_examples(_doc_path(rule).read_text(encoding="utf-8"))
    assert examples["example"], "`## Example` needs at least one python block"
    assert examples["use instead"], "`## Use instead` needs at least one python block"
    assert len(examples["not flagged"]) >= 2, "`## Not flagged` needs at least two near-misses"


def test_every_doc_belongs_to_a_rule() -> None:
    expected = {doc_filename(rule) for rule in ALL_RULES}
    found = {p.name for p in CHECKOUT_DOCS.glob("*.md")}
    assert found <= expected, f"docs for no registered rule: {sorted(found - expected)}"


# --- the code blocks ----------------------------------------------------------------------------


@pytest.mark.parametrize("block", FIRING, ids=_block_id)
def test_example_is_reported(block: Block) -> None:
    codes = {d.code for d in analyze(block.source, "doc.py", ALL)}
    assert block.rule.code in codes, _report(block)


@pytest.mark.parametrize("block", SILENT, ids=_block_id)
def test_silent_block_is_not_reported(block: Block) -> None:
    codes = {d.code for d in analyze(block.source, "doc.py", ALL)}
    assert block.rule.code not in codes, _report(block)
    assert SyntaxErrorRule.code not in codes, "the block must parse, or nothing in it is checked"


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.section == "use instead"], ids=_block_id)
def test_use_instead_is_clean(block: Block) -> None:
    """The recommended code is reported by no rule at all."""
    assert not analyze(block.source, "doc.py", ALL), _report(block)


@pytest.mark.parametrize(
    "block",
    [b for b in BLOCKS if b.section != "not flagged" and b.rule is not SyntaxErrorRule],
    ids=_block_id,
)
def test_block_parses(block: Block) -> None:
    ast.parse(block.source)


@pytest.mark.parametrize("block", BLOCKS, ids=_block_id)
def test_block_is_short(block: Block) -> None:
    assert MIN_LINES <= len(block.source.splitlines()) <= MAX_LINES


# --- the Markdown reader ------------------------------------------------------------------------

SAMPLE = textwrap.dedent(
    """\
    # some-rule (TL999)

    facts

    ## Example

    Text.

    ```python
    # a comment, not a heading
    x = 1
    ```

    ```text
    not python
    ```

    ### A sub-heading stays in its section

    ~~~py
    y = 2
    ~~~

    ## Use instead

    ````python
    ```
    z = 3
    ````

    ## Fix

    ```python
    w = 4
    ```
    """
)


def test_rule_sections() -> None:
    sections = rule_sections(SAMPLE)
    assert list(sections) == ["some-rule (TL999)", "Example", "Use instead", "Fix"]
    assert sections["some-rule (TL999)"] == "facts"
    assert "# a comment, not a heading" in sections["Example"]
    assert "### A sub-heading stays in its section" in sections["Example"]


def test_doc_examples() -> None:
    examples = doc_examples(SAMPLE)
    assert examples["example"] == ["# a comment, not a heading\nx = 1\n", "y = 2\n"]
    assert examples["use instead"] == ["```\nz = 3\n"]
    assert examples["not flagged"] == []
    assert examples["fix"] == ["w = 4\n"]
    assert python_blocks("```python\nunclosed\n") == []


def test_unknown_rule_has_no_doc() -> None:
    assert rule_doc("TL999") is None
    assert rule_doc("no-such-rule") is None


def test_rules_table_links_every_doc() -> None:
    table = rules_table_markdown()
    rows = [line for line in table.splitlines() if line.startswith("| [TL")]
    assert len(rows) == len(ALL_RULES)
    for rule, row in zip(ALL_RULES, rows, strict=True):
        assert row.startswith(f"| [{rule.code}](rules/{doc_filename(rule)}) | `{rule.name}` |")
        assert (CHECKOUT_ROOT / "rules" / doc_filename(rule)).is_file()


# --- packaging: the docs ship in the wheel ------------------------------------------------------

_PROBE = """
import json, torchlint, torchlint.docs as docs
print(json.dumps({
    "package": torchlint.__file__,
    "first": str(docs.packaged_docs().joinpath(docs.doc_filename(docs.ALL_RULES[0]))),
    "checkout_docs": docs.CHECKOUT_DOCS.is_dir(),
    "docs": {rule.code: docs.rule_doc(rule.code) for rule in docs.ALL_RULES},
}))
"""


def _copy_project(target: Path) -> None:
    """The files a build reads, so that building leaves nothing behind in the checkout."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(CHECKOUT_ROOT / "torchlint", target / "torchlint", ignore=ignore)
    shutil.copytree(CHECKOUT_DOCS, target / "rules")
    shutil.copy2(CHECKOUT_ROOT / "pyproject.toml", target / "pyproject.toml")
    readme = CHECKOUT_ROOT / "README.md"
    if readme.is_file():
        shutil.copy2(readme, target / "README.md")
    else:
        (target / "README.md").write_text("torchlint\n", encoding="utf-8")


@pytest.mark.skipif(
    importlib.util.find_spec("setuptools") is None,
    reason="building the wheel without build isolation needs setuptools (the dev extra)",
)
def test_wheel_ships_rule_docs(tmp_path: Path) -> None:
    source, dist, site = tmp_path / "src", tmp_path / "dist", tmp_path / "site"
    _copy_project(source)
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "--disable-pip-version-check",
            "-w",
            str(dist),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = dist.glob("torchlint-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        archive.extractall(site)

    for rule in ALL_RULES:
        assert f"torchlint/rule_docs/{doc_filename(rule)}" in names
    modules = {
        p.relative_to(CHECKOUT_ROOT).as_posix()
        for p in (CHECKOUT_ROOT / "torchlint").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    missing = sorted(modules - names)
    assert not missing, (
        f"modules left out of the wheel (add their package to [tool.setuptools] packages in "
        f"pyproject.toml): {missing}"
    )

    # Import the unpacked wheel, away from the checkout: the docs must come from the package.
    env = {**os.environ, "PYTHONPATH": str(site)}
    probe = subprocess.run(
        [sys.executable, "-c", _PROBE],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.returncode == 0, probe.stderr
    result = json.loads(probe.stdout)
    assert Path(result["package"]).is_relative_to(site)
    assert not result["checkout_docs"]
    assert Path(result["first"]) == site / "torchlint" / "rule_docs" / doc_filename(ALL_RULES[0])
    for rule in ALL_RULES:
        assert result["docs"][rule.code] == _doc_path(rule).read_text(encoding="utf-8")
