"""The runtime's house: the torch-free parent package and the torch-importing child package
apart, the envelope's JSON Schema generated from the typed model, every code registered, and
user code told from libraries by where packages are installed and imported from."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from importlib import resources
from pathlib import Path

import pytest

from torchlint.runtime import schema
from torchlint.runtime.checks import CHECKS, outcome_of
from torchlint.runtime.envelope_model import Envelope
from torchlint.runtime.sites import SiteFinder
from torchlint.runtime.typed import ModelError, from_json

ROOT = Path(__file__).resolve().parents[2]
PARENT = [
    "torchlint.runtime",
    "torchlint.runtime.checks",
    "torchlint.runtime.codes",
    "torchlint.runtime.command",
    "torchlint.runtime.distributed",
    "torchlint.runtime.envelope",
    "torchlint.runtime.envelope_model",
    "torchlint.runtime.envelope_parts",
    "torchlint.runtime.launcher",
    "torchlint.runtime.payloads",
    "torchlint.runtime.post_import",
    "torchlint.runtime.report",
    "torchlint.runtime.report.fit",
    "torchlint.runtime.report.lr_find",
    "torchlint.runtime.report.profile",
    "torchlint.runtime.results",
    "torchlint.runtime.schema",
    "torchlint.runtime.sites",
    "torchlint.runtime.svg_plot",
    "torchlint.runtime.typed",
    "torchlint.runtime.sandbox.scratch",
    "torchlint.integrations",
]


def test_the_parent_package_never_imports_torch() -> None:
    program = textwrap.dedent(
        f"""\
        import importlib, importlib.abc, sys

        class NoTorch(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "torch" or name.startswith("torch."):
                    raise ModuleNotFoundError("No module named 'torch'", name=name)
                return None

        sys.meta_path.insert(0, NoTorch())
        for name in {PARENT!r}:
            importlib.import_module(name)
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.stdout.strip() == "ok", done.stderr


def test_the_child_package_is_where_torch_is_imported() -> None:
    child = ROOT / "torchlint" / "runtime" / "child"
    parent_files = [
        p for p in (ROOT / "torchlint" / "runtime").rglob("*.py") if child not in p.parents
    ]
    top_level_torch = re.compile(r"^(?:import|from) torch\b", re.MULTILINE)  # not torchlint
    assert parent_files
    for path in parent_files:
        assert not top_level_torch.search(path.read_text()), path
    assert any(top_level_torch.search(p.read_text()) for p in child.rglob("*.py"))


def test_the_shipped_schema_is_generated_from_the_typed_model() -> None:
    shipped = resources.files("torchlint.runtime").joinpath("schema.json").read_text("utf-8")
    assert json.loads(shipped) == schema.generate(), "run python -m torchlint.runtime.schema"


def test_the_typed_model_refuses_what_does_not_fit() -> None:
    with pytest.raises(ModelError, match="unexpected"):
        from_json(Envelope, {"schema_version": 3, "bogus": 1})
    with pytest.raises(ModelError, match="needs 'check'"):
        from_json(Envelope, {"schema_version": 3})


def test_each_verdict_maps_to_one_of_four_outcomes_and_errors_fail() -> None:
    for name, spec in CHECKS.items():
        for verdict, outcome in spec.verdicts.items():
            assert outcome in ("pass", "fail", "inconclusive", "not_applicable")
            assert outcome_of(name, verdict, errors=True) == "fail"
    assert outcome_of("overfit", "pass", errors=False) == "pass"
    assert outcome_of("profile", "hints", errors=False) == "pass"


def test_libraries_on_the_path_are_not_user_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (project / "scripts").mkdir()
    library = tmp_path / "opt" / "libs" / "vendored"
    library.mkdir(parents=True)
    monkeypatch.chdir(project)
    monkeypatch.setattr(sys, "path", [str(project / "scripts"), str(tmp_path / "opt" / "libs")])
    finder = SiteFinder(project / "scripts")
    assert finder.is_user_file(str(project / "scripts" / "train.py"))
    assert finder.is_user_file(str(project / "pkg" / "model.py"))  # the project's own package
    assert not finder.is_user_file(str(library / "layers.py"))  # on PYTHONPATH, outside it
