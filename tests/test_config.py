"""Configuration files, the pattern matcher, and how settings are resolved per file."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchlint.config import (
    CliOverrides,
    ConfigError,
    ConfigResolver,
    PathPattern,
    load_config,
    parse_selector_option,
    patterns_match,
    resolve_settings,
)
from torchlint.selection import RuleSelection


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def codes(selection: RuleSelection) -> set[str]:
    return {rule.code for rule in selection.rules()}


# --- the gitignore-style matcher -----------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "expected"),
    [
        # no slash: a name at any depth
        ("build", "build", True, True),
        ("build", "src/build", True, True),
        ("build", "src/build", False, True),
        ("*.py", "a/b/c.py", False, True),
        ("*.py", "a/b/c.pyi", False, False),
        ("test_?.py", "tests/test_1.py", False, True),
        ("test_?.py", "tests/test_10.py", False, False),
        ("[ab].py", "x/a.py", False, True),
        ("[!ab].py", "x/a.py", False, False),
        ("[!ab].py", "x/c.py", False, True),
        # a leading or middle slash anchors to the configuration's folder
        ("/train.py", "train.py", False, True),
        ("/train.py", "src/train.py", False, False),
        ("src/train.py", "src/train.py", False, True),
        ("src/train.py", "lib/src/train.py", False, False),
        ("src/*.py", "src/a.py", False, True),
        ("src/*.py", "src/sub/a.py", False, False),  # `*` does not cross `/`
        # trailing slash: folders only
        ("gen/", "gen", True, True),
        ("gen/", "gen", False, False),
        ("gen/", "pkg/gen", True, True),
        # `**`
        ("**/gen", "gen", True, True),
        ("**/gen", "a/b/gen", True, True),
        ("a/**/b.py", "a/b.py", False, True),
        ("a/**/b.py", "a/x/y/b.py", False, True),
        ("a/**/b.py", "c/a/x/b.py", False, False),
        ("a/**", "a/x", False, True),
        ("a/**", "a/x/y.py", False, True),
        ("a/**", "a", True, False),
        ("**", "anything/at/all.py", False, True),
        # escapes
        (r"\*.py", "*.py", False, True),
        (r"\*.py", "a.py", False, False),
    ],
)
def test_pattern(pattern: str, path: str, is_dir: bool, expected: bool) -> None:
    assert PathPattern(pattern).matches(path, is_dir) is expected


def test_patterns_match_ancestors_and_negation() -> None:
    patterns = (PathPattern("gen/"), PathPattern("*.pyi"), PathPattern("!keep.pyi"))
    assert patterns_match(patterns, ("gen", "x.py"), False)  # inside an excluded folder
    assert not patterns_match(patterns, ("gen", "x.py"), False, ancestors=False)
    assert patterns_match(patterns, ("a", "b.pyi"), False)
    assert not patterns_match(patterns, ("a", "keep.pyi"), False)  # re-included
    # A folder excluded above cannot be re-included below (as in git).
    nested = (PathPattern("gen/"), PathPattern("!gen/keep.py"))
    assert patterns_match(nested, ("gen", "keep.py"), False)
    # Anchored patterns say nothing about paths outside the configuration's folder.
    assert not patterns_match((PathPattern("/x.py"),), ("x.py",), False, anchored_ok=False)
    assert patterns_match((PathPattern("x.py"),), ("x.py",), False, anchored_ok=False)


def test_unusable_pattern() -> None:
    with pytest.raises(ValueError):
        PathPattern("/")


# --- reading a pyproject.toml --------------------------------------------------------------


def test_load_full_config(tmp_path: Path) -> None:
    path = write(
        tmp_path / "pyproject.toml",
        """\
[project]
name = "demo"

[tool.torchlint]
select = ["TL1", "item-in-hot-loop"]
ignore = ["TL105"]
exclude = ["gen/", "*_pb2.py"]
target-torch-version = "2.3"

