"""Pinned memory and non_blocking on CUDA: the four combinations, and the static TL304 that a
run confirms."""

from __future__ import annotations

import pytest
from gpu_helpers import by_code, line_of, run

COPY_CODES = {"TLR602", "TLR607", "TLR608"}


@pytest.mark.parametrize(
    ("pin", "non_blocking", "expected"),
    [
        ("0", "0", {"TLR602"}),  # pageable, blocking: pin the loader
        ("0", "1", {"TLR602", "TLR607"}),  # non_blocking buys nothing from pageable memory
        ("1", "0", {"TLR608"}),  # pinned, but the host waits for each copy
        ("1", "1", set()),  # the copy overlaps: nothing to say
    ],
)
def test_pinned_memory_and_non_blocking(pin: str, non_blocking: str, expected: set[str]) -> None:
    result = run(
        "profile", "conv_net", "--pin", pin, "--non-blocking", non_blocking, steps=10, warmup=3
    )
    found = by_code(result)
    assert COPY_CODES & set(found) == expected, result["diagnostics"]
    [copy] = [c for c in result["payload"]["copies"] if c["line"] == line_of("conv_net", "copy")]
    assert copy["device"] == "cuda" and copy["per_step"] == 1.0
    assert copy["pinned"] == (copy["copies"] if pin == "1" else 0)
    assert copy["non_blocking"] == (copy["copies"] if non_blocking == "1" else 0)
    assert copy["mb_per_step"] == pytest.approx(128 * 3 * 32 * 32 * 4 / 2**20, rel=0.01)
    for code in expected - {"TLR602"}:
        assert found[code]["line"] == line_of("conv_net", "copy")


def test_a_blocking_copy_from_pinned_memory_confirms_tl304() -> None:
    result = run("profile", "pinned_blocking", steps=10, warmup=3)
    finding = by_code(result)["TLR608"]
    assert finding["line"] == line_of("pinned_blocking", "copy")
    assert finding["evidence"]["confirms"] == ["TL304"]
