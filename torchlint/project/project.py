"""The project a file belongs to, as the analysis sees it: which qualified names are project
functions and classes, and the collected facts of the files that loops call into.

Everything is keyed by the file's content hash, so a file is read by `ast` (exports) and by
libcst (facts) at most once per content per process, and an edit to `engine.py` makes exactly
the files that used it look again. Each analysis records the files it consulted
(`Project.begin()` / `Project.consulted`), which is what the results cache keys on."""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from torchlint.cache import content_hash
from torchlint.project.callers import CallRecord, python_files, read_calls
from torchlint.project.exports import ModuleExports, read_exports, resolve_relative
from torchlint.project.layout import ProjectLayout

Reader = Callable[[Path], bytes | None]


class CollectedFile(Protocol):
    """What the project asks of a file the analysis collected (the project never looks inside
    the analysis's facts itself: `torchlint.project_view` provides the collector)."""

    def owns(self, node_id: int) -> bool:
        """Whether a syntax node (by id) belongs to this file's tree."""
        ...

    def defines_function(self, name: str) -> bool: ...

    def class_bases(self, name: str) -> tuple[str, ...] | None:
        """The bases of a top-level class as written, or None when there is no such class."""
        ...

    def defines_method(self, class_name: str, method: str) -> bool: ...

    def alias(self, name: str) -> str | None:
        """What an imported name stands for (`Base` -> `pkg.base.Base`)."""
        ...


F = TypeVar("F", bound=CollectedFile)

# Re-exports followed (`pkg/__init__.py` importing from `pkg.engine`) before giving up.
MAX_REEXPORTS = 4
# Collected files kept per process. A few hundred kB of source each at most: their trees are
# what the loops of the files being checked call into.
MAX_LOADED = 48
# Files larger than this are never collected as dependencies (they are still checked).
MAX_DEPENDENCY_BYTES = 2_000_000