[tool.torchlint.per-file-ignores]
"tests/**" = ["TL101"]
""",
    )
    config = load_config(path)
    assert config.path == path
    assert config.root == tmp_path
    assert config.select == ("TL1", "item-in-hot-loop")
    assert config.ignore == ("TL105",)
    assert [p.pattern for p in config.exclude] == ["gen/", "*_pb2.py"]
    assert [(e.pattern.pattern, e.selectors) for e in config.per_file_ignores] == [
        ("tests/**", ("TL101",))
    ]
    assert config.target_torch_version == "2.3"


def test_pyproject_without_table_gives_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n'))
    assert not config.has_table
    assert config.select is None
    assert config.ignore == ()
    assert config.exclude == ()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[tool.torchlint\n", "invalid TOML"),
        ("[tool.torchlint]\nfoo = 1\n", "[tool.torchlint] foo: unknown key"),
        ("[tool.torchlint]\nper_file_ignores = {}\n", "did you mean `per-file-ignores`?"),
        ("[tool.torchlint]\nselect = 'TL101'\n", "[tool.torchlint] select: expected a list"),
        ("[tool.torchlint]\nselect = [1]\n", "a list containing int"),
        ("[tool.torchlint]\nignore = ['TL999']\n", "[tool.torchlint] ignore: `TL999` matches"),
        ("[tool.torchlint]\nexclude = [3]\n", "[tool.torchlint] exclude: expected a list"),
        ("[tool.torchlint]\nper-file-ignores = ['x']\n", "per-file-ignores: expected a table"),
        (
            "[tool.torchlint.per-file-ignores]\n'tests/' = ['nope']\n",
            'per-file-ignores."tests/": `nope` matches no rule',
        ),
        ("[tool.torchlint]\ntarget-torch-version = 'latest'\n", "target-torch-version"),
        ("[tool.torchlint]\ntarget-torch-version = '2'\n", "target-torch-version"),
        ("tool.torchlint = 3\n", "[tool.torchlint]: expected a table"),
    ],
)
def test_malformed_config(tmp_path: Path, body: str, message: str) -> None:
    path = write(tmp_path / "pyproject.toml", body)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)


def test_unreadable_config(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").mkdir()  # a folder: unreadable as a file
    with pytest.raises(ConfigError, match="cannot read the file"):
        load_config(tmp_path / "pyproject.toml")


def test_version_forms(tmp_path: Path) -> None:
    for version in ("2.3", "2.3.1", "10.0"):
        path = write(
            tmp_path / version / "pyproject.toml",
            f'[tool.torchlint]\ntarget-torch-version = "{version}"\n',
        )
        assert load_config(path).target_torch_version == version


# --- resolving settings per file -----------------------------------------------------------


def test_nearest_config_wins_per_folder(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.torchlint]\nselect = ["TL101"]\n')
    write(tmp_path / "a" / "pyproject.toml", '[tool.torchlint]\nselect = ["TL301"]\n')
    write(tmp_path / "b" / "pyproject.toml", '[project]\nname = "b"\n')  # no table
    resolver = ConfigResolver(cwd=tmp_path)
    assert codes(resolver.selection_for(tmp_path / "x.py")) == {"TL101"}
    assert codes(resolver.selection_for(tmp_path / "a" / "deep" / "x.py")) == {"TL301"}
    assert codes(resolver.selection_for(tmp_path / "b" / "x.py")) == {"TL101"}
    assert resolver.config_for_dir(tmp_path / "a" / "deep").root == tmp_path / "a"
    # Looked up once per folder: later changes to the files are not seen by this resolver.
    write(tmp_path / "a" / "pyproject.toml", '[tool.torchlint]\nselect = ["TL102"]\n')
    assert codes(resolver.selection_for(tmp_path / "a" / "deep" / "y.py")) == {"TL301"}
    # ... while a fresh lookup is.
    assert codes(resolve_settings(tmp_path / "a" / "y.py")) == {"TL102"}


def test_no_config_anywhere_means_defaults(tmp_path: Path) -> None:
    selection = ConfigResolver(cwd=tmp_path).selection_for(tmp_path / "x.py")
    assert selection.rules() == RuleSelection().rules()


def test_cli_overrides(tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        '[tool.torchlint]\nselect = ["TL10"]\nignore = ["TL102", "TL106", "TL107", "TL108", '
        '"TL109"]\n',
    )
    file = tmp_path / "x.py"
    assert codes(resolve_settings(file)) == {"TL101", "TL103", "TL104", "TL105"}
    # --select replaces the configuration's select; its ignore still applies.
    replaced = resolve_settings(file, CliOverrides(select=("TL102", "TL301")))
    assert codes(replaced) == {"TL301"}
    # --ignore adds to the configuration's ignore.
    added = resolve_settings(file, CliOverrides(ignore=("TL101",)))
    assert codes(added) == {"TL103", "TL104", "TL105"}


def test_explicit_config_applies_everywhere(tmp_path: Path) -> None:
    config = write(tmp_path / "conf" / "pyproject.toml", '[tool.torchlint]\nselect = ["TL204"]\n')
    write(tmp_path / "pyproject.toml", '[tool.torchlint]\nselect = ["TL101"]\n')
    resolver = ConfigResolver(CliOverrides(config=config), cwd=tmp_path)
    assert codes(resolver.selection_for(tmp_path / "x.py")) == {"TL204"}


def test_per_file_ignores(tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        """\
[tool.torchlint.per-file-ignores]
"tests/" = ["TL101"]
"*_bench.py" = ["TL3"]
"/scripts/*.py" = ["missing-zero-grad"]
"!src/**" = ["TL105"]
""",
    )
    resolver = ConfigResolver(cwd=tmp_path)

    def ignored(relative: str) -> set[str]:
        return codes(RuleSelection()) - codes(resolver.selection_for(tmp_path / relative))

    assert ignored("src/train.py") == set()
    assert ignored("tests/test_train.py") == {"TL101", "TL105"}
    assert ignored("tests/unit/deep/test_x.py") == {"TL101", "TL105"}
    assert ignored("src/model_bench.py") == {"TL301", "TL302", "TL303", "TL304", "TL305", "TL306"}
    assert ignored("scripts/run.py") == {"TL102", "TL105"}
    assert ignored("src/scripts/run.py") == set()  # `/scripts` is anchored


def test_per_file_ignores_selector_names_are_validated(tmp_path: Path) -> None:
    # "speed" is not a selector torchlint knows: a typo must not silently ignore nothing.
    path = write(
        tmp_path / "pyproject.toml", '[tool.torchlint.per-file-ignores]\n"x.py" = ["speed"]\n'
    )
    with pytest.raises(ConfigError, match="`speed` matches no rule"):
        load_config(path)


def test_exclusions(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.torchlint]\nexclude = ["gen/", "/old.py"]\n')
    resolver = ConfigResolver(cwd=tmp_path)
    assert resolver.is_excluded(tmp_path / "gen", True, ancestors=False)
    assert resolver.is_excluded(tmp_path / "pkg" / "gen", True, ancestors=False)
    assert not resolver.is_excluded(tmp_path / "gen", False, ancestors=False)
    assert resolver.is_excluded(tmp_path / "old.py", False, ancestors=False)
    assert not resolver.is_excluded(tmp_path / "pkg" / "old.py", False, ancestors=False)
    assert resolver.is_excluded(tmp_path / "gen" / "x.py", False, ancestors=True)
    assert not resolver.is_excluded(tmp_path / "gen" / "x.py", False, ancestors=False)
    # the built-in exclusions: hidden and well-known folders
    assert resolver.is_excluded(tmp_path / ".tox", True, ancestors=False)
    assert resolver.is_excluded(tmp_path / "node_modules", True, ancestors=False)
    assert not resolver.is_excluded(tmp_path / ".hidden.py", False, ancestors=False)
    assert resolver.is_excluded(tmp_path / "build" / "lib" / "x.py", False, ancestors=True)


def test_selector_options() -> None:
    assert parse_selector_option(None, "--select") is None
    assert parse_selector_option(["TL101,TL2", " TL301 "], "--select") == (
        "TL101",
        "TL2",
        "TL301",
    )
    with pytest.raises(ConfigError, match="--ignore: `TL999` matches no rule"):
        parse_selector_option(["TL101,TL999"], "--ignore")
