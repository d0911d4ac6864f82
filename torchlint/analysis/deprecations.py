"""Deprecated and removed PyTorch APIs, their replacements and the releases they changed in.

The data behind TL501 removed-api and TL502 deprecated-api. It lives with the analyzer rather
than with the rules because the collector reads it during its one walk (to record the uses of
these names), and the analyzer cannot import the rules package.

Every entry states only what PyTorch itself says: the deprecation notes in its documentation and
warnings, its release notes, and the messages of the stubs that replaced removed functions (which
say "deprecated since version 1.9 and is now removed"). A release we could not pin down is left
out (None) rather than guessed:

- `deprecated_in`: the release whose notes deprecate the API.
- `removed_in`: the release that removed it. The linear-algebra functions below were removed
  one by one in 2022 and 2023 (pytorch/pytorch PRs 70986, 70982, 70980, 70981, 70988); they all
  raise in every 2.x release, but which release dropped each one is not recorded here.
- `replacement_since`: a release that has the replacement, so that `target-torch-version` can
  silence advice the project's oldest PyTorch cannot follow. It is the deprecation release where
  one is recorded (the old API was deprecated *in favour of* the replacement, which was there),
  otherwise the release the sources show the replacement in; None when every release has it.

Sources: the PyTorch 1.9 release notes and deprecation PRs 57741 (solve), 57732 (symeig),
57745 (qr), 57725 (cholesky), 57735 (chain_matmul), 57743 (lstsq), 57734 (matrix_rank);
PR 63570 (triangular_solve, 1.11); PRs 77636 / 77637 (lu, lu_solve, whose BC-breaking notes show
the 1.13 spelling); the documentation of `torch.ger`, `torch.range` and `torch.norm`; and the
`functorch.*` deprecation warning ("deprecated as of PyTorch 2.0 ... see the PyTorch 2.0 release
notes and/or the torch.func migration guide").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Version = tuple[int, int]


@dataclass(frozen=True)
class ApiChange:
    qualname: str  # as the import table resolves it: `torch.qr`, `functorch.vmap`
    status: Literal["deprecated", "removed"]
    replacement: str  # what to write instead, as shown in the message
    mechanical: bool  # some call form can be rewritten exactly (the rule knows which)
    note: str  # one line for the message: what differs, or why there is no automatic fix
    deprecated_in: Version | None = None
    removed_in: Version | None = None
    replacement_since: Version | None = None


_LINALG_1_9 = (1, 9)


def _functorch(name: str) -> ApiChange:
    return ApiChange(
        f"functorch.{name}",
        "deprecated",
        f"torch.func.{name}",
        True,
        "the same transform under its new name",
        deprecated_in=(2, 0),
        replacement_since=(2, 0),
    )


API_CHANGES: tuple[ApiChange, ...] = (
    # --- removed: the names still exist, as stubs that raise RuntimeError -------------------
    ApiChange(
        "torch.solve",
        "removed",
        "torch.linalg.solve(A, B)",
        False,
        "the arguments are reversed (`torch.solve(B, A)`) and only the solution is returned, "
        "not the LU factorization",
        deprecated_in=_LINALG_1_9,
        replacement_since=_LINALG_1_9,
    ),
    ApiChange(
        "torch.symeig",
        "removed",
        "torch.linalg.eigh(A)",
        False,
        "`torch.linalg.eigvalsh(A)` gives the eigenvalues alone; both read the lower triangle "
        "by default where `symeig` read the upper one (pass `UPLO='U'` to keep it)",
        deprecated_in=_LINALG_1_9,
        replacement_since=_LINALG_1_9,
    ),
    ApiChange(
        "torch.eig",
        "removed",
        "torch.linalg.eig(A)",
        False,
        "`torch.linalg.eigvals(A)` gives the eigenvalues alone; both return complex tensors "
        "instead of real ones mimicking complex numbers",
        deprecated_in=_LINALG_1_9,
        replacement_since=_LINALG_1_9,
    ),
    ApiChange(
        "torch.lstsq",
        "removed",
        "torch.linalg.lstsq(A, B).solution",
        False,
        "the arguments are reversed, and the residuals are a field of the result instead of "
        "the last rows of the solution",
        deprecated_in=_LINALG_1_9,
        replacement_since=_LINALG_1_9,
    ),
    ApiChange(
        "torch.matrix_rank",
        "removed",
        "torch.linalg.matrix_rank(A)",
        False,
        "the parameter `symmetric` is called `hermitian` there",
        deprecated_in=_LINALG_1_9,
        replacement_since=_LINALG_1_9,
    ),
    # --- deprecated linear algebra: torch.linalg has the replacement ------------------------
    ApiChange(
        "torch.qr",
        "deprecated",
        "torch.linalg.qr(A)",
        True,
        '`some=True` / `some=False` become `mode="reduced"` / `mode="complete"`',
        deprecated_in=_LINALG_1_9,
        replacement_since=_LINALG_1_9,
    ),
    ApiChange(
        "torch.cholesky",
        "deprecated",
        "torch.linalg.cholesky(A)",
        True,
        "`torch.cholesky(A, upper=True)` becomes `torch.linalg.cholesky(A).mH`",
        deprecated_in=_LINALG_1_9,
        replacement_since=_LINALG_1_9,
    ),
    ApiChange(
        "torch.chain_matmul",
        "deprecated",
        "torch.linalg.multi_dot([A, B, C])",
        True,
        "`multi_dot` takes one list of two or more tensors instead of separate arguments",
        deprecated_in=_LINALG_1_9,
        replacement_since=_LINALG_1_9,
    ),
    ApiChange(
        "torch.lu",
        "deprecated",
        "torch.linalg.lu_factor(A)",
        False,
        "`get_infos=True` becomes `torch.linalg.lu_factor_ex(A)`, which returns the infos "
        "and does not raise on singular input",
        deprecated_in=(1, 13),
        replacement_since=(1, 13),
    ),
    ApiChange(
        "torch.lu_solve",
        "deprecated",
        "torch.linalg.lu_solve(LU, pivots, B)",
        True,
        "the right-hand side moves from the first argument to the last",
        deprecated_in=(1, 13),
        replacement_since=(1, 13),
    ),
    ApiChange(
        "torch.triangular_solve",
        "deprecated",
        "torch.linalg.solve_triangular(A, B, upper=...)",
        False,
        "the arguments are reversed, `upper` has no default, and only the solution is "
        "returned, not a copy of `A`",
        deprecated_in=(1, 11),
        replacement_since=(1, 11),
    ),
    ApiChange(
        "torch.ger",
        "deprecated",
        "torch.outer(a, b)",
        True,
        "`torch.ger` is an alias of `torch.outer`",
        replacement_since=(1, 9),  # `torch.ger` has been an alias of it since 2021 (PR 59710)
    ),
    ApiChange(
        "torch.norm",
        "deprecated",
        "torch.linalg.vector_norm(x)",
        True,
        "or `torch.linalg.matrix_norm(x)` for a norm over matrices, such as the nuclear or "
        "spectral norm",
        replacement_since=_LINALG_1_9,
    ),
    ApiChange(
        "torch.range",
        "deprecated",
        "torch.arange(start, end, step)",
        False,
        "`torch.range` includes `end` and always returns floating point, while `torch.arange` "
        "excludes `end` and returns integers for integer arguments",
    ),
    # --- functorch moved into torch.func -----------------------------------------------------
    *(
        _functorch(name)
        for name in (
            "vmap",
            "grad",
            "grad_and_value",
            "vjp",
            "jvp",
            "jacrev",
            "jacfwd",
            "hessian",
            "functionalize",
        )
    ),
    ApiChange(
        "functorch.make_functional",
        "deprecated",
        "torch.func.functional_call(model, params, args)",
        False,
        "`functional_call` takes the parameters as a dict at every call instead of returning a "
        "stateless copy of the model",
        deprecated_in=(2, 0),
        replacement_since=(2, 0),
    ),
    ApiChange(
        "functorch.make_functional_with_buffers",
        "deprecated",
        "torch.func.functional_call(model, (params, buffers), args)",
        False,
        "`functional_call` takes the parameters and buffers as dicts at every call",
        deprecated_in=(2, 0),
        replacement_since=(2, 0),
    ),
    ApiChange(
        "functorch.combine_state_for_ensemble",
        "deprecated",
        "torch.func.stack_module_state(models)",
        False,
        "`stack_module_state` returns dicts of stacked parameters and buffers, to be used with "
        "`torch.func.functional_call` under `vmap`",
        deprecated_in=(2, 0),
        replacement_since=(2, 0),
    ),
)

BY_QUALNAME: dict[str, ApiChange] = {change.qualname: change for change in API_CHANGES}

# The last segments of the names above (`qr`, `vmap`, ...): an attribute access is resolved
# through the import table only when its name is one of these.
ATTRIBUTE_NAMES: frozenset[str] = frozenset(q.rsplit(".", 1)[-1] for q in BY_QUALNAME)


def format_version(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


__all__ = [
    "API_CHANGES",
    "ATTRIBUTE_NAMES",
    "BY_QUALNAME",
    "ApiChange",
    "Version",
    "format_version",
]
