"""The explicit runtime checks on real (tiny, CPU) models: each must pass for a healthy setup and
fail for the real reason on a seeded bug, and must leave the model and optimizer as it found
them."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

torch = pytest.importorskip("torch")
from envelope_schema import validate_envelope  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

from torchlint.runtime import grad_scan, overfit_one_batch  # noqa: E402


def mlp(classes: int = 4) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, classes)
    )


def batches(n: int = 1, classes: int = 4) -> list[tuple[Any, Any]]:
    return [(torch.randn(16, 8), torch.randint(0, classes, (16,))) for _ in range(n)]


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


def state_of(model: nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    return {
        "params": {k: v.detach().clone() for k, v in model.state_dict().items()},
        "grads": {
            n: None if p.grad is None else p.grad.clone() for n, p in model.named_parameters()
        },
        "requires_grad": {n: p.requires_grad for n, p in model.named_parameters()},
        "modes": [m.training for m in model.modules()],
        "optimizer": copy.deepcopy(optimizer.state_dict()),
    }


def assert_same_state(before: dict[str, Any], after: dict[str, Any]) -> None:
    assert before["params"].keys() == after["params"].keys()
    for name, value in before["params"].items():
        assert torch.equal(value, after["params"][name]), name
    for name, grad in before["grads"].items():
        other = after["grads"][name]
        assert (grad is None) == (other is None), name
        if grad is not None:
            assert torch.equal(grad, other), name
    assert before["requires_grad"] == after["requires_grad"]
    assert before["modes"] == after["modes"]
    opt_before, opt_after = before["optimizer"], after["optimizer"]
    assert opt_before["param_groups"] == opt_after["param_groups"]
    assert opt_before["state"].keys() == opt_after["state"].keys()
    for key, entry in opt_before["state"].items():
        for field, value in entry.items():
            other = opt_after["state"][key][field]
            if isinstance(value, torch.Tensor):
                assert torch.equal(value, other), (key, field)
            else:
                assert value == other, (key, field)


def roundtrip(envelope: dict[str, Any]) -> dict[str, Any]:
    loaded = validate_envelope(envelope)
    assert loaded["schema_version"] == 3
    return loaded


# ---------------------------------------------------------------------------------------------
# overfit_one_batch


def test_overfit_passes_on_a_plain_mlp() -> None:
    model = mlp()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    result = overfit_one_batch(model, batches(), nn.CrossEntropyLoss(), optimizer, steps=100)
    assert result.verdict == "pass", result.summary
    assert result.ratio is not None and result.ratio < 0.01
    assert result.expected_initial_loss == pytest.approx(math.log(4))
    assert result.initial_loss is not None
    assert abs(result.initial_loss - math.log(4)) < 0.25
    assert result.num_classes == 4
    assert result.final_accuracy == 1.0
    assert result.steps_run == 100 and len(result.loss_curve) == 100
    loaded = roundtrip(result.to_json())
    assert loaded["check"] == "overfit" and loaded["status"] == "completed"
    assert loaded["verdict"] == "pass"
    assert loaded["environment"]["batch_size"] == 16
    assert loaded["environment"]["model_mode"] == "train"
    assert loaded["environment"]["dtype"] == "float32"
    payload = loaded["payload"]
    assert len(payload["loss_curve"]) == 100
    assert payload["expected_initial_loss"] == pytest.approx(math.log(4))
    assert payload["final_accuracy"] == 1.0
    assert payload["ratio"] == pytest.approx(result.ratio)


def test_overfit_functional_cross_entropy_and_device() -> None:
    model = mlp(classes=10)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    result = overfit_one_batch(
        model, batches(classes=10), F.cross_entropy, optimizer, steps=80, device="cpu"
    )
    assert result.verdict == "pass", result.summary
    assert result.expected_initial_loss == pytest.approx(math.log(10))
    assert result.environment.device == "cpu"


def test_overfit_dict_batches_through_batch_fn() -> None:
    class TwoInput(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = nn.Linear(4, 16)
            self.b = nn.Linear(4, 16)
            self.head = nn.Linear(16, 3)

        def forward(self, x: Any, y: Any) -> Any:
            return self.head(torch.relu(self.a(x) + self.b(y)))

    model = TwoInput()
    loader = [
        {"x": torch.randn(12, 4), "y": torch.randn(12, 4), "label": torch.randint(0, 3, (12,))}
    ]

    def batch_fn(m: nn.Module, batch: dict[str, Any]) -> Any:
        out = m(batch["x"], batch["y"])
        return F.cross_entropy(out, batch["label"]), out, batch["label"]

    optimizer = torch.optim.Adam(model.parameters(), lr=2e-2)
    result = overfit_one_batch(model, loader, None, optimizer, steps=100, batch_fn=batch_fn)
    assert result.verdict == "pass", result.summary
    assert result.final_accuracy == 1.0
    assert result.environment.batch_size == 12

    # a batch_fn that returns only the loss still works; no accuracy then
    only_loss = overfit_one_batch(
        model, loader, None, optimizer, steps=100, batch_fn=lambda m, b: batch_fn(m, b)[0]
    )
    assert only_loss.verdict == "pass"
    assert only_loss.final_accuracy is None


def test_dict_batch_without_batch_fn_is_an_error() -> None:
    model = mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = state_of(model, optimizer)
    with pytest.raises(TypeError, match="batch_fn"):
        overfit_one_batch(model, [{"x": torch.randn(2, 8)}], nn.CrossEntropyLoss(), optimizer)
    assert_same_state(before, state_of(model, optimizer))


def test_overfit_fails_with_learning_rate_zero() -> None:
    model = mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    result = overfit_one_batch(model, batches(), nn.CrossEntropyLoss(), optimizer, steps=30)
    assert result.verdict == "fail"
    assert result.ratio == pytest.approx(1.0)
    assert roundtrip(result.to_json())["verdict"] == "fail"


def test_overfit_fails_with_optimizer_over_another_model() -> None:
    model, other = mlp(), mlp()
    optimizer = torch.optim.Adam(other.parameters(), lr=1e-2)
    result = overfit_one_batch(model, batches(), nn.CrossEntropyLoss(), optimizer, steps=30)
    assert result.verdict == "fail"
    assert result.ratio == pytest.approx(1.0)

    scan = grad_scan(model, batches(2), nn.CrossEntropyLoss(), optimizer, steps=2)
    assert scan.verdict == "problems"
    missing = scan.findings_of("not_in_optimizer")
    assert missing and set(missing[0].params) == {n for n, _ in model.named_parameters()}
    assert scan.findings_of("optimizer_params_not_in_model")


def test_detached_logits_fail_and_report_never_gradient() -> None:
    model = mlp()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

    def detached_loss(out: Any, target: Any) -> Any:
        return F.cross_entropy(out.detach(), target)

    result = overfit_one_batch(model, batches(), detached_loss, optimizer, steps=30)
    assert result.verdict == "fail"
    assert result.loss_differentiable is False
    assert result.ratio == pytest.approx(1.0)

    scan = grad_scan(model, batches(3), detached_loss, optimizer, steps=3)
    assert scan.verdict == "problems"
    never = scan.findings_of("never_gradient")
    assert never and set(never[0].params) == {n for n, _ in model.named_parameters()}
    assert scan.findings_of("loss_not_differentiable")
    assert all(row.status == "none" for row in scan.params)
    assert all(norm is None for row in scan.params for norm in row.grad_norm)


def test_frozen_backbone() -> None:
    model = mlp()
    for param in model[0].parameters():
        param.requires_grad_(False)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)

    scan = grad_scan(model, batches(3), nn.CrossEntropyLoss(), optimizer, steps=3)
    frozen = scan.findings_of("frozen")
    assert frozen and frozen[0].severity == "info"
    assert set(frozen[0].params) == {"0.weight", "0.bias"}
    assert scan.verdict == "healthy", scan.summary  # frozen on purpose is not a problem
    rows = {row.name: row for row in scan.params}
    assert rows["0.weight"].status == "frozen" and rows["0.weight"].requires_grad is False
    assert rows["4.weight"].status == "ok" and rows["4.weight"].in_optimizer

    # the trainable layers above a frozen random layer can still memorise one batch
    result = overfit_one_batch(model, batches(), nn.CrossEntropyLoss(), optimizer, steps=100)
    assert result.verdict == "pass", result.summary
    assert all(not p.requires_grad for p in model[0].parameters())


def test_nan_from_step_k() -> None:
    model = mlp()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    calls = {"n": 0}

    def loss_fn(out: Any, target: Any) -> Any:
        loss = F.cross_entropy(out, target)
        calls["n"] += 1
        return loss * math.nan if calls["n"] - 1 >= 7 else loss

    before = state_of(model, optimizer)
    result = overfit_one_batch(model, batches(), loss_fn, optimizer, steps=50)
    assert result.verdict == "nan"
    assert result.nan_step == 7
    assert len(result.loss_curve) == 8 and result.loss_curve[-1] is None
    assert all(v is not None for v in result.loss_curve[:7])
    loaded = roundtrip(result.to_json())
    assert loaded["verdict"] == "nan" and loaded["payload"]["nan_step"] == 7
    assert loaded["payload"]["loss_curve"][-1] is None
    assert_same_state(before, state_of(model, optimizer))


def test_trainable_params_missing_from_optimizer() -> None:
    model = mlp()
    optimizer = torch.optim.SGD(model[4].parameters(), lr=0.1)
    scan = grad_scan(model, batches(3), nn.CrossEntropyLoss(), optimizer, steps=3)
    assert scan.verdict == "problems"
    missing = scan.findings_of("not_in_optimizer")
    assert missing and missing[0].severity == "error"
    assert set(missing[0].params) == {"0.weight", "0.bias", "2.weight", "2.bias"}
    rows = {row.name: row for row in scan.params}
    assert rows["0.weight"].in_optimizer is False and rows["0.weight"].status == "not_in_optimizer"
    assert rows["4.weight"].in_optimizer is True
    assert not scan.findings_of("optimizer_params_not_in_model")


# ---------------------------------------------------------------------------------------------
# grad_scan


def test_grad_scan_healthy_table_and_json() -> None:
    model = mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scan = grad_scan(model, batches(5), nn.CrossEntropyLoss(), optimizer, steps=3)
    assert scan.verdict == "healthy", scan.summary
    assert scan.steps_run == 3 and len(scan.losses) == 3
    assert scan.depth_verdict == "ok"
    assert len(scan.params) == 6
    for row in scan.params:
        assert row.status == "ok"
        assert len(row.grad_norm) == 3
        assert all(v is not None and v > 0 for v in row.grad_norm)
        assert row.weight_norm is not None and row.weight_norm > 0
        assert row.ratio is not None and row.ratio > 0
    first = scan.params[0]
    assert first.name == "0.weight" and first.shape == [32, 8] and first.numel == 256
    expected = torch.linalg.vector_norm(
        torch.stack([torch.tensor(row.grad_norm[0]) for row in scan.params])
    )
    assert scan.global_grad_norm[0] == pytest.approx(float(expected), rel=1e-5)
    assert len(scan.largest) == 3 and len(scan.smallest) == 3
    loaded = roundtrip(scan.to_json())
    assert loaded["check"] == "grads" and loaded["verdict"] == "healthy"
    payload = loaded["payload"]
    assert {"params", "findings", "largest", "smallest", "depth", "global_grad_norm"} <= set(
        payload
    )
    assert payload["params"][0]["shape"] == [32, 8]


def test_grad_scan_matches_per_parameter_norms() -> None:
    model = mlp()
    x, y = batches()[0]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    scan = grad_scan(model, [(x, y)], nn.CrossEntropyLoss(), optimizer, steps=1)
    nn.CrossEntropyLoss()(model(x), y).backward()
    for row, (_, param) in zip(scan.params, model.named_parameters(), strict=True):
        assert param.grad is not None
        assert row.grad_norm[0] == pytest.approx(float(param.grad.norm()), rel=1e-5)


def test_grad_scan_stops_when_loader_ends() -> None:
    model = mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scan = grad_scan(model, batches(2), nn.CrossEntropyLoss(), optimizer, steps=5)
    assert scan.steps_requested == 5 and scan.steps_run == 2


def test_grad_scan_zero_and_nonfinite_gradients() -> None:
    class Odd(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = nn.Linear(8, 4)
            self.gate = nn.Parameter(torch.ones(4))

        def forward(self, x: Any) -> Any:
            return self.body(x) + 0.0 * self.gate

    model = Odd()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    calls = {"n": 0}

    def loss_fn(out: Any, target: Any) -> Any:
        calls["n"] += 1
        loss = F.cross_entropy(out, target)
        return loss * math.inf if calls["n"] == 2 else loss

    scan = grad_scan(model, batches(3), loss_fn, optimizer, steps=3)
    assert scan.verdict == "problems"
    nonfinite = scan.findings_of("nonfinite_gradient")
    assert nonfinite and nonfinite[0].step == 1
    assert scan.global_grad_norm[1] is None
    rows = {row.name: row for row in scan.params}
    assert rows["body.weight"].status == "nonfinite"
    roundtrip(scan.to_json())

    calls["n"] = 100  # no more infinities
    scan = grad_scan(model, batches(2), loss_fn, optimizer, steps=2)
    zero = scan.findings_of("zero_gradient")
    assert zero and zero[0].params == ["gate"]


def test_grad_scan_vanishing_by_depth() -> None:
    layers: list[nn.Module] = []
    for _ in range(12):
        layers += [nn.Linear(16, 16), nn.Sigmoid()]
    model = nn.Sequential(nn.Linear(8, 16), nn.Sigmoid(), *layers, nn.Linear(16, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scan = grad_scan(model, batches(2), nn.CrossEntropyLoss(), optimizer, steps=2)
    assert scan.depth_verdict == "vanishing", (scan.depth_first_ratio, scan.depth_last_ratio)
    assert scan.findings_of("vanishing") and scan.verdict == "problems"


# ---------------------------------------------------------------------------------------------
# state restoration


@pytest.mark.parametrize("check", ["overfit", "grads"])
def test_state_is_restored(check: str) -> None:
    model = nn.Sequential(nn.Linear(8, 32), nn.Dropout(0.1), nn.ReLU(), nn.Linear(32, 4))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = batches()[0]
    nn.CrossEntropyLoss()(model(x), y).backward()
    optimizer.step()  # non-empty optimizer state (Adam moments, step)
    nn.CrossEntropyLoss()(model(x), y).backward()  # leave gradients behind
    model.eval()
    model[1].train()  # mixed modes must come back exactly
    model[0].bias.requires_grad_(False)
    before = state_of(model, optimizer)
    if check == "overfit":
        overfit_one_batch(model, batches(), nn.CrossEntropyLoss(), optimizer, steps=20)
    else:
        grad_scan(model, batches(3), nn.CrossEntropyLoss(), optimizer, steps=3)
    assert_same_state(before, state_of(model, optimizer))


@pytest.mark.parametrize("check", ["overfit", "grads"])
def test_state_is_restored_after_an_exception(check: str) -> None:
    model = mlp()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    before = state_of(model, optimizer)
    calls = {"n": 0}

    def batch_fn(m: nn.Module, batch: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("boom")
        return F.cross_entropy(m(batch[0]), batch[1])

    run = overfit_one_batch if check == "overfit" else grad_scan
    with pytest.raises(RuntimeError, match="boom"):
        run(model, batches(5), None, optimizer, steps=5, batch_fn=batch_fn)
    assert_same_state(before, state_of(model, optimizer))


def test_empty_loader() -> None:
    model = mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="no batch"):
        overfit_one_batch(model, [], nn.CrossEntropyLoss(), optimizer)
    with pytest.raises(ValueError, match="no batch"):
        grad_scan(model, [], nn.CrossEntropyLoss(), optimizer)


def test_error_envelope_roundtrips() -> None:
    from torchlint.runtime import error_envelope

    loaded = validate_envelope(error_envelope("grads", RuntimeError("boom")))
    assert loaded["error"]["kind"] == "exception"
    assert loaded["status"] == "error" and loaded["verdict"] is None
    assert loaded["payload"]["error"] == "RuntimeError: boom"


def test_runtime_package_imports_without_torch() -> None:
    """`import torchlint.runtime` and its results module work without torch; the checks say
    how to get it."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """\
        import importlib.abc, sys

        class NoTorch(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "torch" or name.startswith("torch."):
                    raise ModuleNotFoundError("No module named 'torch'", name=name)
                return None

        sys.meta_path.insert(0, NoTorch())
        import torchlint.runtime as rt
        from torchlint.runtime.results import error_envelope
        assert error_envelope("overfit", "x")["status"] == "error"
        try:
            rt.overfit_one_batch
        except ImportError as exc:
            assert "torchlint[runtime]" in str(exc)
        else:
            raise AssertionError("no ImportError")
        assert "torch" not in sys.modules
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


class _ResidualBlock(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc(torch.relu(self.norm(x)))


def test_layer_depths_count_the_blocks_of_a_residual_stack() -> None:
    """minGPT's shape: through the skip path every block is one step from the loss, yet the
    first block lies twelve blocks deep; each block gets its own depth, in order."""
    from torchlint.runtime.child.grad_summary import MIN_DEPTH_LEVELS
    from torchlint.runtime.child.layer_depths import layer_depths

    embed, head = nn.Linear(8, 16), nn.Linear(16, 4)
    blocks = nn.Sequential(*[_ResidualBlock(16) for _ in range(12)])
    depths = layer_depths(head(blocks(embed(torch.randn(5, 8)))).sum())
    by_block = [depths[id(block.fc.weight)] for block in blocks]
    assert by_block == sorted(by_block, reverse=True) and len(set(by_block)) == 12
    assert depths[id(head.weight)] == 0 and depths[id(embed.weight)] > by_block[0]
    assert len(set(depths.values())) >= MIN_DEPTH_LEVELS


def test_layer_depths_give_parallel_branches_the_same_depths() -> None:
    from torchlint.runtime.child.layer_depths import layer_depths

    trunk, actor, critic = nn.Linear(4, 8), nn.Linear(8, 2), nn.Linear(8, 1)
    features = torch.relu(trunk(torch.randn(3, 4)))
    depths = layer_depths(actor(features).sum() + critic(features).sum())
    assert depths[id(actor.weight)] == depths[id(critic.weight)] == 0
    assert depths[id(trunk.weight)] == 1
    # a weight used twice (tied embeddings) gets the depth nearest the loss
    tied = nn.Linear(6, 6, bias=False)
    x = tied(torch.randn(2, 6))
    depths = layer_depths(nn.functional.linear(torch.tanh(x), tied.weight).sum())
    assert depths[id(tied.weight)] == 0


def test_the_default_time_budget_follows_the_measured_step_cost() -> None:
    from torchlint.runtime.child.overfit_run import (
        DEFAULT_TIME_BUDGET,
        PLATEAU_MIN_STEPS,
        sized_budget,
    )

    # fast steps: the default fits the steps a plateau needs many times over
    assert sized_budget(0.01, 0.05, None) == DEFAULT_TIME_BUDGET
    # two CPU seconds a step: enough for the steps a plateau needs, a tenth more
    assert sized_budget(2.0, 6.0, None) == pytest.approx(6.0 + 2.0 * PLATEAU_MIN_STEPS * 1.1)
    # never past what the hang guard leaves, and never below the default
    assert sized_budget(2.0, 6.0, 150.0) == 150.0
    assert sized_budget(2.0, 6.0, 30.0) == DEFAULT_TIME_BUDGET
