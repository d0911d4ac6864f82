"""Every fix, everywhere we have examples: the fixed text parses, a second pass changes nothing,
and nothing outside the fixed ranges moves. Plus the exact output of each rule's fix."""

from __future__ import annotations

import difflib
import textwrap
from pathlib import Path

import pytest

from torchlint.analysis.source import ParsedSource, parse_source
from torchlint.docs import doc_examples, rule_doc
from torchlint.engine import analyze
from torchlint.fixer import fix_text
from torchlint.rules import ALL_RULES
from torchlint.selection import RuleSelection

ROOT = Path(__file__).resolve().parent.parent
ALL = RuleSelection(select=("ALL",))


def _sources() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for rule in ALL_RULES:
        doc = rule_doc(rule.code)
        if doc is None or rule.code == "TL001":
            continue
        for section, blocks in doc_examples(doc).items():
            for number, block in enumerate(blocks, start=1):
                found.append((f"{rule.code}/{section}-{number}", block))
    for path in sorted([*ROOT.glob("examples/*.py"), *ROOT.glob("tests/cases/*/*.py")]):
        found.append((str(path.relative_to(ROOT)), path.read_text()))
    return found


SOURCES = _sources()


@pytest.mark.parametrize(("name", "source"), SOURCES, ids=[n for n, _ in SOURCES])
def test_all_fixes_parse_are_idempotent_and_local(name: str, source: str) -> None:
    result = fix_text(source, name, ALL, unsafe=True)
    assert isinstance(parse_source(result.text), ParsedSource)
    assert not result.rejected, result.rejected
    again = fix_text(result.text, name, ALL, unsafe=True)
    assert again.text == result.text, "a second --fix changed the file again"
    # Unchanged lines stay unchanged: every difference is a line some fix touched.
    changed = sum(
        1
        for line in difflib.ndiff(source.splitlines(), result.text.splitlines())
        if line[:1] in "+-"
    )
    assert changed <= 4 * max(result.fixed_count, 0) + (2 if result.fixed_count else 0)


def _fixed(source: str, code: str) -> str:
    return fix_text(textwrap.dedent(source), "t.py", RuleSelection(select=(code,)), True).text


def test_tl103_moves_the_clear_before_backward() -> None:
    assert _fixed(
        """\
        import torch
        model = torch.nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for x in data:
            loss = model(x).sum()
            loss.backward()  # gradients
            optimizer.zero_grad()
            optimizer.step()
        """,
        "TL103",
    ) == textwrap.dedent(
        """\
        import torch
        model = torch.nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for x in data:
            loss = model(x).sum()
            optimizer.zero_grad()
            loss.backward()  # gradients
            optimizer.step()
        """
    )


def test_tl201_scales_the_loss() -> None:
    fixed = _fixed(
        """\
        import torch
        scaler = torch.amp.GradScaler("cuda")
        for x in data:
            with torch.autocast("cuda"):
                loss = model(x).sum()
            (loss / 4).backward()
            scaler.step(optimizer)
            scaler.update()
        """,
        "TL201",
    )
    assert "    (scaler.scale(loss / 4)).backward()\n" in fixed


def test_tl201_also_steps_through_the_scaler() -> None:
    """Scaling the loss alone would leave `optimizer.step()` applying scaled gradients (TL202):
    the one fix routes the step through the scaler and adds the update."""
    fixed = _fixed(
        """\
        import torch
        scaler = torch.amp.GradScaler("cuda")
        for x in data:
            optimizer.zero_grad()
            with torch.autocast("cuda"):
                loss = model(x).sum()
            loss.backward()
            optimizer.step()
        """,
        "TL201",
    )
    assert (
        "    scaler.scale(loss).backward()\n    scaler.step(optimizer)\n    scaler.update()\n"
        in (fixed)
    )


def test_tl202_steps_through_the_scaler_and_adds_update() -> None:
    fixed = _fixed(
        """\
        import torch
        scaler = torch.amp.GradScaler("cuda")
        for x in data:
            optimizer.zero_grad()
            scaler.scale(model(x).sum()).backward()
            optimizer.step()
        """,
        "TL202",
    )
    assert fixed.endswith("    scaler.step(optimizer)\n    scaler.update()\n")


def test_tl304_adds_non_blocking() -> None:
    fixed = _fixed(
        """\
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=8, shuffle=True, num_workers=2, pin_memory=True)
        for x, y in loader:
            x = x.to(device)
            y = y.cuda()
            z = y.to(device,)
            optimizer.zero_grad()
            model(x).sum().backward()
            optimizer.step()
        """,
        "TL304",
    )
    assert "x = x.to(device, non_blocking=True)" in fixed
    assert "y = y.cuda(non_blocking=True)" in fixed


