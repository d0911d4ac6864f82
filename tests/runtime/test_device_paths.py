"""The profile's device paths that the CPU can drive for real: host-to-device copies recorded
per line (to the `meta` device, the CPU build's only other one), synchronisations PyTorch
reports (`set_sync_debug_mode`'s warning) attributed to the user's line, the judgement of
pinned memory and `non_blocking`, and the CPU clock. The CUDA halves run in tests/gpu."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from envelope_schema import validate_envelope
from script_marks import SCRIPTS, codes, line_of

from torchlint.runtime.child.copies import CopySite, CopyWatch, copy_advice
from torchlint.runtime.child.syncs import REPORTED, SYNC_WARNING, SyncCounter
from torchlint.runtime.confirm import confirm_envelope, confirmation, confirming
from torchlint.runtime.launcher import RunRequest, run_check
from torchlint.runtime.sites import Site, SiteFinder

HERE = Path(__file__)


def profile(script: str, steps: int = 4, **options: Any) -> dict[str, Any]:
    request = RunRequest(
        "profile", SCRIPTS / f"{script}.py", steps=steps, timeout_s=90, options=options
    )
    return validate_envelope(run_check(request))


def test_copies_and_reported_syncs_are_counted_at_their_lines() -> None:
    result = profile("profile_copies", steps=3, warmup=2)
    payload = result["payload"]
    assert payload["synchronization"] == "cpu_clock"  # the CPU fallback of the CUDA events
    assert payload["record"]["device"] == "cpu"
    copies = {c["line"]: c for c in payload["copies"]}
    fast = copies[line_of("profile_copies", "copy_non_blocking")]
    slow = copies[line_of("profile_copies", "copy_blocking")]
    assert (fast["device"], fast["copies"], fast["non_blocking"], fast["pinned"]) == (
        "meta",
        3,
        3,
        0,
    )
    assert (slow["copies"], slow["non_blocking"]) == (3, 0)
    assert fast["per_step"] == 1.0
    [sync] = payload["host_syncs"]
    assert sync["line"] == line_of("profile_copies", "reported_sync")
    assert sync["kinds"] == {REPORTED: 3} and sync["per_step"] == 1.0
    assert sync["ms_per_step"] is None  # PyTorch's reports are counted, not timed
    found = codes(result)
    assert found["TLR603"]["line"] == sync["line"]
    assert "PyTorch reports as synchronising" in found["TLR603"]["message"]
    # the same line is a static TL301 (`running += loss.item()`): the run confirms it
    assert found["TLR603"]["evidence"]["confirms"] == ["TL301"]
    assert "confirms the static finding TL301" in found["TLR603"]["message"]
    # copies to a device that is no accelerator get no advice
    assert not {"TLR607", "TLR608", "TLR602"} & set(found)


def test_the_editor_text_of_a_confirmation() -> None:
    assert confirming()["TLR603"] == ("TL301", "TL302")
    assert confirming()["TLR608"] == ("TL304",)
    assert confirmation("TLR603", {"per_step": 3.0, "ms_per_step": 2.104}) == (
        "confirmed by a run: 3 sync(s) per step, 2.10 ms"
    )
    assert confirmation("TLR603", {"per_step": 1.0, "ms_per_step": None}) == (
        "confirmed by a run: 1 sync(s) per step"
    )
    assert confirmation("TLR307", {}) == "confirmed by a run (TLR307)"


def test_a_finding_on_no_static_line_confirms_nothing(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("import torch\nx = torch.ones(2)\nprint(x)\n")
    item = {"code": "TLR603", "filename": str(script), "line": 3, "message": "m", "evidence": {}}
    missing = {"code": "TLR603", "filename": str(tmp_path / "gone.py"), "line": 1, "message": "m"}
    result: dict[str, Any] = {"diagnostics": [item, missing]}
    confirm_envelope(result)
    assert item == {
        "code": "TLR603",
        "filename": str(script),
        "line": 3,
        "message": "m",
        "evidence": {},
    }
    assert "evidence" not in missing


def site(line: int = 1) -> Site:
    return Site("train.py", line, "<module>")


@pytest.mark.parametrize(
    ("device", "copies", "non_blocking", "pinned", "expected"),
    [
        ("cuda", 10, 10, 0, "TLR607"),  # non_blocking from pageable memory
        ("cuda", 10, 4, 0, "TLR607"),
        ("cuda", 10, 0, 10, "TLR608"),  # pinned, but the host waits
        ("cuda", 10, 10, 10, None),  # pinned and non-blocking: the copy overlaps
        ("cuda", 10, 0, 0, None),  # plain blocking copy: TLR602 speaks for the loader
        ("cuda", 3, 3, 0, None),  # fewer than one per step
        ("meta", 10, 10, 0, None),
        ("cpu", 10, 10, 0, None),
    ],
)
def test_copy_advice(
    device: str, copies: int, non_blocking: int, pinned: int, expected: str | None
) -> None:
    entry = CopySite(site(), device, copies, non_blocking, pinned, copies * 1024)
    judged = copy_advice(entry, steps=10)
    assert (judged[0] if judged else None) == expected


def test_the_copy_watch_reads_non_blocking_however_it_is_passed() -> None:
    watch = CopyWatch(SiteFinder(HERE.parent))
    x = torch.randn(4, 4)
    watch.install()
    try:
        x.to("meta", non_blocking=True)
        x.to("meta", torch.float16, True)
        x.to(torch.empty(1, device="meta"), False, True)  # (other, non_blocking, copy)
        x.to("meta")
        x.to(torch.float64)  # a dtype change on the host: no copy to a device
        x.to("cpu")
    finally:
        watch.uninstall()
    assert torch.Tensor.to is not None and "copy" not in torch.Tensor.to.__qualname__
    by_line = sorted(watch.sites.values(), key=lambda e: e.site.line)
    assert [(e.non_blocking, e.copies, e.device) for e in by_line] == [
        (1, 1, "meta"),
        (1, 1, "meta"),
        (0, 1, "meta"),
        (0, 1, "meta"),
    ]
    assert by_line[1].bytes == x.numel() * x.element_size()  # the source's bytes


def _report_sync() -> None:
    warnings.warn(SYNC_WARNING, UserWarning, stacklevel=1)


def test_reported_syncs_count_per_line_and_other_warnings_pass_through(
    recwarn: pytest.WarningsRecorder,
) -> None:
    counter = SyncCounter(SiteFinder(HERE.parent))
    filters_before = list(warnings.filters)
    shown_before = warnings.showwarning
    counter.install()
    try:
        for _ in range(3):
            _report_sync()
        warnings.warn("an unrelated warning of the script", UserWarning, stacklevel=1)
    finally:
        counter.uninstall()
    assert warnings.showwarning is shown_before and warnings.filters == filters_before
    [entry] = counter.sites.values()
    assert entry.site.function == "_report_sync" and entry.kinds == {REPORTED: 3}
    assert entry.site.line == _report_sync.__code__.co_firstlineno + 1
    shown = [str(w.message) for w in recwarn.list]
    assert shown == ["an unrelated warning of the script"]  # PyTorch's reports kept apart


def test_host_reads_of_cpu_tensors_are_not_syncs() -> None:
    counter = SyncCounter(SiteFinder(HERE.parent))
    counter.install()
    try:
        value = torch.ones(()).item() + float(torch.zeros(()))
    finally:
        counter.uninstall()
    assert value == 1.0 and counter.sites == {}
    assert sys.modules["torch"].Tensor.item is torch.Tensor.item
