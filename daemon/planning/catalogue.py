"""The method catalogue: every task method with what it reads and changes, whether it needs
approval, and its params as JSON Schema, built from the registry and the params models
(``device/actions/registry.py``), the one source of truth.

``phoned methods``, the MCP tools, the OpenAPI document and ``docs/methods.md`` all read
it, so a method added to the registry appears in each with nothing else to edit.
"""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING, Any

from phoned.daemon.lifecycle.approval_policy import asks_by_default
from phoned.device.actions import registry as methods_registry  # REGISTRY read at call time

if TYPE_CHECKING:
    from pydantic import BaseModel

CATALOGUE_VERSION = 1


def tool_name(method: str) -> str:
    """The MCP tool of a method: ``dnd.set`` -> ``dnd_set``."""
    return method.replace(".", "_")


def _registry() -> dict[str, Any]:

    return methods_registry.REGISTRY


def params_schema(method: str) -> dict[str, Any]:
    """The JSON Schema of ``method``'s params model (the one ingress validates with)."""
    declared = _registry()[method]
    schema: dict[str, Any] = declared.params.model_json_schema()
    schema["title"] = f"{method} params"
    model_doc = schema.pop("description", None)
    if model_doc and model_doc != "Methods that take no parameters.":
        schema["description"] = model_doc
    schema.setdefault("properties", {})
    return schema


def example_params(method: str) -> dict[str, Any]:
    """Params built from the first example of every field that has one (valid by test)."""
    return model_example(_registry()[method].params)


def model_example(model: type[BaseModel]) -> dict[str, Any]:
    """The first example of every field of ``model`` that has one."""
    example: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if field.examples:
            example[name] = field.examples[0]
    return example


def read_only(method: str) -> bool:
    """True for a method that changes nothing (it has no effect to reconcile)."""
    return _registry()[method].reconcile is None


def entry(method: str) -> dict[str, Any]:
    """One method's catalogue entry."""

    declared = _registry()[method]
    return {
        "method": method,
        "tool": tool_name(method),
        "summary": declared.summary,
        "reads": declared.reads,
        "changes": declared.changes or None,
        "read_only": read_only(method),
        # sms.send always; the UI tier's changing steps unless the owner allows the app
        "needs_approval": asks_by_default(declared),
        "idempotent": declared.idempotent,
        "depends_on_screen": declared.screen,
        "sensitive_params": list(declared.sensitive),
        "params": params_schema(method),
        "example": {"method": method, "params": example_params(method)},
    }


def catalogue() -> dict[str, Any]:
    """Every method, in registry order."""
    return {
        "catalogue_version": CATALOGUE_VERSION,
        "methods": [entry(name) for name in _registry()],
    }


def _type_text(prop: dict[str, Any]) -> str:
    """A property's type in words: ``integer 0..100``, ``one of a, b``, ``text /re/``."""
    options = prop.get("anyOf") or [prop]
    parts = []
    for option in options:
        kind = option.get("type")
        if kind == "null":
            continue
        if "enum" in option:
            parts.append("one of " + ", ".join(str(v) for v in option["enum"]))
        elif kind == "integer":
            low, high = option.get("minimum"), option.get("maximum")
            span = f" {low if low is not None else ''}..{high if high is not None else ''}"
            parts.append("integer" + (span if low is not None or high is not None else ""))
        elif kind == "string":
            limits = [f"{k.removesuffix('Length')} {option[k]}" for k in ("minLength", "maxLength")
                      if k in option]  # fmt: skip
            pattern = f" matching `{option['pattern']}`" if "pattern" in option else ""
            parts.append("text" + (f" ({', '.join(limits)})" if limits else "") + pattern)
        else:
            parts.append(str(kind))
    return " or ".join(parts)


def param_rows(method: str) -> list[tuple[str, str, bool, str]]:
    """(name, type in words, required, description) of every param."""
    schema = params_schema(method)
    required = set(schema.get("required", []))
    return [
        (name, _type_text(prop), name in required, str(prop.get("description", "")))
        for name, prop in schema["properties"].items()
    ]