def test_tl305_passes_device_to_the_constructor() -> None:
    fixed = _fixed(
        """\
        import torch
        for x in loader:
            noise = torch.randn(x.shape[0], 16).to(device)
            mask = torch.ones(4, dtype=torch.bool).cuda()
            optimizer.zero_grad()
            model(x, noise, mask).sum().backward()
            optimizer.step()
        """,
        "TL305",
    )
    assert "noise = torch.randn(x.shape[0], 16, device=device)" in fixed
    assert 'mask = torch.ones(4, dtype=torch.bool, device="cuda")' in fixed


def test_tl108_detaches_what_is_kept() -> None:
    fixed = _fixed(
        """\
        import torch
        total, history = 0.0, []
        for x in loader:
            optimizer.zero_grad()
            loss = model(x).sum()
            loss.backward()
            optimizer.step()
            total += loss
            history.append(loss * 2)
        """,
        "TL108",
    )
    # In a training loop, never `.item()`: that would be a host sync per step (TL301).
    assert "total += loss.detach()" in fixed
    assert "history.append((loss * 2).detach())" in fixed


def test_tl106_decorates_the_evaluation_function_and_imports_torch() -> None:
    fixed = _fixed(
        """\
        from torch import nn


        def evaluate(model, loader):
            model.eval()
            return [model(x) for x in loader] + [model(x).sum() for x in loader]


        def evaluate_loop(model, loader):
            model.eval()
            outs = []
            for x in loader:
                outs.append(model(x))
            return outs
        """,
        "TL106",
    )
    assert "import torch\n" in fixed
    assert "\n@torch.no_grad()\ndef evaluate_loop(model, loader):\n" in fixed
    assert analyze(fixed, "t.py", RuleSelection(select=("TL106",))) == []


def test_tl106_never_decorates_a_function_that_also_trains() -> None:
    """The evaluation loop sits in `run()`, which also trains through `train_one_epoch()`:
    `@torch.no_grad()` on `run()` would turn training off, so neither the message nor a fix
    suggests it; wrapping the loop is the advice."""
    source = textwrap.dedent(
        """\
        import torch


        def train_one_epoch(model, loader, optimizer):
            model.train()
            for x, y in loader:
                optimizer.zero_grad()
                torch.nn.functional.cross_entropy(model(x), y).backward()
                optimizer.step()


        def run(model, train_loader, val_loader, optimizer, epochs):
            for epoch in range(epochs):
                train_one_epoch(model, train_loader, optimizer)
                model.eval()
                correct = 0
                for x, y in val_loader:
                    correct += (model(x).argmax(1) == y).sum()
        """
    )
    found = [d for d in analyze(source, "t.py", RuleSelection(select=("TL106",)))]
    assert len(found) == 1 and found[0].fix is None
    assert "decorate" not in found[0].message
    assert "wrap the loop in `with torch.no_grad():`" in found[0].message


def test_tl305_leaves_chains_and_generators_alone_and_marks_random_unsafe() -> None:
    source = """\
        import torch
        for x in loader:
            positions = torch.arange(8).unsqueeze(0).to("cuda")
            noise = torch.randn(4, 8, generator=g).cuda()
            jitter = torch.rand(4).to(device)
            optimizer.zero_grad()
            model(x, positions, noise, jitter).sum().backward()
            optimizer.step()
        """
    safe_only = fix_text(textwrap.dedent(source), "t.py", RuleSelection(select=("TL305",)), False)
    assert safe_only.text == textwrap.dedent(source)
    fixed = _fixed(source, "TL305")
    assert 'torch.arange(8).unsqueeze(0).to("cuda")' in fixed
    assert "torch.randn(4, 8, generator=g).cuda()" in fixed
    assert "jitter = torch.rand(4, device=device)" in fixed


def test_tl202_adds_one_update_for_two_optimizers() -> None:
    fixed = _fixed(
        """\
        import torch
        scaler = torch.amp.GradScaler("cuda")
        for x in data:
            opt_d.zero_grad()
            scaler.scale(d_loss(x)).backward()
            opt_d.step()
            opt_g.zero_grad()
            scaler.scale(g_loss(x)).backward()
            opt_g.step()
        """,
        "TL202",
    )
    assert fixed.count("scaler.update()") == 1
    assert fixed.endswith("    scaler.step(opt_g)\n    scaler.update()\n")
