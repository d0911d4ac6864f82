"""What the analysis of one file asks of the project it belongs to, as a protocol: the analysis
never imports the project package (nor the other way round); `torchlint.project_view` joins them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from torchlint.analysis.model import Scope


class Origin(Protocol):
    """Where a scope collected from another project file lives."""

    @property
    def path(self) -> Path: ...

    @property
    def display(self) -> str: ...  # relative to the project root: `pkg/engine.py`


class ProjectSymbol(Protocol):
    @property
    def is_class(self) -> bool: ...


class ProjectView(Protocol):
    """One file's place in its project: which imported names are project code, and the scopes
    (functions, methods) other project files define."""

    def relative(self, level: int, module: str | None) -> str | None:
        """`from ..data import x`: the absolute module name (None when it climbs out)."""
        ...

    def is_project(self, qualified: str) -> bool: ...

    def symbol(self, qualified: str) -> ProjectSymbol | None: ...

    def class_methods(self, qualified: str) -> frozenset[str] | None:
        """The methods of a project class (its own and its project bases'), or None."""
        ...

    def function_scope(self, qualified: str) -> Scope | None: ...

    def method_scope(self, class_qualified: str, method: str) -> Scope | None: ...

    def star_names(self, module: str) -> frozenset[str] | None:
        """The names `from module import *` binds, for a module of the project."""
        ...

    def generation(self) -> int:
        """Moves on whenever project files may have changed."""
        ...
