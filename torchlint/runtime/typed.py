"""JSON for the typed result model: dataclasses to JSON, JSON back to dataclasses, and the JSON
Schema of a dataclass, all read from the same type hints (envelope_model.py, envelope_parts.py
and payloads.py declare the model; schema.json is generated from it by
`python -m torchlint.runtime.schema`).

Supported hints: the dataclasses of the model, `str`, `int`, `float`, `bool`, `None`,
`Literal[...]`, `list[X]`, `dict[str, X]`, `X | Y` (and `Optional`), `Any`. Field metadata:
`json` (the key, when it differs from the field's name), `doc` (its description), `minimum`,
`optional` (the key may be absent: not required, and left out when the value is None).
Floats are written finite or null (JSON has no NaN).
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

T = TypeVar("T")


def key_of(field: dataclasses.Field[Any]) -> str:
    return str(field.metadata.get("json", field.name))


def _hints(cls: type) -> dict[str, Any]:
    cached = _HINTS.get(cls)
    if cached is None:
        cached = _HINTS[cls] = get_type_hints(cls)
    return cached


_HINTS: dict[type, dict[str, Any]] = {}


def to_json(value: Any) -> Any:
    """A dataclass (or a list, dict or scalar holding them) as JSON-ready data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            key_of(f): to_json(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.init and not (f.metadata.get("optional") and getattr(value, f.name) is None)
        }
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    return value


class ModelError(ValueError):
    """Data that does not fit the model (the path says where)."""


def from_json(cls: type[T], data: Any, path: str = "$") -> T:
    """`data` read as `cls` (a dataclass of the model); ModelError when it does not fit."""
    return typing.cast(T, _read(cls, data, path))


def _read(hint: Any, data: Any, path: str) -> Any:
    origin = get_origin(hint)
    if hint is Any:
        return data
    if hint is type(None) or hint is None:
        if data is not None:
            raise ModelError(f"{path}: expected null")
        return None
    if origin in (Union, types.UnionType):
        options = get_args(hint)
        if data is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _read(option, data, path)
            except ModelError as exc:
                errors.append(str(exc))
        raise ModelError(errors[0] if len(errors) == 1 else f"{path}: fits none of {errors}")
    if origin is Literal:
        if data not in get_args(hint):
            raise ModelError(f"{path}: {data!r} is not one of {get_args(hint)}")
        return data
    if origin is list:
        if not isinstance(data, list):
            raise ModelError(f"{path}: expected a list")
        (item,) = get_args(hint) or (Any,)
        return [_read(item, v, f"{path}[{i}]") for i, v in enumerate(data)]
    if origin is dict:
        if not isinstance(data, dict):
            raise ModelError(f"{path}: expected an object")
        _, value = get_args(hint) or (str, Any)
        return {str(k): _read(value, v, f"{path}.{k}") for k, v in data.items()}
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        if not isinstance(data, dict):
            raise ModelError(f"{path}: expected an object for {hint.__name__}")
        hints = _hints(hint)
        known = {key_of(f): f for f in dataclasses.fields(hint) if f.init}
        extra = set(data) - set(known)
        if extra:
            raise ModelError(f"{path}: unexpected {sorted(extra)} in {hint.__name__}")
        values = {}
        for key, field in known.items():
            if key in data:
                values[field.name] = _read(hints[field.name], data[key], f"{path}.{key}")
            elif (
                field.default is dataclasses.MISSING
                and field.default_factory is dataclasses.MISSING
            ):
                raise ModelError(f"{path}: {hint.__name__} needs {key!r}")
        return hint(**values)
    if hint is float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise ModelError(f"{path}: expected a number")
        return float(data)
    if hint is int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise ModelError(f"{path}: expected an integer")
        return data
    if hint is bool:
        if not isinstance(data, bool):
            raise ModelError(f"{path}: expected a boolean")
        return data
    if hint is str:
        if not isinstance(data, str):
            raise ModelError(f"{path}: expected a string")
        return data
    raise ModelError(f"{path}: no reader for {hint!r}")


# ----------------------------------------------------------------------------------------------
# JSON Schema


class SchemaBuilder:
    """The JSON Schema (draft 2020-12) of model classes; each dataclass becomes one `$defs`
    entry, referenced by name."""

    def __init__(self) -> None:
        self.defs: dict[str, Any] = {}

    def of(self, hint: Any) -> dict[str, Any]:
        origin = get_origin(hint)
        if hint is Any:
            return {}
        if hint is type(None) or hint is None:
            return {"type": "null"}
        if origin in (Union, types.UnionType):
            options = [self.of(option) for option in get_args(hint)]
            simple = [o for o in options if set(o) == {"type"} and isinstance(o["type"], str)]
            if len(simple) == len(options):
                return {"type": [o["type"] for o in simple]}
            return {"anyOf": options}
        if origin is Literal:
            return {"enum": list(get_args(hint))}
        if origin is list:
            (item,) = get_args(hint) or (Any,)
            return {"type": "array", "items": self.of(item)}
        if origin is dict:
            _, value = get_args(hint) or (str, Any)
            return {"type": "object", "additionalProperties": self.of(value)}
        if dataclasses.is_dataclass(hint) and isinstance(hint, type):
            name = hint.__name__
            if name not in self.defs:
                self.defs[name] = {}  # a placeholder: recursion stops here
                self.defs[name] = self._object(hint)
            return {"$ref": f"#/$defs/{name}"}
        simple_types = {float: "number", int: "integer", bool: "boolean", str: "string"}
        if hint in simple_types:
            return {"type": simple_types[hint]}
        raise TypeError(f"no schema for {hint!r}")

    def _object(self, cls: type) -> dict[str, Any]:
        hints = _hints(cls)
        properties: dict[str, Any] = {}
        for field in dataclasses.fields(cls):
            if not field.init:
                continue
            schema = self.of(hints[field.name])
            if "minimum" in field.metadata:
                schema = {**schema, "minimum": field.metadata["minimum"]}
            if "doc" in field.metadata:
                schema = {"description": field.metadata["doc"], **schema}
            properties[key_of(field)] = schema
        optional = {key_of(f) for f in dataclasses.fields(cls) if f.metadata.get("optional")}
        result: dict[str, Any] = {
            "type": "object",
            "additionalProperties": False,
            "required": [key for key in properties if key not in optional],
            "properties": properties,
        }
        doc = (cls.__doc__ or "").strip()
        if doc and not doc.startswith(cls.__name__ + "("):
            result = {"description": " ".join(doc.split()), **result}
        return result
