"""The `torchlint_setup()` factory: the explicit way in when zero-config capture cannot work.

A script that defines a module-level ``torchlint_setup()`` returning
``dict(model=..., loader=..., loss_fn=..., optimizer=..., batch_fn=...)`` (``loss_fn`` or
``batch_fn`` required) is not run as ``__main__``: it is imported under another name, so its
``if __name__ == "__main__":`` block does not train, and the checks run the explicit API on what
the factory returns.
"""

from __future__ import annotations

import runpy
import traceback
from pathlib import Path
from typing import Any

from torchlint.runtime.envelope import envelope, error_info

REQUIRED = ("model", "loader", "optimizer")


def run_setup(check: str, script: Path, steps: int, events: Any) -> dict[str, Any]:
    from torchlint.runtime.child.core import grad_scan, overfit_one_batch

    try:
        namespace = runpy.run_path(str(script), run_name="__torchlint_setup__")
        spec = namespace["torchlint_setup"]()
    except BaseException as exc:  # the user's code: report, do not die
        return _setup_error(check, f"torchlint_setup() raised {type(exc).__name__}: {exc}", exc)
    if not isinstance(spec, dict):
        return _setup_error(check, "torchlint_setup() must return a dict", None)
    missing = [key for key in REQUIRED if spec.get(key) is None]
    if spec.get("loss_fn") is None and spec.get("batch_fn") is None:
        missing.append("loss_fn or batch_fn")
    if missing:
        return _setup_error(check, f"torchlint_setup() returned no {', '.join(missing)}", None)
    events({"event": "captured", "summary": "captured from torchlint_setup()"})
    try:
        if check == "overfit":
            result: dict[str, Any] = overfit_one_batch(
                spec["model"],
                spec["loader"],
                spec.get("loss_fn"),
                spec["optimizer"],
                steps=steps,
                batch_fn=spec.get("batch_fn"),
            ).to_json()
        else:
            result = grad_scan(
                spec["model"],
                spec["loader"],
                spec.get("loss_fn"),
                spec["optimizer"],
                steps=steps,
                batch_fn=spec.get("batch_fn"),
            ).to_json()
    except BaseException as exc:
        return _setup_error(check, f"the check raised {type(exc).__name__}: {exc}", exc)
    result["payload"]["source"] = "torchlint_setup()"
    return result


def _setup_error(check: str, message: str, exc: BaseException | None) -> dict[str, Any]:
    tail = "".join(traceback.format_exception(exc)).splitlines()[-20:] if exc is not None else []
    result = envelope(check, "error", None, message, None, {})
    result["error"] = error_info("setup", message, None, None, tail)
    return result
