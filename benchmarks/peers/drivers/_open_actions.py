"""Action types for recorded tool specs that take every recorded argument as given.

The OpenHands driver gives each session tool an OpenHands ``Action`` type built from its spec.
OpenHands' ``Schema`` forbids extra fields, and the shared real transcripts' tools carry open
specs (``{"type": "object", "properties": {}}``) or arguments their spec does not declare (the
Gemini CLI session's ``file_path``), so an action built from the declared properties alone
rejects those calls and the model is shown a validation error instead of the recorded output.

`open_action_type` builds a subclass of any pydantic base (the driver passes OpenHands'
``Action``) that allows extra fields and requires none, while its JSON schema still declares the
spec's properties, types, descriptions and ``required`` list: what the schema generator reads
back from it is the recorded spec's property set. `recorded_arguments` reads the arguments back
out of an action: the declared fields that were given, and every extra one.

Pydantic only (the OpenHands venv and this repository's both have it); the SDK is not imported,
so the unit tests build the same types on a stand-in base.

Invariants: the declared fields keep the spec's property order; an action built from recorded
arguments gives the same arguments back (declared ones coerced to their declared type).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["JSON_TYPES", "action_fields", "open_action_type", "recorded_arguments"]

JSON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list[Any],
    "object": dict[str, Any],
}
"""A declared property's JSON type as a Python type; anything else (or none) is ``str``."""

M = TypeVar("M", bound=BaseModel)


def action_fields(parameters: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Return the pydantic fields for a spec's ``parameters``: each property, optional.

    Every field defaults to None (a recorded call may leave out a property its spec requires);
    the spec's ``required`` list is put back into the type's JSON schema by `open_action_type`.
    """
    props: dict[str, Any] = parameters.get("properties") or {}
    fields: dict[str, tuple[Any, Any]] = {}
    for prop, schema in props.items():
        schema = schema if isinstance(schema, dict) else {}
        typ = JSON_TYPES.get(str(schema.get("type", "string")), str)
        description = str(schema.get("description", ""))
        fields[prop] = (typ | None, Field(default=None, description=description))
    return fields


def open_action_type(name: str, parameters: dict[str, Any], base: type[M]) -> type[M]:
    """Return a subclass of `base` named `name` that accepts any arguments of this spec.

    Extra fields are allowed (and kept), no field is required, and the JSON schema declares the
    spec's ``required`` properties in property order (where pydantic puts required fields, so
    a declared spec reads back as it did when its fields were required). The rest of `base`'s
    configuration (e.g. OpenHands' ``frozen=True``) is kept.
    """
    props = parameters.get("properties") or {}
    wanted = set(parameters.get("required") or ())
    required = [p for p in props if p in wanted]
    config = ConfigDict(extra="allow")
    if required:
        config["json_schema_extra"] = {"required": required}
    fields = action_fields(parameters)
    namespace: dict[str, Any] = {
        "__annotations__": {prop: typ for prop, (typ, _) in fields.items()},
        **{prop: info for prop, (_, info) in fields.items()},
        "model_config": config,
        "__module__": __name__,
    }
    return type(name, (base,), namespace)


def recorded_arguments(action: BaseModel, parameters: dict[str, Any]) -> dict[str, Any]:
    """Return the arguments an action was built from: the declared ones given, and the extras.

    Declared properties left at None are left out; every extra field is kept as given.
    """
    declared = set(parameters.get("properties") or {})
    out = {k: v for k, v in action.model_dump(include=declared).items() if v is not None}
    out.update(action.model_extra or {})
    return out
