"""pi-ai's ``convertTools`` with its constrained-sampling rules (``constrained-sampling.js``).

A tool whose ``constrainedSampling`` asks for a JSON schema is sent with ``strict: true``
and pi's strict rewrite of its schema when the target supports strict mode and the schema
fits the strict subset; a grammar tool becomes an OpenAI ``custom`` tool when the target
supports grammar tools.
"""

from __future__ import annotations

import copy
from typing import Any

from piconv import Report
from piconv.ir import ToolSpec

from . import losses
from .jsutil import js_stringify, js_trim

UNSUPPORTED_STRICT_SCHEMA_KEYS = (
    "$ref",
    "$defs",
    "definitions",
    "allOf",
    "oneOf",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "prefixItems",
    "not",
    "if",
    "then",
    "else",
)


class StrictUnsupported(Exception):
    """The schema is outside the strict subset (pi's UnsupportedStrictJsonSchemaError)."""


class GrammarError(Exception):
    """A grammar tool pi-ai would refuse to send."""


def _constrained(tool: ToolSpec) -> dict[str, Any] | None:
    config = tool.extra.get("constrainedSampling") if tool.extra else None
    return config if isinstance(config, dict) else None


def _is_obj(value: Any) -> bool:
    return type(value) is dict


def _is_structured(schema: Any) -> bool:
    if not _is_obj(schema):
        return False
    t = schema.get("type")
    types = [t] if type(t) is str else t if type(t) is list else []
    return "object" in types or "array" in types or "properties" in schema or "items" in schema


def _allows_null(schema: Any) -> bool:
    if not _is_obj(schema):
        return False
    t = schema.get("type")
    if t == "null" or (type(t) is list and "null" in t):
        return True
    if ("const" in schema and schema["const"] is None) or (
        type(schema.get("enum")) is list and None in schema["enum"]
    ):
        return True
    any_of = schema.get("anyOf")
    return type(any_of) is list and any(_allows_null(v) for v in any_of)


def _strict_node(schema: Any) -> None:
    if not _is_obj(schema):
        raise StrictUnsupported("boolean schemas are unsupported")
    for key in UNSUPPORTED_STRICT_SCHEMA_KEYS:
        if key in schema:
            raise StrictUnsupported(f"{key} schemas are unsupported")
    if "type" not in schema and "anyOf" not in schema and "enum" not in schema:
        raise StrictUnsupported("schemas without a type are unsupported")
    if "anyOf" in schema:
        any_of = schema["anyOf"]
        if type(any_of) is not list or not any_of:
            raise StrictUnsupported("anyOf must contain at least one schema")
        for variant in any_of:
            if _is_structured(variant):
                raise StrictUnsupported("object and array unions are unsupported")
            _strict_node(variant)
    if "items" in schema:
        if type(schema["items"]) is list:
            raise StrictUnsupported("tuple schemas are unsupported")
        _strict_node(schema["items"])
    is_object = schema.get("type") == "object"
    if "properties" in schema and not is_object:
        raise StrictUnsupported("properties require type object")
    if not is_object:
        return
    if "additionalProperties" in schema and schema["additionalProperties"] is not False:
        raise StrictUnsupported("schema-valued or true additionalProperties is unsupported")
    if "properties" in schema and not _is_obj(schema["properties"]):
        raise StrictUnsupported("object properties must be a schema map")
    required_raw = schema.get("required")
    if "required" in schema and (
        type(required_raw) is not list or any(type(k) is not str for k in required_raw)
    ):
        raise StrictUnsupported("object required must be a string array")
    properties = schema.get("properties") or {}
    names = list(properties)
    required = set(required_raw) if type(required_raw) is list else set()
    if any(k not in properties for k in required):
        raise StrictUnsupported("required contains an unknown property")
    for key, prop in list(properties.items()):
        _strict_node(prop)
        if key not in required and not _allows_null(prop):
            properties[key] = {"anyOf": [prop, {"type": "null"}]}
    schema["required"] = names
    schema["additionalProperties"] = False


def make_strict_json_schema(schema: Any) -> dict[str, Any]:
    cloned = copy.deepcopy(schema)
    if not _is_obj(cloned):
        raise StrictUnsupported("root schema must have type object")
    _strict_node(cloned)
    if cloned.get("type") != "object":
        raise StrictUnsupported("root schema must have type object")
    return cloned


