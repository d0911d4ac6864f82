"""Which rules run: `select` / `ignore` lists of codes, code prefixes, names or `ALL`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from torchlint.rules import ALL_RULES, BY_NAME, Rule


class SelectorError(ValueError):
    """A selector that names no rule."""


def _matches(selector: str, rule: type[Rule]) -> bool:
    key = selector.strip()
    if key.upper() == "ALL":
        return True
    if key.lower() == rule.name:
        return True
    return rule.code.startswith(key.upper()) and key.upper().startswith("TL")


def validate_selectors(selectors: Iterable[str], origin: str) -> tuple[str, ...]:
    result = []
    for selector in selectors:
        key = selector.strip()
        if not key:
            continue
        if not any(_matches(key, rule) for rule in ALL_RULES):
            known = ", ".join(sorted(BY_NAME)[:3])
            raise SelectorError(
                f"{origin}: `{key}` matches no rule (use a code such as TL101, a prefix such "
                f"as TL1, a name such as {known}, or ALL)"
            )
        result.append(key)
    return tuple(result)


def parse_version(text: str | None) -> tuple[int, int] | None:
    """`"2.3"` / `"2.3.1"` -> (2, 3); None for None."""
    if text is None:
        return None
    major, minor = text.strip().split(".")[:2]
    return int(major), int(minor)


@dataclass(frozen=True)
class RuleSelection:
    select: tuple[str, ...] | None = None  # None: the rules enabled by default
    ignore: tuple[str, ...] = ()
    # The oldest PyTorch the project supports: rules whose advice needs a newer one stay silent.
    target_torch: tuple[int, int] | None = None
    # The oldest PyTorch the project's requirements ask for (`torch>=2.6`), when
    # `target_torch` is not set. Only advice that a newer default makes moot reads it (TL503):
    # a stale `torch>=1.4` must not silence advice that needs a newer release.
    declared_torch: tuple[int, int] | None = None
    extend: tuple[str, ...] = ()  # enabled on top of `select` (`--extend-select`)

    def enabled(self, rule: type[Rule]) -> bool:
        target, needed = self.target_torch, rule.min_torch
        if target is not None and needed is not None and target < needed:
            return False
        if self.select is None:
            chosen = rule.default_enabled
        else:
            chosen = any(_matches(s, rule) for s in self.select)
        chosen = chosen or any(_matches(s, rule) for s in self.extend)
        return chosen and not any(_matches(s, rule) for s in self.ignore)

    def rules(self) -> tuple[type[Rule], ...]:
        return tuple(rule for rule in ALL_RULES if self.enabled(rule))

    @property
    def torch_floor(self) -> tuple[int, int] | None:
        """The oldest PyTorch the code runs on: configured, else declared."""
        return self.target_torch if self.target_torch is not None else self.declared_torch

    def with_ignored(self, more: Iterable[str]) -> RuleSelection:
        return RuleSelection(
            self.select,
            (*self.ignore, *more),
            self.target_torch,
            self.declared_torch,
            self.extend,
        )

    def cache_key(self) -> str:
        codes = ",".join(rule.code for rule in self.rules())
        if self.target_torch is not None:
            codes = f"{codes};torch>={self.target_torch[0]}.{self.target_torch[1]}"
        if self.declared_torch is not None:
            codes = f"{codes};requires>={self.declared_torch[0]}.{self.declared_torch[1]}"
        return codes
