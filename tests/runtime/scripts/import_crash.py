"""Crashes at import: a module that is not installed."""

import torch  # noqa: F401
import torchlint_missing_dependency  # noqa: F401  # line: import