def resolve_strict(tool: ToolSpec, supports_strict: bool, report: Report) -> bool | None:
    """pi's ``resolveJsonSchemaStrictSampling``. Where pi throws ("require" that cannot be
    honoured) the tool goes out non-strict and the report says so."""
    config = _constrained(tool)
    if not config or config.get("type") != "json_schema":
        return None
    if supports_strict:
        try:
            make_strict_json_schema(tool.parameters)
            return True
        except StrictUnsupported as exc:
            if config.get("strict") == "require":
                report.add(losses.STRICT_UNAVAILABLE, None, f"{tool.name}: {exc}")
            return None
    if config.get("strict") == "require":
        report.add(losses.STRICT_UNAVAILABLE, None, f"{tool.name}: strict tools are unsupported")
    return None


def _grammar_input_property(tool: ToolSpec) -> str:
    schema = tool.parameters if _is_obj(tool.parameters) else {}
    if schema.get("type") != "object":
        raise GrammarError("grammar constrained sampling requires an object parameter schema")
    required = schema.get("required")
    if type(required) is not list or len(required) != 1 or type(required[0]) is not str:
        raise GrammarError("grammar constrained sampling requires exactly one required string property")
    prop = required[0]
    props = schema.get("properties") if _is_obj(schema.get("properties")) else {}
    if not props.get(prop):
        raise GrammarError(f"grammar constrained sampling requires a properties entry for {prop}")
    if not _is_obj(props[prop]) or props[prop].get("type") != "string":
        raise GrammarError(f"grammar constrained sampling property {prop} must have type string")
    return prop


def resolve_grammar(tool: ToolSpec, supports_grammar: bool) -> dict[str, str] | None:
    """pi's ``resolveGrammarConstrainedSampling`` (raises GrammarError where pi throws)."""
    config = _constrained(tool)
    if not config or config.get("type") != "grammar" or not supports_grammar:
        return None
    variants = config.get("variants") if _is_obj(config.get("variants")) else {}
    lark, regex = variants.get("openai_lark"), variants.get("openai_regex")
    has_lark = type(lark) is str and bool(js_trim(lark))
    has_regex = type(regex) is str and bool(js_trim(regex))
    if not has_lark and not has_regex:
        raise GrammarError(
            f'Tool "{tool.name}" cannot use grammar constrained sampling: no supported grammar variant was provided.'
        )
    return {
        "format": "lark" if has_lark else "regex",
        "definition": lark if has_lark else regex,  # type: ignore[dict-item]
        "inputProperty": _grammar_input_property(tool),
    }


def grammar_input_properties(tools: list[ToolSpec], supports_grammar: bool, report: Report) -> dict[Any, str]:
    """Tool name → the argument carrying a grammar tool's free-form input."""
    out: dict[Any, str] = {}
    for tool in tools:
        try:
            grammar = resolve_grammar(tool, supports_grammar)
        except GrammarError as exc:
            report.add(losses.STRICT_UNAVAILABLE, None, f"{tool.name}: {exc}")
            continue
        if grammar:
            out[tool.name] = grammar["inputProperty"]
    return out


def grammar_tool_input(name: Any, arguments: Any, prop: str) -> str:
    value = arguments.get(prop) if isinstance(arguments, dict) else None
    # pi throws here; a non-string input is sent as its JSON text instead
    return value if type(value) is str else js_stringify(value)


def convert_tools(tools: list[ToolSpec], compat: dict[str, Any], report: Report) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    supports_strict = compat.get("supportsStrictMode") is not False
    for tool in tools:
        if type(tool.name) is not str:
            report.add(losses.TOOL_UNNAMED, None, f"a tool declared with the name {tool.name!r}")
            continue
        try:
            grammar = resolve_grammar(tool, bool(compat.get("supportsOpenAIGrammarTools")))
        except GrammarError:
            grammar = None  # reported once by grammar_input_properties
        if grammar:
            custom: dict[str, Any] = {"name": tool.name}
            if tool.description is not None:
                custom["description"] = tool.description
            custom["format"] = {
                "type": "grammar",
                "grammar": {"syntax": grammar["format"], "definition": grammar["definition"]},
            }
            out.append({"type": "custom", "custom": custom})
            continue
        strict = resolve_strict(tool, supports_strict, report)
        function: dict[str, Any] = {"name": tool.name}
        if tool.description is not None:
            function["description"] = tool.description
        parameters = make_strict_json_schema(tool.parameters) if strict is True else tool.parameters
        if parameters is not None and type(parameters) is not dict:
            # a function's parameters are a JSON Schema object: another value would make the
            # request one no endpoint takes, so the function is declared without them
            report.add(
                losses.TOOL_PARAMETERS_DROPPED, None, f"tool {tool.name!r}: {type(parameters).__name__}"
            )
            parameters = None
        if parameters is not None:
            function["parameters"] = parameters
        if supports_strict:
            function["strict"] = bool(strict)
        out.append({"type": "function", "function": function})
    return out
