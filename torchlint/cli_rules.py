"""`torchlint rules` and `torchlint rule`: the list of rules, and one rule's documentation."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from torchlint.cli_output import UsageError, _write_stdout
from torchlint.rules import ALL_RULES, Rule, lookup


def _rule_json(rule: type[Rule]) -> dict[str, Any]:
    return {
        "code": rule.code,
        "name": rule.name,
        "family": rule.family,
        "severity": rule.severity.value,
        "default_enabled": rule.default_enabled,
        "fixable": rule.fixable,
        "summary": rule.summary,
    }


def cmd_rules(args: argparse.Namespace) -> int:
    if args.output_format == "json":
        _write_stdout(json.dumps([_rule_json(rule) for rule in ALL_RULES], indent=2) + "\n")
        return 0
    from rich import box
    from rich.table import Table

    from torchlint.report import make_console

    console = make_console(sys.stdout)
    console.soft_wrap = False
    if not console.is_terminal:
        console.width = 200  # a pipe or a file: no reason to truncate
    columns = ["Code", "Name", "Family", "Severity", "Default", "Fixable"]
    wide = console.width >= 120  # room for the one-line summaries
    if wide:
        columns.append("Summary")
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for column in columns:
        table.add_column(column, no_wrap=column != "Summary")
    for rule in ALL_RULES:
        cells = [
            rule.code,
            rule.name,
            rule.family,
            rule.severity.value,
            "yes" if rule.default_enabled else "no",
            "yes" if rule.fixable else "no",
        ]
        table.add_row(*cells, *([rule.summary] if wide else []))
    with console.capture() as captured:
        console.print(table)
    _write_stdout("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))
    return 0


def cmd_rule(args: argparse.Namespace) -> int:
    rule = lookup(args.key.strip())
    if rule is None:
        raise UsageError(f"unknown rule `{args.key}` (run `torchlint rules` to list them)")
    try:
        from torchlint.docs import rule_doc
    except ImportError as exc:
        raise UsageError(f"the rule documentation is not available: {exc}") from None
    doc = rule_doc(rule.code)
    if doc is None:
        raise UsageError(f"no documentation found for {rule.code} ({rule.name})")
    if args.output_format == "json":
        payload = {**_rule_json(rule), "url": _rule_url(rule), "doc": doc}
        _write_stdout(json.dumps(payload, indent=2) + "\n")
    else:
        _write_stdout(doc if doc.endswith("\n") else doc + "\n")
    return 0


def _rule_url(rule: type[Rule]) -> str:
    from torchlint.diagnostics import rule_url

    return rule_url(rule.code, rule.name)
