"""The CI-facing output of `torchlint check`: `json-lines`, `github`, `sarif`, `grouped` and
`--statistics`. Most tests run the command in this process (`cli.main`) for speed; the SARIF
output is validated against the official SARIF 2.1.0 JSON schema shipped in tests/schemas/."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest
from snippets import CLEAN, DEPRECATED_SCALER, MISSING_STEP_AND_ITEM, SELECT

if TYPE_CHECKING:
    from conftest import Run

from torchlint import __version__
from torchlint.diagnostics import Diagnostic, Location, Severity, rule_url
from torchlint.docs import rule_doc, rule_sections
from torchlint.report import Report
from torchlint.report.github import escape_data, escape_property, workflow_command
from torchlint.report.sarif import plain_text
from torchlint.rules import ALL_RULES

SCHEMA_PATH = Path(__file__).parent / "schemas" / "sarif-schema-2.1.0.json"
# The file as it came from its package (tests/schemas/README.md says which).
SCHEMA_SHA256 = "03b3c591cf1a1a87c5e29119785ec9671e07a38f5f5a761d2deeea0e07faa738"

# The rules these tests rely on; other rules may come and go without breaking them.

# TL101 (error) on line 7, TL301 (warning) on line 8.
# TL204 (warning, safe fix that also inserts an `import torch` line).


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def project(tmp_path: Path) -> Path:
    write(tmp_path / "pkg" / "train.py", MISSING_STEP_AND_ITEM)
    write(tmp_path / "amp.py", DEPRECATED_SCALER)
    write(tmp_path / "clean.py", CLEAN)
    return tmp_path


# --- json-lines ----------------------------------------------------------------------------


def test_json_lines_is_the_json_array_one_object_a_line(tmp_path: Path, run: Run) -> None:
    project(tmp_path)
    array = run("check", *SELECT, "--output-format", "json", ".", cwd=tmp_path)
    lines = run("check", *SELECT, "--output-format", "json-lines", ".", cwd=tmp_path)
    assert lines.code == array.code == 1
    assert lines.err == ""
    rows = lines.out.splitlines()
    assert len(rows) == 3
    assert [json.loads(row) for row in rows] == json.loads(array.out)
    assert [json.loads(row)["code"] for row in rows] == ["TL204", "TL101", "TL301"]


def test_json_lines_prints_nothing_when_clean(tmp_path: Path, run: Run) -> None:
    write(tmp_path / "clean.py", CLEAN)
    result = run("check", "--output-format", "json-lines", ".", cwd=tmp_path)
    assert (result.code, result.out) == (0, "")


# --- github --------------------------------------------------------------------------------


def test_github_workflow_commands(tmp_path: Path, run: Run) -> None:
    project(tmp_path)
    result = run("check", *SELECT, "--output-format", "github", ".", cwd=tmp_path)
    assert result.code == 1
    lines = result.out.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(
        "::warning title=torchlint (TL204),file=amp.py,line=2,col=10,endLine=2,endColumn=22::TL204 "
    )
    assert lines[1].startswith(
        "::error title=torchlint (TL101),file=pkg/train.py,line=7,col=5,endLine=7,endColumn=20::"
        "TL101 "
    )
    assert lines[2].startswith("::warning title=torchlint (TL301),file=pkg/train.py,line=8,")
    for line in lines:
        assert re.fullmatch(
            r"::(error|warning|notice) title=torchlint \(TL\d{3}\),file=[^,:]+,line=\d+,col=\d+,"
            r"endLine=\d+,endColumn=\d+::TL\d{3} [^\r\n]+",
            line,
        ), line
    # Nothing but commands: no summary line.
    assert "Found" not in result.out


def test_github_escapes_messages_and_properties() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"
    diagnostic = Diagnostic(
        code="TL999",
        name="made-up",
        message="100% sure:\nsecond line, with a comma",
        severity=Severity.INFO,
        filename=os.path.join(os.getcwd(), "odd,name:x.py"),
        location=Location(3, 4),
        end_location=Location(5, 6),
    )
    assert workflow_command(Report([diagnostic]), diagnostic) == (
        "::notice title=torchlint (TL999),file=odd%2Cname%3Ax.py,line=3,col=4,endLine=5,"
        "endColumn=6::TL999 100%25 sure:%0Asecond line, with a comma"
    )
    severities = {Severity.ERROR: "::error ", Severity.WARNING: "::warning "}
    for severity, prefix in severities.items():
        other = Diagnostic("TL998", "x", "m", severity, "x.py", Location(1, 1), Location(1, 2))
        assert workflow_command(Report([other]), other).startswith(prefix)


# --- grouped -------------------------------------------------------------------------------


def test_grouped_output(tmp_path: Path, run: Run) -> None:
    project(tmp_path)
    result = run("check", *SELECT, "--output-format", "grouped", ".", cwd=tmp_path)
    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[0] == "amp.py:"
    assert re.fullmatch(r"  2:10 TL204 \[\*\] \S.+", lines[1])
    assert lines[2] == ""
    assert lines[3] == f"pkg{os.sep}train.py:"
    assert re.fullmatch(r"  7:5  TL101 \S.+", lines[4])  # padded to the width of "8:11"
    assert re.fullmatch(r"  8:11 TL301 \S.+", lines[5])
    assert lines[6] == ""
    assert lines[7] == "Found 3 errors (1 fixable with --fix)."
    assert len(lines) == 8


def test_grouped_aligns_positions_within_a_file(tmp_path: Path, run: Run) -> None:
    body = (
        "\n" * 9
        + MISSING_STEP_AND_ITEM.replace("    print(loss.item())\n", "")
        + ("    print(loss.item())\n" * 3)
    )
    write(tmp_path / "t.py", body)
    result = run("check", "--select", "TL101,TL301", "--output-format", "grouped", cwd=tmp_path)
    entries = [line for line in result.out.splitlines() if line.startswith("  ")]
    assert [line[:13] for line in entries] == [
        "  16:5  TL101",
        "  17:11 TL301",
        "  18:11 TL301",
        "  19:11 TL301",
    ]


# --- --statistics --------------------------------------------------------------------------


STATS_SOURCE = MISSING_STEP_AND_ITEM + "    print(loss.item())\n"  # TL101 once, TL301 twice


def test_statistics_text(tmp_path: Path, run: Run) -> None:
    write(tmp_path / "train.py", STATS_SOURCE)
    write(tmp_path / "amp.py", DEPRECATED_SCALER)
    result = run("check", *SELECT, "--statistics", cwd=tmp_path)
    assert result.code == 1
    assert result.out.splitlines() == [
        "  2  TL301      item-in-hot-loop",
        "  1  TL101      missing-optimizer-step",
        "  1  TL204  [*] deprecated-cuda-amp",
        "Found 4 errors (1 fixable with --fix).",
    ]


def test_statistics_json(tmp_path: Path, run: Run) -> None:
    write(tmp_path / "train.py", STATS_SOURCE)
    write(tmp_path / "amp.py", DEPRECATED_SCALER)
    result = run("check", *SELECT, "--statistics", "--output-format", "json", cwd=tmp_path)
    assert result.code == 1
    assert json.loads(result.out) == [
        {"code": "TL301", "name": "item-in-hot-loop", "count": 2, "fixable": False},
        {"code": "TL101", "name": "missing-optimizer-step", "count": 1, "fixable": False},
        {"code": "TL204", "name": "deprecated-cuda-amp", "count": 1, "fixable": True},
    ]

    clean = run(
        "check",
        "--statistics",
        "--output-format",
        "json",
        "amp.py",
        "--select",
        "TL1",
        cwd=tmp_path,
    )
    assert (clean.code, json.loads(clean.out)) == (0, [])


def test_statistics_refuses_diff(tmp_path: Path, run: Run) -> None:
    write(tmp_path / "amp.py", DEPRECATED_SCALER)
    result = run("check", "--statistics", "--diff", cwd=tmp_path)
    assert result.code == 2
    assert "--statistics cannot be combined with --diff" in result.err


def test_exit_non_zero_on_fix(tmp_path: Path, run: Run) -> None:
    target = write(tmp_path / "amp.py", DEPRECATED_SCALER)
    plain = run("check", "--select", "TL204", "--fix", cwd=tmp_path)
    assert plain.code == 0  # fixed, nothing left
    target.write_text(DEPRECATED_SCALER, encoding="utf-8")
    strict = run("check", "--select", "TL204", "--fix", "--exit-non-zero-on-fix", cwd=tmp_path)
    assert strict.code == 1
    assert "Fixed 1 error." in strict.out
    again = run("check", "--select", "TL204", "--fix", "--exit-non-zero-on-fix", cwd=tmp_path)
    assert again.code == 0  # nothing left to fix


# --- sarif ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.Draft7Validator:
    data = SCHEMA_PATH.read_bytes()
    assert hashlib.sha256(data).hexdigest() == SCHEMA_SHA256
    schema = json.loads(data)
    # The schema says it is draft 7, and the validator for it is the draft 7 one.
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert jsonschema.validators.validator_for(schema) is jsonschema.Draft7Validator
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def _errors(validator: jsonschema.Draft7Validator, log: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(log)]


def sarif_of(run: Run, cwd: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = run("check", "--output-format", "sarif", *args, cwd=cwd)
    assert result.err == ""
    return result.code, json.loads(result.out)


def test_sarif_validates_against_the_official_schema(
    tmp_path: Path, run: Run, sarif_validator: jsonschema.Draft7Validator
) -> None:
    project(tmp_path)
    code, log = sarif_of(run, tmp_path, *SELECT, ".")
    assert code == 1
    assert _errors(sarif_validator, log) == []
    assert len(log["runs"][0]["results"]) == 3

    # The validator really looks inside: breaking a nested value, reached through several
    # `$ref`s, is caught.
    region = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    region["startLine"] = 0
    log["runs"][0]["tool"]["driver"]["rules"][0]["defaultConfiguration"]["level"] = "fatal"
    errors = _errors(sarif_validator, log)
    assert any("startLine" in e and "minimum" in e for e in errors), errors
    assert any("'fatal' is not one of" in e for e in errors), errors
    assert _errors(sarif_validator, {"version": "2.1.0", "runs": [{"tool": {}}]})


def test_sarif_without_findings_is_valid(
    tmp_path: Path, run: Run, sarif_validator: jsonschema.Draft7Validator
) -> None:
    write(tmp_path / "clean.py", CLEAN)
    code, log = sarif_of(run, tmp_path)
    assert code == 0
    assert _errors(sarif_validator, log) == []
    assert log["runs"][0]["results"] == []
    assert log["runs"][0]["invocations"] == [{"executionSuccessful": True}]


def test_sarif_driver_lists_every_rule(tmp_path: Path, run: Run) -> None:
    write(tmp_path / "clean.py", CLEAN)
    _, log = sarif_of(run, tmp_path, "--select", "TL101")
    assert log["version"] == "2.1.0"
    assert "sarif-schema-2.1.0.json" in log["$schema"]
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "torchlint"
    assert driver["version"] == driver["semanticVersion"] == __version__
    assert driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    assert [r["id"] for r in rules] == [rule.code for rule in ALL_RULES]
    levels = {"error": "error", "warning": "warning", "info": "note"}
    documented = 0
    for descriptor, rule in zip(rules, ALL_RULES, strict=True):
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"] == {"text": rule.summary}
        assert descriptor["helpUri"] == rule_url(rule.code, rule.name)
        assert descriptor["defaultConfiguration"] == {
            "enabled": rule.default_enabled,
            "level": levels[rule.severity.value],
        }
        assert descriptor["properties"]["family"] == rule.family
        assert rule.family in descriptor["properties"]["tags"]
        doc = rule_doc(rule.code)
        if doc is None:  # a rule whose page is still to be written: its summary stands in
            assert descriptor["fullDescription"] == {"text": rule.summary}
            continue
        documented += 1
        what = rule_sections(doc)["What it does"].strip()
        assert descriptor["fullDescription"]["markdown"] == what
        assert descriptor["fullDescription"]["text"] == plain_text(what)
        assert "`" not in descriptor["fullDescription"]["text"]
        assert descriptor["help"]["markdown"].startswith(what)
        assert descriptor["helpUri"] in descriptor["help"]["markdown"]
    assert documented >= 10  # TL001-TL301 have had pages from the start


def test_sarif_results_and_locations(tmp_path: Path, run: Run) -> None:
    write(tmp_path / "sub dir" / "train.py", MISSING_STEP_AND_ITEM)
    _, log = sarif_of(run, tmp_path, *SELECT)
    the_run = log["runs"][0]
    base = the_run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.startswith("file://") and base.endswith("/")
    assert base == tmp_path.resolve().as_uri() + "/" or base == tmp_path.as_uri() + "/"
    assert the_run["columnKind"] == "unicodeCodePoints"
    rules = the_run["tool"]["driver"]["rules"]
    first, second = the_run["results"]
    assert first["ruleId"] == "TL101"
    assert rules[first["ruleIndex"]]["id"] == "TL101"
    assert rules[second["ruleIndex"]]["id"] == "TL301"
    assert (first["level"], second["level"]) == ("error", "warning")
    as_json = json.loads(run("check", *SELECT, "--output-format", "json", cwd=tmp_path).out)
    assert [r["message"]["text"] for r in the_run["results"]] == [d["message"] for d in as_json]
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "sub%20dir/train.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 7, "startColumn": 5, "endLine": 7, "endColumn": 20}
    assert "fixes" not in first


def test_sarif_file_outside_the_current_directory_gets_an_absolute_uri(
    tmp_path: Path, run: Run
) -> None:
    outside = write(tmp_path / "elsewhere" / "train.py", MISSING_STEP_AND_ITEM)
    here = tmp_path / "here"
    here.mkdir()
    _, log = sarif_of(run, here, *SELECT, str(outside))
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": outside.as_uri()}


def _offset(lines: list[str], row: int, column: int) -> int:
    return sum(len(line) for line in lines[: row - 1]) + column - 1


def apply_sarif_fixes(text: str, results: list[dict[str, Any]]) -> str:
    """Apply every replacement of every fix in `results` to `text` (what a SARIF viewer's
    "apply fix" does), from the end of the file backwards."""
    lines = text.splitlines(keepends=True)
    spans: list[tuple[int, int, str]] = []
    for result in results:
        for fix in result.get("fixes", []):
            for change in fix["artifactChanges"]:
                for replacement in change["replacements"]:
                    region = replacement["deletedRegion"]
                    start = _offset(lines, region["startLine"], region["startColumn"])
                    end = _offset(lines, region["endLine"], region["endColumn"])
                    spans.append((start, end, replacement["insertedContent"]["text"]))
    for start, end, content in sorted(spans, reverse=True):
        text = text[:start] + content + text[end:]
    return text


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_sarif_fixes_do_what_fix_does(
    tmp_path: Path, run: Run, sarif_validator: jsonschema.Draft7Validator, newline: str
) -> None:
    original = DEPRECATED_SCALER.replace("\n", newline).encode()
    target = write(tmp_path / "amp.py", original)
    _, log = sarif_of(run, tmp_path, "--select", "TL204")
    assert _errors(sarif_validator, log) == []
    results = log["runs"][0]["results"]
    assert len(results) == 1
    (fix,) = results[0]["fixes"]
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"] == {"uri": "amp.py", "uriBaseId": "%SRCROOT%"}
    assert fix["description"]["text"]
    from_sarif = apply_sarif_fixes(original.decode(), results)

    fixed = run("check", "--select", "TL204", "--fix", cwd=tmp_path)
    assert fixed.code == 0
    assert target.read_bytes().decode() == from_sarif
    assert "import torch" + newline in from_sarif


def test_sarif_leaves_out_unsafe_fixes_unless_asked(tmp_path: Path, run: Run) -> None:
    from torchlint.diagnostics import Edit, Fix
    from torchlint.report.sarif import sarif_result

    unsafe = Diagnostic(
        "TL204",
        "deprecated-cuda-amp",
        "m",
        Severity.WARNING,
        str(tmp_path / "x.py"),
        Location(1, 1),
        Location(1, 2),
        fix=Fix("unsafe", "do it", (Edit("y", Location(1, 1), Location(1, 2)),)),
    )
    base = str(tmp_path)
    assert "fixes" not in sarif_result(Report([unsafe]), unsafe, base)
    offered = sarif_result(Report([unsafe], unsafe_fixes=True), unsafe, base)
    assert offered["fixes"][0]["properties"] == {"applicability": "unsafe"}


def test_sarif_reports_failed_execution(tmp_path: Path, run: Run) -> None:
    write(tmp_path / "train.py", MISSING_STEP_AND_ITEM)
    result = run("check", "--output-format", "sarif", "train.py", "missing.py", cwd=tmp_path)
    assert result.code == 2
    assert "missing.py" in result.err
    log = json.loads(result.out)
    assert log["runs"][0]["invocations"] == [{"executionSuccessful": False}]


def test_plain_text_of_markdown() -> None:
    markdown = "Finds `x` and\n**y**:\n\n- one `a`;\n- two\n  continued."
    assert plain_text(markdown) == "Finds x and y:\n\n- one a;\n- two continued."


def test_output_format_from_the_environment(
    tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "amp.py", DEPRECATED_SCALER)
    monkeypatch.setenv("TORCHLINT_OUTPUT_FORMAT", "github")
    result = run("check", "--select", "TL204", cwd=tmp_path)
    assert result.out.startswith("::warning title=torchlint (TL204),file=amp.py,")
