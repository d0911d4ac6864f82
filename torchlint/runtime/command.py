"""`torchlint run overfit|grads SCRIPT [-- ARGS]`: the command-line face of the launcher."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from torchlint.runtime.checks import OPTIONS
from torchlint.runtime.launcher import RunRequest, exit_status, run_check
from torchlint.runtime.sandbox.scratch import check_keep_folder


class RunUsageError(Exception):
    """A `torchlint run` invocation that cannot start (reported with exit status 2)."""


def request_from(args: argparse.Namespace) -> RunRequest:
    script = Path(args.script)
    if not script.is_file():
        raise RunUsageError(f"{args.script}: no such file")
    if args.steps is not None and args.steps < 1:
        raise RunUsageError("--steps must be at least 1")
    if args.timeout <= 0:
        raise RunUsageError("--timeout must be positive")
    keep = Path(args.keep_outputs).resolve() if args.keep_outputs else None
    if keep is not None and (problem := check_keep_folder(keep)) is not None:
        raise RunUsageError(f"--keep-outputs: {problem}")
    script_args = list(args.script_args or [])
    options = check_options(args)
    ranks = args.nproc_per_node
    if ranks is not None:
        if args.check not in ("grads", "profile"):
            raise RunUsageError(f"--nproc-per-node applies to grads and profile, not {args.check}")
        if ranks < 1:
            raise RunUsageError("--nproc-per-node must be at least 1")
    return RunRequest(
        check=args.check,
        script=script,
        args=script_args,
        steps=args.steps,
        timeout_s=args.timeout,
        python=args.python or sys.executable,
        cwd=Path.cwd(),
        echo_output=sys.stderr if args.show_output else None,
        options=options,
        nproc_per_node=ranks or 1,
        isolation=args.isolation,
        keep_outputs=keep,
    )


def check_options(args: argparse.Namespace) -> dict[str, object]:
    """The options given for this check; an option of another check is a usage error."""
    options: dict[str, object] = {}
    for option in OPTIONS:
        attribute, key, checks = option.attribute, option.key, option.checks
        value = getattr(args, attribute, None)
        if key is None or value is None or (attribute == "sync" and value == "auto"):
            continue
        if args.check not in checks:
            raise RunUsageError(
                f"{option.flag} applies to {' and '.join(checks)}, not {args.check}"
            )
        if attribute in ("trace", "plot"):
            value = str(Path(value).resolve())
        elif isinstance(value, float) and attribute == "time_budget" and not value > 0:
            raise RunUsageError(f"--time-budget must be positive, not {value:g}")
        elif isinstance(value, int) and value < (0 if attribute == "warmup" else 1):
            raise RunUsageError(f"--{attribute.replace('_', '-')} is too small: {value}")
        options[key] = value
    low, high = options.get("lr_min"), options.get("lr_max")
    for name, value in (("--lr-min", low), ("--lr-max", high)):
        if isinstance(value, float) and not value > 0:
            raise RunUsageError(f"{name} must be a positive learning rate, not {value:g}")
    if isinstance(low, float) and isinstance(high, float) and not high > low:
        raise RunUsageError(f"--lr-max ({high:g}) must be above --lr-min ({low:g})")
    return options


def cmd_run(args: argparse.Namespace) -> int:
    try:
        request = request_from(args)
    except RunUsageError as exc:
        print(f"torchlint: error: {exc}", file=sys.stderr)
        return 2
    if args.output_format == "json":
        result = run_check(request)
        sys.stdout.write(json.dumps(result, indent=2, allow_nan=False) + "\n")
    else:
        from torchlint.runtime.report import ProgressDisplay, make_console, render_report

        console = make_console()
        if args.show_output:  # the script's own lines would tear a live progress bar
            result = run_check(request)
        else:
            with ProgressDisplay(console, request.check, request.step_count) as on_event:
                result = run_check(request, on_event=on_event)
        render_report(result, console)
    if args.output:
        Path(args.output).write_text(json.dumps(result, indent=2, allow_nan=False) + "\n")
    return exit_status(result)
