"""Every runtime check the test suite starts runs from a real-looking workspace (data files, an
existing checkpoint, a log folder) as its working directory, and fails its test if it changes
any byte of that workspace, of the scripts' folder, of the script's own folder or working
directory, or of examples/ (tests/conftest.py applies this to tests/runtime/ and to every
`torchlint run` subprocess; the language server's runs are guarded in test_lsp_runtime.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from workspace_guard import unchanged

from torchlint.runtime import launcher

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SCRIPTS = Path(__file__).resolve().parent / "runtime" / "scripts"
#: `torchlint run` options naming files torchlint writes because it was asked to
OUTPUT_OPTIONS = ("--output", "--plot", "--trace", "--keep-outputs")


def guarded_run_check(workspace: Path) -> Callable[..., dict[str, Any]]:
    """`run_check`, failing when the run changed the user's files."""
    run_check = launcher.run_check

    def run(request: launcher.RunRequest, *args: Any, **kwargs: Any) -> dict[str, Any]:
        folders = [workspace, SCRIPTS, EXAMPLES, request.script.resolve().parent]
        folders.append(request.cwd if request.cwd is not None else Path.cwd())
        allowed = [Path(str(v)) for k, v in request.options.items() if k in ("plot", "trace")]
        if request.keep_outputs is not None:
            allowed.append(request.keep_outputs)
        with unchanged(*folders, allowed=allowed):
            return run_check(request, *args, **kwargs)

    return run


def guarded_cli_run(args: tuple[str, ...], cwd: Path) -> Any:
    """`unchanged()` for one `torchlint run ...` command line (a no-op for other commands)."""
    if len(args) < 3 or args[0] != "run":
        return unchanged()
    script = (cwd / args[2]).resolve()
    allowed = [
        (cwd / args[i + 1]).resolve() for i, arg in enumerate(args[:-1]) if arg in OUTPUT_OPTIONS
    ]
    return unchanged(SCRIPTS, EXAMPLES, cwd, script.parent, allowed=allowed)
