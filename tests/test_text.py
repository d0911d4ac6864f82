"""The rules' text questions answer what the regular expressions they replace answered."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from torchlint.rules.text import TextGate, word_count, word_starts

# Letters, digits, `_`, `.`, `(`, spaces and a few non-ASCII word and non-word characters.
TEXTS = st.text(alphabet="sav e(._1é·\n", max_size=40)


@given(TEXTS)
def test_word_starts_are_where_a_leading_word_boundary_matches(text: str) -> None:
    assert list(word_starts(text, "save(")) == [
        m.start() for m in re.finditer(r"(?=\bsave\()", text)
    ]
    assert TextGate(("save(",), word_start=True).admits(text) == bool(re.search(r"\bsave\(", text))


@given(TEXTS)
def test_word_count_is_the_lookbehind_regex_count(text: str) -> None:
    assert word_count(text, "sav") == len(re.findall(r"(?<![\w.])sav(?!\w)", text))


def test_a_gate_without_word_start_is_a_substring_test() -> None:
    gate = TextGate(("gather", "scatter"))
    assert gate.admits("dist.all_gather(x)") and gate.admits("reduce_scatter")
    assert not gate.admits("broadcast(x)")
    assert not TextGate(("save(",), word_start=True).admits("autosave(x)")
    assert TextGate(("save(",), word_start=True).admits("torch.save(x)")