def read_file(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(MAX_DEPENDENCY_BYTES + 1)
    except OSError:
        return None


@dataclass(frozen=True)
class SourceRef:
    """Where a scope collected from another project file lives."""

    path: Path
    display: str  # relative to the project root: `pkg/engine.py`
    module: str


@dataclass(eq=False)
class LoadedModule(Generic[F]):
    ref: SourceRef
    digest: str
    file: F


# Reads one project file for its callers: the bytes, the file's place in the project and where
# it lives; None when it cannot be read as Python.
Collector = Callable[[bytes, "FileContext[F]", SourceRef], F | None]


@dataclass(frozen=True)
class Symbol:
    """A project function or class, found by its qualified name."""

    path: Path
    module: str
    name: str  # in its module
    is_class: bool


class FileContext(Generic[F]):
    """What collecting and resolving one file asks of the project."""

    def __init__(self, project: Project[F], path: Path) -> None:
        self.project = project
        self.path = path
        layout = project.layout
        self.module = layout.module_name(path)
        self.package = layout.package_of(path)
        self.search = layout.search_path(path)
        self.names = project.top_level_names(self.search)

    def relative(self, level: int, module: str | None) -> str | None:
        return resolve_relative(self.package, level, module)

    def is_project(self, qualified: str) -> bool:
        return qualified.split(".", 1)[0] in self.names

    def symbol(self, qualified: str) -> Symbol | None:
        if not self.is_project(qualified):
            return None
        return self.project.symbol(qualified, self.search)

    def class_methods(self, qualified: str) -> frozenset[str] | None:
        """The methods of a project class (its own and its project bases'), or None."""
        symbol = self.symbol(qualified)
        if symbol is None or not symbol.is_class:
            return None
        return self.project.all_methods(symbol)

    def function_file(self, qualified: str) -> tuple[F, str] | None:
        """The collected file that defines the project function `qualified`, and its name there."""
        symbol = self.symbol(qualified)
        if symbol is None or symbol.is_class:
            return None
        loaded = self.project.load(symbol.path)
        if loaded is None or not loaded.file.defines_function(symbol.name):
            return None
        return loaded.file, symbol.name

    def method_file(self, class_qualified: str, method: str) -> tuple[F, str] | None:
        """The collected file and the class (its own or a base) that define `method`."""
        symbol = self.symbol(class_qualified)
        if symbol is None or not symbol.is_class:
            return None
        return self.project.method(symbol, method)

    def star_names(self, module: str) -> frozenset[str] | None:
        """The public names a project module defines or imports (`from module import *`)."""
        if not self.is_project(module):
            return None
        path = self.project.layout.find_module(module, self.search)
        exports = self.project.exports(path) if path is not None else None
        if exports is None:
            return None
        names = exports.functions | frozenset(exports.classes) | frozenset(exports.aliases)
        return frozenset(n for n in names if not n.startswith("_"))

    def generation(self) -> int:
        return self.project.generation()


class Project(Generic[F]):
    """One project's modules, for any number of analyses (per process, or per language server)."""

    def __init__(
        self, layout: ProjectLayout, collector: Collector[F], reader: Reader = read_file
    ) -> None:
        self.layout = layout
        self.collector = collector
        self.reader = reader
        self._data: dict[Path, tuple[bytes, str] | None] = {}  # this round's reads
        self._exports: dict[tuple[Path, str], ModuleExports] = {}
        self._loaded: OrderedDict[tuple[Path, str], LoadedModule[F]] = OrderedDict()
        self._names: dict[tuple[Path, ...], frozenset[str]] = {}
        self._files: list[Path] | None = None
        self._symbols: dict[tuple[str, tuple[Path, ...]], Symbol | None] = {}  # this round's
        self._calls: dict[tuple[Path, str], list[CallRecord]] = {}
        self.consulted: dict[Path, str] = {}  # path -> content hash, since `begin()`
        self.in_use: list[LoadedModule[F]] = []  # the collected files this analysis used
        self._generation = 0

    def generation(self) -> int:
        """Moves on whenever files may have changed: cross-file calls are looked up again."""
        return self._generation

    # --- rounds ---------------------------------------------------------------------------

    def begin(self) -> None:
        """Start one analysis: files are read again (they may have changed since). The list
        of the project's files is kept until `forget()`."""
        self._data.clear()
        self._symbols.clear()
        self.consulted = {}
        self.in_use = []
        self._generation += 1

    def forget(self, path: Path) -> None:
        """A file changed or closed (the language server): read it again next time."""
        self._data.pop(path, None)
        self._names.clear()
        self._symbols.clear()
        self._files = None
        self._generation += 1

    def context(self, path: Path) -> FileContext[F]:
        return FileContext(self, Path(os.path.abspath(path)))

    # --- reading --------------------------------------------------------------------------

    def source(self, path: Path) -> tuple[bytes, str] | None:
        if path not in self._data:
            data = self.reader(path)
            if data is None or len(data) > MAX_DEPENDENCY_BYTES:
                self._data[path] = None
            else:
                self._data[path] = (data, content_hash(data))
        found = self._data[path]
        if found is not None:
            self.consulted[path] = found[1]
        return found

    def top_level_names(self, search: tuple[Path, ...]) -> frozenset[str]:
        if search not in self._names:
            self._names[search] = self.layout.top_level_names(search)
        return self._names[search]

    def exports(self, path: Path) -> ModuleExports | None:
        source = self.source(path)
        if source is None:
            return None
        data, digest = source
        key = (path, digest)
        if key not in self._exports:
            module = self.layout.module_name(path) or path.stem
            text = data.decode("utf-8", errors="replace")
            if len(self._exports) > 4096:
                self._exports.clear()
            self._exports[key] = read_exports(text, module, self.layout.package_of(path))
        return self._exports[key]

    def python_files(self) -> list[Path]:
        """The project's Python files (listed once per round)."""
        if self._files is None:
            self._files = list(python_files(self.layout.root))
        return self._files

    def calls(self, path: Path) -> list[CallRecord]:
        """The calls of imported names in a project file (for `callers_elsewhere`)."""
        source = self.source(path)
        exports = self.exports(path)
        if source is None or exports is None:
            return []
        key = (path, source[1])
        if key not in self._calls:
            if len(self._calls) > 4096:
                self._calls.clear()
            text = source[0].decode("utf-8", errors="replace")
            defined = exports.functions | frozenset(exports.classes)
            self._calls[key] = read_calls(text, exports.aliases, defined)
        return self._calls[key]

    # --- names ----------------------------------------------------------------------------

    def symbol(self, qualified: str, search: tuple[Path, ...], hops: int = 0) -> Symbol | None:
        """`engine.evaluate` -> the function `evaluate` of `<root>/engine.py`, following
        re-exports (`from .engine import evaluate` in a package's `__init__.py`)."""
        key = (qualified, search)
        if key not in self._symbols:
            self._symbols[key] = self._find_symbol(qualified, search, hops)
        return self._symbols[key]

    def _find_symbol(self, qualified: str, search: tuple[Path, ...], hops: int) -> Symbol | None:
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module, rest = ".".join(parts[:cut]), parts[cut:]
            path = self.layout.find_module(module, search)
            if path is None:
                continue
            if len(rest) != 1:
                return None  # `pkg.Class.method` or a submodule we did not find
            exports = self.exports(path)
            if exports is None:
                return None
            name = rest[0]
            if name in exports.functions or name in exports.classes:
                return Symbol(path, module, name, name in exports.classes)
            target = exports.aliases.get(name)
            if target is not None and hops < MAX_REEXPORTS:
                return self.symbol(target, self.layout.source_roots, hops + 1)
            return None
        return None

    def all_methods(self, symbol: Symbol, depth: int = 0) -> frozenset[str]:
        exports = self.exports(symbol.path)
        if exports is None or symbol.name not in exports.classes:
            return frozenset()
        cls = exports.classes[symbol.name]
        methods = set(cls.methods)
        if depth < MAX_REEXPORTS:
            for base in cls.bases:
                found = self._base_symbol(symbol, base)
                if found is not None:
                    methods |= self.all_methods(found, depth + 1)
        return frozenset(methods)

    def _base_symbol(self, symbol: Symbol, base: str) -> Symbol | None:
        exports = self.exports(symbol.path)
        if exports is not None and base in exports.classes:
            return Symbol(symbol.path, symbol.module, base, True)
        if "." not in base and exports is not None and base not in exports.aliases:
            return None
        found = self.symbol(base, self.layout.search_path(symbol.path))
        return found if found is not None and found.is_class else None

    def method(self, symbol: Symbol, name: str, depth: int = 0) -> tuple[F, str] | None:
        """The collected file and class that define method `name` of the class `symbol` (its
        own, or a base's in this file or another)."""
        loaded = self.load(symbol.path)
        if loaded is None:
            return None
        bases = loaded.file.class_bases(symbol.name)
        if bases is None:
            return None
        if loaded.file.defines_method(symbol.name, name):
            return loaded.file, symbol.name
        if depth >= MAX_REEXPORTS:
            return None
        for base in bases:
            found = self._base_symbol(symbol, loaded.file.alias(base) or base)
            if found is None and loaded.file.class_bases(base) is not None:
                found = Symbol(symbol.path, symbol.module, base, True)
            if found is not None:
                defined = self.method(found, name, depth + 1)
                if defined is not None:
                    return defined
        return None

    # --- collected facts ------------------------------------------------------------------

    def load(self, path: Path) -> LoadedModule[F] | None:
        """The collected facts of a project file (parsed once per content, kept while used)."""
        source = self.source(path)
        if source is None:
            return None
        data, digest = source
        key = (path, digest)
        loaded = self._loaded.get(key)
        if loaded is None:
            loaded = self._collect(path, data, digest)  # resolves other files' calls lazily
            if loaded is None:
                return None
            self._loaded[key] = loaded
            while len(self._loaded) > MAX_LOADED:
                self._loaded.popitem(last=False)
        else:
            self._loaded.move_to_end(key)
        if loaded not in self.in_use:
            self.in_use.append(loaded)
        return loaded

    def _collect(self, path: Path, data: bytes, digest: str) -> LoadedModule[F] | None:
        context = self.context(path)
        ref = SourceRef(path, self.display(path), context.module or path.stem)
        try:
            collected = self.collector(data, context, ref)
        except Exception:  # a dependency we cannot read is a call we cannot see into
            return None
        return LoadedModule(ref, digest, collected) if collected is not None else None

    def display(self, path: Path) -> str:
        try:
            return path.relative_to(self.layout.root).as_posix()
        except ValueError:
            return path.as_posix()

    def owner_of(self, node_id: int) -> LoadedModule[F] | None:
        for loaded in self.in_use:
            if loaded.file.owns(node_id):
                return loaded
        return None
