"""`@record`: records are cheap plain dataclasses at run time, compared by identity, and frozen
for mypy, which rejects any assignment to a field (the check that replaces the run-time one)."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

from mypy import api as mypy_api

from torchlint.analysis.value import UNKNOWN, Value, What

ROOT = Path(__file__).resolve().parent.parent


def test_a_record_is_compared_by_identity_and_replaced_not_changed() -> None:
    a = Value(What.TENSOR, device=True)
    b = Value(What.TENSOR, device=True)
    assert a != b and a == a and len({a, b}) == 2
    c = dataclasses.replace(a, graph=True)
    assert c is not a and c.graph is True and a.graph is None and c.device is True
    assert UNKNOWN.what is What.UNKNOWN


def test_mypy_rejects_an_assignment_to_a_field(tmp_path: Path) -> None:
    snippet = tmp_path / "snippet.py"
    snippet.write_text(
        textwrap.dedent(
            """\
            from torchlint.analysis.record import record
            from torchlint.analysis.value import Value

            @record()
            class Point:
                x: int
                y: int = 0

            p = Point(1)
            p.x = 2
            v = Value()
            v.device = True
            Point("one")
            """
        )
    )
    out, _, status = mypy_api.run(
        ["--strict", "--no-incremental", "--cache-dir=/dev/null", str(snippet)]
    )
    assert status == 1, out
    assert 'Property "x" defined in "Point" is read-only' in out
    assert 'Property "device" defined in "Value" is read-only' in out
    assert 'Argument 1 to "Point" has incompatible type "str"' in out
    assert out.count("error:") == 3, out
