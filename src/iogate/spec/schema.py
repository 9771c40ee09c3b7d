"""The JSON Schema of a suite file, for editors and CI linters (``iogate schema``).

Generated from the models, so it cannot drift from what :func:`iogate.spec.load_suite`
accepts, then finished here in three ways the models cannot say themselves:

* every value that may be a scalar also takes a string holding a variable reference
  (``numjobs: ${ncpus}``, ``rw: ${MODE:-randread}``), since variables are expanded in every
  string value before validation (:mod:`iogate.spec.variables`);
* the keys of ``expect`` and ``per_host`` (every metric of :mod:`iogate.metrics`, by name
  and by pattern, each described) are written once, under ``$defs/Expectations``;
* each key's default is the one a workload gets when the key is missing everywhere, written
  as a suite would write it; pydantic's generated titles are dropped;
* a workload needs a size or a filename (a temporary file has no size of its own), given
  itself, by its sweep or by the defaults.

The schema is never stricter than ``iogate validate`` (tests/unit/test_schema.py holds it
to that). It is looser where JSON Schema cannot follow: rules between fields (psync needs
iodepth 1, a bssplit's shares add up to 100...), expectation syntax, and what a variable
expands to are checked by iogate itself.
"""

from __future__ import annotations

from typing import Any

from iogate.spec.models import STEP_INHERITS, SuiteFile, written_defaults

DIALECT = "https://json-schema.org/draft/2020-12/schema"

# A string with a variable reference: $name or ${...}, not escaped as $$.
REFERENCE = {"type": "string", "pattern": r"(^|[^$])(\$\$)*\$(\{|[A-Za-z_])",
             "description": "a value with a variable: ${VAR}, ${VAR:-default}, $name or a "
                            "built-in ($ncpus, $mb_memory, $pagesize), checked once expanded"}
AS_WRITTEN = ("Defaults", "PreconditionEntry", "WorkloadEntry")  # keys as a suite writes them
_SCALARS = {"string", "integer", "number", "boolean"}
_STRING_LIMITS = ("pattern", "enum", "const", "maxLength", "minLength", "format")


def json_schema() -> dict[str, Any]:
    schema = SuiteFile.model_json_schema(mode="validation")
    _share_expectation_keys(schema)
    defaults = written_defaults()
    for name, model in [("", schema), *schema.get("$defs", {}).items()]:
        # A precondition step's inherited keys default to its workload's values.
        inherits = STEP_INHERITS if name == "PreconditionEntry" else ()
        for key, prop in model.get("properties", {}).items():
            prop.pop("title", None)
            if prop.get("default", 0) is None:
                del prop["default"]
            if name in AS_WRITTEN and key in defaults and key not in inherits:
                prop["default"] = defaults[key]
            model["properties"][key] = _with_references(prop)
    schema.update(_REGION_RULE)
    return {"$schema": DIALECT, "title": "iogate suite", **{k: v for k, v in schema.items()
                                                            if k != "title"}}


# Without a size or filename in the defaults, every workload gives one, or sweeps (a point
# may set either).
_REGION = [{"required": ["size"]}, {"required": ["filename"]}]
_REGION_RULE = {
    "if": {"not": {"required": ["defaults"], "properties": {"defaults": {"anyOf": _REGION}}}},
    "then": {"properties": {"workloads": {"items": {
        "anyOf": [*_REGION, {"required": ["sweep"]}],
        "description": "a workload needs size, or a filename to use whole"}}}},
}


def _share_expectation_keys(schema: dict[str, Any]) -> None:
    """The keys of ``expect`` and ``per_host`` (every metric, from iogate.metrics) are
    written once, under ``$defs/Expectations``, and referred to where they are used."""
    shared: dict[str, Any] | None = None
    for model in schema.get("$defs", {}).values():
        for key in ("expect", "per_host"):
            field = model.get("properties", {}).get(key)
            if not field or "patternProperties" not in field:
                continue
            keys = {k: field.pop(k) for k in ("properties", "patternProperties",
                                              "additionalProperties")}
            shared = shared or keys
            field["$ref"] = "#/$defs/Expectations"
    if shared is not None:
        schema["$defs"]["Expectations"] = {"type": "object", **shared}


def _types(node: dict[str, Any]) -> set[str]:
    kind = node.get("type")
    return set(kind) if isinstance(kind, list) else {kind} if isinstance(kind, str) else set()


def _takes_scalars(node: dict[str, Any]) -> bool:
    """Whether ``node`` (not following $ref) admits some string, number or boolean."""
    if _types(node) & _SCALARS or "enum" in node or "const" in node:
        return True
    return any(_takes_scalars(m) for k in ("anyOf", "oneOf") for m in node.get(k, ()))


def _takes_any_string(node: dict[str, Any]) -> bool:
    if "string" in _types(node) and not any(k in node for k in _STRING_LIMITS):
        return True
    return any(_takes_any_string(m) for m in node.get("anyOf", ()))


def _with_references(node: dict[str, Any], covered: bool = False) -> dict[str, Any]:
    """``node`` where every place a scalar may be written also takes :data:`REFERENCE`.
    ``covered``: an enclosing alternative already takes it (members of an anyOf)."""
    node = dict(node)
    for key in ("anyOf", "oneOf"):
        if key in node:
            node[key] = [_with_references(m, True) for m in node[key]]
    if isinstance(node.get("items"), dict):
        node["items"] = _with_references(node["items"])
    if isinstance(node.get("properties"), dict):
        node["properties"] = {k: _with_references(v) for k, v in node["properties"].items()}
    if isinstance(node.get("additionalProperties"), dict):
        node["additionalProperties"] = _with_references(node["additionalProperties"])
    if covered or not _takes_scalars(node) or _takes_any_string(node):
        return node
    if "anyOf" in node:
        node["anyOf"] = [*node["anyOf"], REFERENCE]
        return node
    # Keep what describes the key beside the alternatives; the rest is one of them.
    about: dict[str, Any] = {k: node.pop(k) for k in ("description", "default", "examples")
                             if k in node}
    return {"anyOf": [node, REFERENCE], **about}
