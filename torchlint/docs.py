"""The rule documentation: one Markdown file per rule, `rules/<code>-<name>.md` at the root of the
repository. The wheel ships the same files as the package data `torchlint.rule_docs`, so
`torchlint rule TL101` works from an installed copy as well as from a checkout.

`python -m torchlint.docs` prints the README's rule table; `--write-readme` rewrites it in place
and `--check-readme` fails when it is stale.
"""

from __future__ import annotations

import argparse
import enum
import re
import sys
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from torchlint.rules import ALL_RULES, Rule, lookup

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

DOCS_PACKAGE = "torchlint.rule_docs"
CHECKOUT_ROOT = Path(__file__).resolve().parent.parent
CHECKOUT_DOCS = CHECKOUT_ROOT / "rules"
README = CHECKOUT_ROOT / "README.md"
TABLE_START = "<!-- rules-table:start -->"
TABLE_END = "<!-- rules-table:end -->"

# The sections whose python blocks are run through the analyzer by the test-suite.
EXAMPLE_SECTIONS = ("example", "use instead", "not flagged")

# Sections split at `#` and `##` headings; deeper headings stay inside their section.
_HEADING = re.compile(r"^(#{1,2})\s+(?P<text>.+?)(?:\s+#+)?\s*$")
_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})\s*(?P<info>[^\s`]*)")
_PYTHON_INFO = frozenset({"python", "py", "python3"})


# --- finding the documents ---------------------------------------------------------------------


def doc_filename(rule: type[Rule]) -> str:
    return f"{rule.code}-{rule.name}.md"


def doc_title(rule: type[Rule]) -> str:
    """The first line of a rule's doc."""
    return f"# {rule.name} ({rule.code})"


def facts_line(rule: type[Rule]) -> str:
    """The line under the title, stating what the registry says about the rule."""
    default = "enabled" if rule.default_enabled else "disabled"
    fix = "available" if rule.fixable else "none"
    return (
        f"**Family:** {rule.family} · **Severity:** {rule.severity.value} · "
        f"**Default:** {default} · **Fix:** {fix}"
    )


def packaged_docs() -> Traversable | None:
    """The folder of rule docs installed with the package (None when running from a checkout
    whose install does not map it)."""
    try:
        folder = resources.files(DOCS_PACKAGE)
    except (ModuleNotFoundError, TypeError):  # not installed, or not a package
        return None
    return folder if folder.is_dir() else None


def _doc_folders() -> Iterator[Traversable]:
    packaged = packaged_docs()
    if packaged is not None:
        yield packaged
    if CHECKOUT_DOCS.is_dir():
        yield CHECKOUT_DOCS


def rule_doc(code_or_name: str) -> str | None:
    """The Markdown documentation of a rule, by code (`TL101`, any case) or name
    (`missing-optimizer-step`); None for an unknown rule or a missing document."""
    rule = lookup(code_or_name.strip())
    if rule is None:
        return None
    for folder in _doc_folders():
        doc = folder.joinpath(doc_filename(rule))
        if doc.is_file():
            return doc.read_text(encoding="utf-8")
    return None


# --- reading a document ------------------------------------------------------------------------


class _Line(enum.Enum):
    TEXT = "text"
    OPEN = "open"  # an opening fence
    CODE = "code"
    CLOSE = "close"  # a closing fence


def _scan(markdown: str) -> Iterator[tuple[str, _Line, str]]:
    """Each line, what it is, and the info string of the fenced block it belongs to."""
    fence: str | None = None
    info = ""
    for line in markdown.splitlines():
        if fence is None:
            match = _FENCE.match(line)
            if match is None:
                yield line, _Line.TEXT, ""
            else:
                fence, info = match.group("fence"), match.group("info").lower()
                yield line, _Line.OPEN, info
            continue
        stripped = line.strip()
        if stripped.startswith(fence) and not stripped.strip(fence[0]):
            fence = None
            yield line, _Line.CLOSE, info
        else:
            yield line, _Line.CODE, info


def rule_sections(markdown: str) -> dict[str, str]:
    """Heading text -> the Markdown under it, in document order. The title (`# name (TL101)`) is
    a key too, its body the line of facts under it. A `#` line inside fenced code is a comment,
    never a heading; `###` headings stay inside the section that holds them."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line, kind, _ in _scan(markdown):
        heading = _HEADING.match(line) if kind is _Line.TEXT else None
        if heading is not None:
            current = sections.setdefault(heading.group("text"), [])
        elif current is not None:
            current.append(line)
    return {title: "\n".join(body).strip("\n") for title, body in sections.items()}


def python_blocks(markdown: str) -> list[str]:
    """The source of each fenced python block in `markdown`, in order."""
    blocks: list[str] = []
    current: list[str] = []
    for line, kind, info in _scan(markdown):
        if info not in _PYTHON_INFO:
            continue
        if kind is _Line.OPEN:
            current = []
        elif kind is _Line.CODE:
            current.append(line)
        elif kind is _Line.CLOSE:
            blocks.append("\n".join(current) + "\n")
    return blocks


def doc_examples(markdown: str) -> dict[str, list[str]]:
    """The python blocks of each section, keyed by the lower-cased heading: `"example"`,
    `"use instead"` and `"not flagged"` always, and any other section that holds python code."""
    examples: dict[str, list[str]] = {name: [] for name in EXAMPLE_SECTIONS}
    for title, body in rule_sections(markdown).items():
        blocks = python_blocks(body)
        if blocks:
            examples.setdefault(title.lower(), []).extend(blocks)
    return examples


# --- the README's rule table -------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def rules_table_markdown() -> str:
    """The rule table of the README: one row per registered rule, its code linking to its doc."""
    rows = [
        "| Code | Name | Family | Severity | Default | Fix | Summary |",
        "| ---- | ---- | ------ | -------- | ------- | --- | ------- |",
    ]
    for rule in ALL_RULES:
        cells = (
            f"[{rule.code}](rules/{doc_filename(rule)})",
            f"`{rule.name}`",
            rule.family,
            rule.severity.value,
            "on" if rule.default_enabled else "off",
            "yes" if rule.fixable else "",
            _cell(rule.summary),
        )
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def replace_table(readme: str, table: str) -> str:
    """`readme` with the text between the table markers replaced by `table`."""
    start = readme.find(TABLE_START)
    end = readme.find(TABLE_END)
    if start < 0 or end < start:
        raise ValueError(f"the README has no `{TABLE_START}` ... `{TABLE_END}` section")
    head = readme[: start + len(TABLE_START)]
    return f"{head}\n{table}{readme[end:]}"


def readme_table(readme: str) -> str | None:
    """The text between the table markers (without the newline after the start marker)."""
    start = readme.find(TABLE_START)
    end = readme.find(TABLE_END)
    if start < 0 or end < start:
        return None
    return readme[start + len(TABLE_START) : end].removeprefix("\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m torchlint.docs",
        description="Print the README's rule table, or bring README.md up to date with it.",
    )
    action = parser.add_mutually_exclusive_group()
    action.add_argument(
        "--write-readme", action="store_true", help="rewrite the table section of the README"
    )
    action.add_argument(
        "--check-readme", action="store_true", help="exit 1 when the README's table is stale"
    )
    parser.add_argument("--readme", type=Path, default=README, help="default: %(default)s")
    args = parser.parse_args(argv)
    table = rules_table_markdown()
    if not (args.write_readme or args.check_readme):
        sys.stdout.write(table)
        return 0
    path: Path = args.readme
    text = path.read_text(encoding="utf-8")
    if args.check_readme:
        if readme_table(text) == table:
            return 0
        print(f"{path}: the rule table is stale; run `python -m torchlint.docs --write-readme`")
        return 1
    try:
        updated = replace_table(text, table)
    except ValueError as exc:
        print(f"{path}: {exc}", file=sys.stderr)
        return 2
    if updated != text:
        path.write_text(updated, encoding="utf-8")
        print(f"{path}: rule table updated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
