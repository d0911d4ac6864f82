"""`torchlint run grads`: the gradient scan on the user's own loop.

In each optimizer's step pre-hook (after any AMP unscale and gradient clipping; after the
closure for LBFGS; after the backward for a manual update), the L2 norms of all its gradients
and weights are taken with one `torch._foreach_norm` call each, kept on the device and read once
at the end, then summarised by the explicit API's `summarise_grads` (grad_summary.py).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from torchlint.runtime.child.captured import Finding, OptimizerInfo, root_names
from torchlint.runtime.child.core import foreach_norms
from torchlint.runtime.child.grad_summary import summarise_grads
from torchlint.runtime.child.layer_depths import layer_depths
from torchlint.runtime.child.plugin import PluginResult, RunPlugin

if TYPE_CHECKING:
    from torchlint.runtime.child.assemble import Outcome
    from torchlint.runtime.child.capture import Capture
    from torchlint.runtime.sites import Site

#: which finding of `grad_scan` becomes which runtime diagnostic (frozen and not-in-optimizer
#: parameters are reported by the shared coverage findings, with better lines)
GRAD_CODES = {
    "never_gradient": "TLR201",
    "zero_gradient": "TLR202",
    "nonfinite_gradient": "TLR203",
    "optimizer_params_not_in_model": "TLR206",
    "vanishing": "TLR207",
    "exploding": "TLR208",
    "loss_not_differentiable": "TLR103",
}
#: backward lines whose graphs are walked for the layer depths
DEPTH_SITES = 8
#: the codes the scan itself reports (the others make the verdict `problems` too)
SCAN_CODES = frozenset(GRAD_CODES.values()) | {"TLR204", "TLR205"}


class GradsPlugin(RunPlugin):
    check = "grads"

    def __init__(self, capture: Capture, options: dict[str, Any]) -> None:
        super().__init__(capture, options)
        self.steps = max(1, int(capture.requested_steps))
        self.names: list[str] = []
        self.params: list[nn.Parameter] = []
        self.optimizer_ids: set[int] = set()
        self.foreign = 0
        self._index: dict[int, int] = {}
        self._owned: dict[int, list[int]] = {}  # id(optimizer info) -> its param indices
        self._orphans: list[int] = []  # trainable params in no optimizer
        self.grad_rows: list[torch.Tensor] = []
        self.weight_rows: list[torch.Tensor] = []
        self.present_rows: list[torch.Tensor] = []
        #: id(parameter) -> its layer depth from the loss (the least over the backward lines)
        self.depths: dict[int, int] = {}
        self._depth_sites: set[Any] = set()

    def total_steps(self) -> int:
        return self.steps

    def framework_limits(self) -> dict[str, Any]:
        return {}  # a few steps: the script's own plan is long enough, and it runs as written

    def on_backward_start(self, loss: torch.Tensor) -> None:
        site = self.capture.finder.find()
        if site in self._depth_sites or len(self._depth_sites) >= DEPTH_SITES:
            return
        self._depth_sites.add(site)
        for key, depth in layer_depths(loss).items():
            self.depths[key] = min(depth, self.depths.get(key, depth))

    def on_step_start(self, optimizer: OptimizerInfo) -> None:
        if optimizer.manual is None and not optimizer.closure:
            self._scan(optimizer, optimizer.steps)

    def on_step_end(self, optimizer: OptimizerInfo) -> None:
        if optimizer.manual is None and optimizer.closure:
            self._scan(optimizer, optimizer.steps - 1)

    def on_backward_end(self) -> None:
        """A manual update reads the gradients right after the backward (the script clears
        them before its next forward)."""
        capture = self.capture
        if any(info.manual is None for info in capture.optimizers):
            return
        index = capture.backward_calls - 1
        if index < self.steps:
            self._scan(None, index)

    def _prepare(self) -> None:
        capture = self.capture
        seen: set[int] = set()
        many = len(capture.roots) > 1
        for root, root_name in zip(capture.roots, root_names(capture.roots), strict=True):
            prefix = f"{root_name}." if many else ""
            for name, param in root.module.named_parameters():
                if id(param) in seen:
                    continue
                seen.add(id(param))
                self._index[id(param)] = len(self.params)
                self.names.append(prefix + name)
                self.params.append(param)
        for info in capture.optimizers:
            if info.manual is not None:  # the script's own update touches them all
                self.optimizer_ids.update(id(p) for p in info.parameters())
                continue
            owned: list[int] = []
            for param in info.parameters():
                self.optimizer_ids.add(id(param))
                index = self._index.get(id(param))
                if index is None:
                    self.foreign += 1
                elif param.requires_grad:
                    owned.append(index)
            self._owned[id(info)] = owned
        self._orphans = [
            i
            for i, p in enumerate(self.params)
            if p.requires_grad and id(p) not in self.optimizer_ids
        ]

    def _scan(self, info: OptimizerInfo | None, k: int) -> None:
        """Norms of this optimizer's gradients (and, at the primary's step, of trainable
        parameters in no optimizer; all of them for a manual update) at its k-th step, as one
        foreach call; kept on device."""
        if k >= self.steps or k < 0:
            return
        if not self.params:
            self._prepare()
            if not self.params:
                return
        if info is None:
            indices = [i for i, p in enumerate(self.params) if p.requires_grad]
        else:
            indices = list(self._owned.get(id(info), []))
            if info is self.capture.primary:
                indices += self._orphans
        if not indices:
            return
        count = len(self.params)
        device = self.params[indices[0]].device
        while len(self.grad_rows) <= k:
            self.grad_rows.append(torch.full((count,), math.nan, device=device))
            self.weight_rows.append(torch.full((count,), math.nan, device=device))
            self.present_rows.append(torch.zeros(count, dtype=torch.bool))
        params = self.params
        with_grad = [i for i in indices if params[i].grad is not None]
        with torch.no_grad():
            if with_grad:
                grads = [g for i in with_grad if (g := params[i].grad) is not None]
                where = torch.tensor(with_grad, dtype=torch.long, device=device)
                self.grad_rows[k][where] = foreach_norms(grads, device)
                self.present_rows[k][with_grad] = True
            where_all = torch.tensor(indices, dtype=torch.long, device=device)
            self.weight_rows[k][where_all] = foreach_norms(
                [params[i].detach() for i in indices], device
            )

    # the result -------------------------------------------------------------------------------

    def result(self, outcome: Outcome) -> PluginResult:
        from torchlint.runtime.child.assemble import environment_of, param_site, short_list

        capture = self.capture
        for info in capture.optimizers:  # a manual update recognised after the first scan
            if info.manual is not None:
                self.optimizer_ids.update(id(p) for p in info.parameters())
        rows = len(self.grad_rows)
        losses = capture.step_losses()
        if capture.primary is None or capture.primary.manual is not None:
            losses = []
        scan = summarise_grads(
            environment_of(capture),
            self.steps,
            self.names,
            self.params,
            self.optimizer_ids,
            self.foreign,
            [v for v in losses[:rows] if v is not None],
            self.grad_rows,
            self.weight_rows,
            self.present_rows,
            capture.loss_differentiable,
            [self.depths.get(id(p)) for p in self.params],
        )
        for row in scan.params:
            site = param_site(capture, row.name)
            row.site = site.to_json() if site is not None else None
        findings: list[Finding] = []
        for finding in scan.findings:
            code = GRAD_CODES.get(finding.kind)
            if code is None:
                continue
            advice = finding.advice or ""
            if finding.kind == "optimizer_params_not_in_model":
                owner = capture.primary or (capture.optimizers[0] if capture.optimizers else None)
                site = owner.site if owner is not None else None
                findings.append(Finding(code, finding.message, site, {}, advice, finding.severity))
            elif finding.kind == "nonfinite_gradient":
                evidence = {"params": finding.params[:50], "step": finding.step}
                findings.append(
                    Finding(code, finding.message, capture.backward_site, evidence, advice)
                )
            elif not finding.params:
                findings.append(Finding(code, finding.message, capture.backward_site, {}, advice))
            else:
                by_site: dict[Site | None, list[str]] = {}
                for param in finding.params:
                    by_site.setdefault(param_site(capture, param), []).append(param)
                for site, params in by_site.items():
                    findings.append(
                        Finding(
                            code,
                            f"{len(params)} parameter tensor(s) {_phrase(finding.kind)}: "
                            f"{short_list(params)}",
                            site,
                            {"params": params[:50]},
                            advice,
                        )
                    )
        result = scan.to_json()
        if result["verdict"] == "problems" and not any(
            f.severity == "error" for f in scan.findings
        ):
            # warnings (an all-zero gradient, a depth trend) are reported, not a failure
            result["verdict"] = "healthy"
            result["summary"] = result["summary"].replace("grads problems", "grads healthy", 1)
        if rows == 0:
            return PluginResult(
                "inconclusive",
                "grads inconclusive: no step was scanned",
                result["payload"],
                findings,
                "no optimizer step (or manual update) completed; the script must train for "
                "at least one step",
            )
        return PluginResult(result["verdict"], result["summary"], result["payload"], findings)


def _phrase(kind: str) -> str:
    return {
        "never_gradient": "never got a gradient: they are not connected to the loss "
        "(detached, unused, or computed under no_grad)",
        "zero_gradient": "got an all-zero gradient at every step",
    }.get(kind, kind.replace("_", " "))
