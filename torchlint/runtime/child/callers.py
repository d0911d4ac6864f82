"""The user's line that made a call into torch, seen from inside a patched torch function."""

from __future__ import annotations

import os
import warnings
from types import FrameType

import torch

from torchlint.runtime.sites import Site, SiteFinder

#: frames skipped on the way to the caller: torch's own and the warnings module's
SKIPPED = (
    os.path.dirname(torch.__file__) + os.sep,
    os.path.dirname(warnings.__file__) + os.sep + "warnings.py",
)
#: torchlint's own frames: skipped where a call of the user's passes through them (the first
#: step's loss spy is a TorchFunctionMode, so `Tensor.backward` does), else never the user's
TORCHLINT = os.path.dirname(os.path.dirname(os.path.dirname(__file__))) + os.sep


def user_caller(
    finder: SiteFinder, frame: FrameType | None, through_torchlint: bool = False
) -> Site | None:
    """The line that called into torch, when the first frame outside torch is the user's own
    code; None when a library (a framework's Trainer) or torchlint itself made the call.
    `through_torchlint`: look past torchlint's frames too."""
    skipped = (*SKIPPED, TORCHLINT) if through_torchlint else SKIPPED
    while frame is not None and frame.f_code.co_filename.startswith(skipped):
        frame = frame.f_back
    if frame is None:
        return None
    filename = frame.f_code.co_filename
    if filename.startswith(TORCHLINT) or not finder.is_user_file(filename):
        return None
    return Site(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
