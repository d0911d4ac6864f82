"""A package that re-exports its engine's functions."""

from .engine import evaluate, full_step

__all__ = ["evaluate", "full_step"]
