"""Whose fault is a failure of the user's script under a runtime check: the script's, or ours?

The report must not tell a person to fix a script that runs fine on its own. A failure is
torchlint's when the exception was raised by torchlint's own code (the innermost frame of its
traceback is in the torchlint package), or when it says that an object of torchlint's could not
be pickled or copied. Errors the run's file isolation passes on from the operating system
(`FileNotFoundError` for a file the script deleted, ...) are the script's: the modules that do
that mark themselves `TRANSPARENT = True`.
"""

from __future__ import annotations

import os
import pickle
import re
import sys
import traceback
from types import TracebackType

import torchlint

_PACKAGE = os.path.dirname(os.path.abspath(torchlint.__file__)) + os.sep
#: the child's own frames that only run the script (the script's exceptions pass through them)
_RUNNERS = ("runtime/child/__main__.py",)
_COPY_ERRORS = ("pickle", "deepcopy", "copy")
#: how our objects are named in pickling errors (the child's own module runs as __main__)
_OURS = re.compile(r"\btorchlint\.[a-z_]+\.|'__main__\.Events'|__main__\.Events\b")


def _module_of(filename: str) -> object | None:
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == filename:
            return module
    return None


def _is_transparent(filename: str, exc: BaseException) -> bool:
    if not isinstance(exc, OSError):
        return False
    module = _module_of(filename)
    return bool(getattr(module, "TRANSPARENT", False))


def torchlint_fault(exc: BaseException) -> str | None:
    """Why `exc` is torchlint's fault (a sentence), or None when it is the script's."""
    innermost: TracebackType | None = None
    tb = exc.__traceback__
    while tb is not None:
        innermost = tb
        tb = tb.tb_next
    if innermost is not None:
        filename = os.path.abspath(innermost.tb_frame.f_code.co_filename)
        relative = filename[len(_PACKAGE) :].replace(os.sep, "/")
        if (
            filename.startswith(_PACKAGE)
            and relative not in _RUNNERS
            and not _is_transparent(filename, exc)
        ):
            return (
                f"{type(exc).__name__} was raised inside torchlint "
                f"(torchlint/{relative}, line {innermost.tb_lineno}, in "
                f"{innermost.tb_frame.f_code.co_name})"
            )
    text = str(exc)
    copying = isinstance(exc, (pickle.PicklingError, TypeError, AttributeError)) and any(
        word in text for word in _COPY_ERRORS
    )
    if copying and _OURS.search(text):
        return f"the script copied or saved one of its objects and reached torchlint's: {text}"
    return None


def _runs_the_script(frame: traceback.FrameSummary) -> bool:
    """A frame a plain run would not have: torchlint's own, or runpy's that started the script."""
    filename = os.path.abspath(frame.filename)
    return filename.startswith(_PACKAGE) or frame.filename.startswith("<frozen runpy")


def _drop_our_frames(shown: traceback.TracebackException) -> None:
    seen: set[int] = set()
    todo = [shown]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        kept = [frame for frame in current.stack if not _runs_the_script(frame)]
        current.stack = traceback.StackSummary.from_list(kept)
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)


def script_traceback(exc: BaseException) -> str:
    """The traceback of the script's failure as a plain `python script.py` prints it: without
    the frames of torchlint's runner and of its file isolation (which raise what the real
    calls raise). A failure of torchlint's own keeps every frame: those are the ones to read."""
    shown = traceback.TracebackException.from_exception(exc)
    if torchlint_fault(exc) is None:
        _drop_our_frames(shown)
    return "".join(shown.format())
