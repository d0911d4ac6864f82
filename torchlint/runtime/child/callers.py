"""The user's line that made a call into torch, seen from inside a patched torch function."""

from __future__ import annotations

import os
import warnings
from types import FrameType

import torch

from torchlint.runtime.sites import Site, SiteFinder

#: frames skipped on the way to the caller: torch's own, torchlint's (the first step's loss spy
#: is a TorchFunctionMode, so `Tensor.backward` passes through it) and the warnings module's
SKIPPED = (
    os.path.dirname(torch.__file__) + os.sep,
    os.path.dirname(os.path.dirname(os.path.dirname(__file__))) + os.sep,
    os.path.dirname(warnings.__file__) + os.sep + "warnings.py",
)


def user_caller(finder: SiteFinder, frame: FrameType | None) -> Site | None:
    """The line that called into torch, when the first frame outside torch (and torchlint) is
    the user's own code; None when a library (a framework's Trainer) made the call."""
    while frame is not None and frame.f_code.co_filename.startswith(SKIPPED):
        frame = frame.f_back
    if frame is None or not finder.is_user_file(frame.f_code.co_filename):
        return None
    return Site(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
