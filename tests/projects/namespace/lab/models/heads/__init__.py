"""A package inside namespace packages: `lab/` and `lab/models/` have no __init__.py."""

from .evaluator import Evaluator

__all__ = ["Evaluator"]
