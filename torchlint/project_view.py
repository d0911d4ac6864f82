"""The seam between the analysis of one file and the project it belongs to.

`torchlint.analysis` asks for what another file exports through its `ProjectView` protocol, and
`torchlint.project` asks of a collected file only what its `CollectedFile` protocol says; neither
package imports the other. This module is where they meet: it collects other project files for
the project (`collect_file`), and shows each file's place in the project to the analysis
(`FileView`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from torchlint.analysis.collect import collect
from torchlint.analysis.facts import ModuleFacts
from torchlint.analysis.model import Scope
from torchlint.analysis.positions import PositionIndex
from torchlint.analysis.protocol import ProjectSymbol
from torchlint.analysis.resolve import resolve
from torchlint.analysis.source import ParseFailure, decode_source, parse_source
from torchlint.project.layout import ProjectLayout
from torchlint.project.project import FileContext, Project, Reader, SourceRef, read_file


@dataclass(eq=False)
class DependencyFile:
    """Another project file, collected for the loops that call into it."""

    facts: ModuleFacts
    positions: PositionIndex

    def owns(self, node_id: int) -> bool:
        return node_id in self.facts.anchors

    def defines_function(self, name: str) -> bool:
        return name in self.facts.functions

    def class_bases(self, name: str) -> tuple[str, ...] | None:
        cls = self.facts.classes.get(name)
        return cls.bases if cls is not None else None

    def defines_method(self, class_name: str, method: str) -> bool:
        cls = self.facts.classes.get(class_name)
        return cls is not None and method in cls.methods

    def alias(self, name: str) -> str | None:
        return self.facts.imports.aliases.get(name)


AnalysisProject = Project[DependencyFile]
LoadedFile = FileContext[DependencyFile]


def open_project(layout: ProjectLayout, reader: Reader = read_file) -> AnalysisProject:
    """A project whose files are collected by torchlint's analysis when a loop calls into them."""
    return Project(layout, collect_file, reader)


def collect_file(data: bytes, context: LoadedFile, ref: SourceRef) -> DependencyFile | None:
    parsed = parse_source(decode_source(data))
    if isinstance(parsed, ParseFailure):
        return None
    view = FileView(context)
    facts = collect(parsed, view)
    for scope in facts.scopes:
        scope.source = ref
    resolve(facts, view)
    return DependencyFile(facts, PositionIndex(parsed, facts.anchors))


class FileView:
    """One file's place in its project, as the analysis asks for it (`ProjectView`)."""

    __slots__ = ("context",)

    def __init__(self, context: LoadedFile) -> None:
        self.context = context

    @property
    def path(self) -> Path:
        return self.context.path

    def relative(self, level: int, module: str | None) -> str | None:
        return self.context.relative(level, module)

    def is_project(self, qualified: str) -> bool:
        return self.context.is_project(qualified)

    def symbol(self, qualified: str) -> ProjectSymbol | None:
        return self.context.symbol(qualified)

    def class_methods(self, qualified: str) -> frozenset[str] | None:
        return self.context.class_methods(qualified)

    def function_scope(self, qualified: str) -> Scope | None:
        found = self.context.function_file(qualified)
        if found is None:
            return None
        file, name = found
        return file.facts.functions.get(name)

    def method_scope(self, class_qualified: str, method: str) -> Scope | None:
        found = self.context.method_file(class_qualified, method)
        if found is None:
            return None
        file, class_name = found
        cls = file.facts.classes.get(class_name)
        return cls.methods.get(method) if cls is not None else None

    def star_names(self, module: str) -> frozenset[str] | None:
        return self.context.star_names(module)

    def generation(self) -> int:
        return self.context.generation()
