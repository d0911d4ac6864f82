"""Put on PYTHONPATH for the processes of a `torchlint run` only: every Python process of the run
installs the file redirection at start-up (before the script or anything it imports runs),
then runs the `sitecustomize` this one shadows, if there is one."""

import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))

try:
    from torchlint.runtime.sandbox.install import install_from_environment

    install_from_environment()
except Exception as exc:  # the child refuses to run the script then (child.py)
    sys.stderr.write(f"torchlint: could not isolate this process's file writes: {exc!r}\n")
    os.environ["TORCHLINT_ISOLATION_FAILED"] = repr(exc)

sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
_next = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
if _next is not None and _next.loader is not None:  # the one Python would have run
    _module = importlib.util.module_from_spec(_next)
    _next.loader.exec_module(_module)
    sys.modules["sitecustomize"] = _module
