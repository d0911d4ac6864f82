"""The README's rule table is generated from the registry; it must not drift from it.
Regenerate it with `python -m torchlint.docs --write-readme`."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchlint.docs import (
    README,
    TABLE_END,
    TABLE_START,
    main,
    readme_table,
    replace_table,
    rules_table_markdown,
)


def test_readme_table_matches_registry() -> None:
    assert README.is_file(), "README.md is missing"
    text = README.read_text(encoding="utf-8")
    assert TABLE_START in text and TABLE_END in text, (
        f"README.md needs a `{TABLE_START}` ... `{TABLE_END}` section for the rule table"
    )
    assert readme_table(text) == rules_table_markdown(), (
        "the README's rule table is stale: run `python -m torchlint.docs --write-readme`"
    )


STALE = f"# Project\n\nIntro.\n\n{TABLE_START}\n| old | table |\n{TABLE_END}\n\nMore text.\n"


def test_replace_table_keeps_the_rest() -> None:
    table = rules_table_markdown()
    updated = replace_table(STALE, table)
    assert updated.startswith("# Project\n\nIntro.\n\n")
    assert updated.endswith(f"{TABLE_END}\n\nMore text.\n")
    assert readme_table(updated) == table
    assert replace_table(updated, table) == updated


def test_replace_table_needs_markers() -> None:
    with pytest.raises(ValueError):
        replace_table("# Project\n", rules_table_markdown())
    assert readme_table("# Project\n") is None


def test_write_and_check_readme(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(STALE, encoding="utf-8")
    assert main(["--check-readme", "--readme", str(readme)]) == 1
    assert main(["--write-readme", "--readme", str(readme)]) == 0
    assert readme_table(readme.read_text(encoding="utf-8")) == rules_table_markdown()
    assert main(["--check-readme", "--readme", str(readme)]) == 0
    capsys.readouterr()
    assert main([]) == 0
    assert capsys.readouterr().out == rules_table_markdown()


def test_write_readme_without_markers_fails(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# Project\n", encoding="utf-8")
    assert main(["--write-readme", "--readme", str(readme)]) == 2
    assert readme.read_text(encoding="utf-8") == "# Project\n"
