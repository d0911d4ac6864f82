"""Where a project's modules live: its root, its source roots (the root and `src/`), and the
module name of each file, following how Python itself would import them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
_SOURCE_SUFFIXES = (".py", ".pyi")


def find_project_root(path: Path) -> Path:
    """The nearest folder at or above `path`'s folder with a project marker (pyproject.toml,
    setup.py, setup.cfg, .git), else `path`'s own folder."""
    start = path if path.is_dir() else path.parent
    for folder in (start, *start.parents):
        if any(os.path.exists(folder / marker) for marker in ROOT_MARKERS):
            return folder
    return start


@dataclass(frozen=True)
class ProjectLayout:
    """The folders imports are resolved from. Picklable: it travels to worker processes."""

    root: Path
    source_roots: tuple[Path, ...]

    @classmethod
    def at(cls, root: Path) -> ProjectLayout:
        root = Path(os.path.abspath(root))
        roots = [root]
        if (root / "src").is_dir():
            roots.insert(0, root / "src")
        return cls(root, tuple(roots))

    @classmethod
    def for_file(cls, path: Path) -> ProjectLayout:
        return cls.at(find_project_root(Path(os.path.abspath(path))))

    def contains(self, path: Path) -> bool:
        return _is_below(path, self.root)

    def module_name(self, path: Path) -> str | None:
        """`pkg.engine` for `<root>/pkg/engine.py` (or under `src/`), `pkg` for its
        `__init__.py`; None for a file outside the source roots or with a name Python cannot
        import."""
        path = Path(os.path.abspath(path))
        for source_root in self.source_roots:
            if not _is_below(path, source_root) or path == source_root:
                continue
            parts = list(path.relative_to(source_root).parts)
            if not parts[-1].endswith(_SOURCE_SUFFIXES):
                return None
            parts[-1] = parts[-1].rsplit(".", 1)[0]
            if parts[-1] == "__init__":
                parts.pop()
            if parts and all(p.isidentifier() for p in parts):
                return ".".join(parts)
            return None
        return None

    def is_package(self, path: Path) -> bool:
        return path.name in ("__init__.py", "__init__.pyi")

    def package_of(self, path: Path) -> str | None:
        """The package relative imports in `path` start from: `pkg` for `pkg/engine.py` and for
        `pkg/__init__.py`, `""` for a top-level module; None outside the source roots."""
        module = self.module_name(path)
        if module is None or self.is_package(path):
            return module
        return module.rpartition(".")[0]

    def search_path(self, importer: Path) -> tuple[Path, ...]:
        """Where an absolute import in `importer` is looked up: the importer's own folder first
        when it is a script (not inside a package: `python train.py` puts its folder on
        `sys.path`), then the source roots."""
        folder = Path(os.path.abspath(importer)).parent
        if (folder / "__init__.py").exists() or folder in self.source_roots:
            return self.source_roots
        return (folder, *self.source_roots)

    def find_module(self, module: str, search: tuple[Path, ...]) -> Path | None:
        """The file that `import module` would load from the project, if any."""
        parts = module.split(".")
        for base in search:
            candidate = base.joinpath(*parts)
            for option in (candidate.with_name(parts[-1] + ".py"), candidate / "__init__.py"):
                if option.is_file() and self.contains(option):
                    return option
        return None

    def top_level_names(self, search: tuple[Path, ...]) -> frozenset[str]:
        """The names an absolute import can start with to reach a project module."""
        names: set[str] = set()
        for base in search:
            try:
                entries = os.listdir(base)
            except OSError:
                continue
            for entry in entries:
                if entry.endswith(".py") and entry[:-3].isidentifier():
                    names.add(entry[:-3])
                elif entry.isidentifier() and (base / entry).is_dir() and _has_python(base / entry):
                    names.add(entry)
        return frozenset(names)


def _has_python(folder: Path, depth: int = 3) -> bool:
    """Whether `folder` holds Python modules, directly or in subpackages a few levels down: a
    namespace package (`pl_bolts/` without an `__init__.py`, only `pl_bolts/models/...`) is
    importable too."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return False
    if any(name.endswith(".py") for name in entries):
        return True
    return depth > 1 and any(
        name.isidentifier() and _has_python(folder / name, depth - 1)
        for name in entries
        if "." not in name
    )


def _is_below(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True