def text() -> str:
    """The catalogue for people (``phoned methods``)."""
    lines: list[str] = []
    for item in catalogue()["methods"]:
        flags = ["read-only" if item["read_only"] else "changes the phone"]
        if item["needs_approval"]:
            flags.append("needs approval")
        if not item["idempotent"]:
            flags.append("never repeated")
        lines.append(f"{item['method']}  ({', '.join(flags)})")
        lines.append(f"  {item['summary']}")
        lines.append(f"  reads:   {item['reads']}")
        if item["changes"]:
            lines.append(f"  changes: {item['changes']}")
        rows = param_rows(item["method"])
        if not rows:
            lines.append("  params:  none")
        for name, kind, required, description in rows:
            need = "required" if required else "optional"
            lines.append(f"  - {name} ({kind}; {need}): {description}")
        example = json.dumps(item["example"]["params"], ensure_ascii=False)
        lines.append(f"  example: {example}")
        if item["example"]["params"]:
            pairs = " ".join(
                f"--param {k}={_cli_value(v)}" for k, v in item["example"]["params"].items()
            )
            lines.append(
                f"           phoned submit --method {item['method']} {pairs} --conversation C"
            )
        lines.append("")
    return "\n".join(lines)


def _cli_value(value: Any) -> str:

    shown = value if isinstance(value, str) else json.dumps(value)
    return shlex.quote(shown)


def markdown() -> str:
    """``docs/methods.md`` (written by ``phoned methods --write``; ``--markdown`` prints it)."""
    out = [
        "# Task methods",
        "",
        "Generated from the method registry and its params models by `phoned methods --write`:",
        "do not edit (a test fails when it is stale). The same schemas are the MCP tools' input",
        "schemas (`phoned mcp`), `phoned methods --json`, and `components.schemas` in",
        "`docs/openapi.json`. Examples: `examples/`.",
        "",
        "| method | MCP tool | reads | changes | approval |",
        "|---|---|---|---|---|",
    ]
    items = catalogue()["methods"]
    for item in items:
        approval = "yes" if item["needs_approval"] else "no"
        out.append(
            f"| `{item['method']}` | `{item['tool']}` | {item['reads']} | "
            f"{item['changes'] or '(nothing)'} | {approval} |"
        )
    for item in items:
        out += ["", f"## `{item['method']}`", "", item["summary"], ""]
        if not item["idempotent"]:
            out += ["Never repeated: once the effect may have happened it is only verified.", ""]
        rows = param_rows(item["method"])
        if rows:
            out += ["| param | type | required | meaning |", "|---|---|---|---|"]
            for name, kind, required, description in rows:
                kind_md = kind.replace("|", "\\|")
                out.append(
                    f"| `{name}` | {kind_md} | {'yes' if required else 'no'} | {description} |"
                )
            out.append("")
        else:
            out += ["No params.", ""]
        out += [
            "```json",
            json.dumps(item["example"], ensure_ascii=False, indent=2),
            "```",
            "",
            "<details><summary>JSON Schema</summary>",
            "",
            "```json",
            json.dumps(item["params"], ensure_ascii=False, indent=2, sort_keys=True),
            "```",
            "",
            "</details>",
        ]
    return "\n".join(out) + "\n"


def openapi_schemas() -> dict[str, dict[str, Any]]:
    """Every method's params schema as an OpenAPI component, ``params.<method>``.

    ``POST /v1/tasks`` takes ``{"method": M, "params": ...}`` whose params are the schema
    named ``params.M``.
    """
    out: dict[str, dict[str, Any]] = {}
    for method in _registry():
        schema = params_schema(method)
        item = entry(method)
        schema["description"] = " ".join(
            part for part in (item["summary"], schema.get("description", ""),
                              "Needs approval." if item["needs_approval"] else "") if part
        )  # fmt: skip
        out[f"params.{method}"] = schema
    return out
