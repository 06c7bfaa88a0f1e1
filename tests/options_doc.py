"""The option tables and command synopses of the docs, written from their one declaration (issue 47), as
tests/rules_doc.py writes docs/rules.md from the registry:

- docs/config.md's functionConfig table: the options, their choices and defaults from ``FunctionConfig``
  (``options/config.py``), what each choice does from ``VALUE_MEANINGS``, what the other options are from
  ``_DESCRIPTIONS`` (which ``--help`` and the JSON Schema show too), an example from ``cli/usage.py``;
- docs/hardening.md's trust model: who may set each option (``options/config_layers.py``: ``PLATFORM_OPTIONS``,
  ``POLICY_OPTIONS``, ``TENANT_OPTIONS``) and what a tenant's other value does (``_PLATFORM_WHY``,
  ``TENANT_VALUE``);
- the synopses of ``render`` (docs/integrations.md), ``explain`` (docs/explain-and-policy.md) and ``check``
  (docs/check.md): each command's argparse parser, as ``--help``'s first lines (``cli/usage.py``).

Each stands between two markers in its page; ``python -m tests.options_doc`` (or ``make goldens``)
rewrites it, and tests/test_options_doc.py fails while a page is stale.
"""

from __future__ import annotations

import importlib
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic.fields import FieldInfo
from trainjob_resources.cli import usage
from trainjob_resources.cli.usage import OPTION_EXAMPLES
from trainjob_resources.options import config, config_layers
from trainjob_resources.options.config import FunctionConfig
from trainjob_resources.trainer.releases import TrainerVersion

ROOT = Path(__file__).resolve().parents[1]
CONFIG_DOC = ROOT / "docs" / "config.md"
TRUST_DOC = ROOT / "docs" / "hardening.md"
RUN = "python -m tests.options_doc"
METADATA = "derivedRuntimeMetadata"

# Where the docs say more of an option (docs-only: a link is no part of the option's description).
MORE = {
    "derivedRuntimeKind": "[Derived runtimes](lifecycle.md#derived-runtimes-and-re-rendering)",
    "trainerVersion": "[Trainer releases](merge.md#trainer-releases)",
    "trainerResources": "[Merge behavior](merge.md#merge-behavior)",
    "maxPerRole": "[the roles](explain-and-policy.md#platform-policy-in-the-functionconfig)",
}


def options() -> dict[str, FieldInfo]:
    """FunctionConfig's fields by option name, in declaration order."""
    return {field.alias or name: field for name, field in FunctionConfig.model_fields.items()}


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def choices(field: FieldInfo) -> list[str]:
    """An option's values, its default first; none for an option that takes names or quantities. The
    Trainer releases newest first, then the minor versions that name them too."""
    values = [True, False] if field.annotation is bool else list(typing.get_args(field.annotation))
    if not values or not all(isinstance(v, str | bool) for v in values):
        return []
    if field.annotation is TrainerVersion:
        values = sorted(values, key=lambda v: (v.count("."), [int(n) for n in v[1:].split(".")]), reverse=True)
    default = _shown(field.default)
    return [default, *(_shown(v) for v in values if _shown(v) != default)]


def _reserved() -> str:
    """derivedRuntimeMetadata's keys the function keeps for itself or leaves to the orchestrators."""
    return "; refused (one ending in `/`: every key under it): " + ", ".join(
        f"`{k}`" for k in config._RESERVED_METADATA
    )


def _flow(value: Any) -> str:
    return yaml.safe_dump(value, default_flow_style=True, width=1 << 20).strip()


def _option_rows(option: str, field: FieldInfo) -> list[tuple[str, str]]:
    """An option's (values, meaning) rows: one per choice that has a meaning of its own, else one."""
    values = choices(field)
    meanings = config.VALUE_MEANINGS.get(option)
    if meanings is not None:
        rows = [(f"`{v}`" + (" (default)" if i == 0 else ""), meanings[v]) for i, v in enumerate(values)]
    elif values:
        rows = [(", ".join(f"`{v}`" + (" (default)" if i == 0 else "") for i, v in enumerate(values)), "")]
    elif field.default:
        rows = [("default " + ", ".join(f"`{v}`" for v in field.default), "")]
    else:
        rows = [(f"e.g. `{_flow(OPTION_EXAMPLES[option])}`", "")]
    if meanings is None:
        rows[0] = (
            rows[0][0],
            config._DESCRIPTIONS[option] + (_reserved() if option == "derivedRuntimeMetadata" else ""),
        )
    if option in MORE:
        rows[-1] = (rows[-1][0], f"{rows[-1][1]} ({MORE[option]})")
    return rows


def config_table() -> str:
    lines = ["| option | values | meaning |", "| --- | --- | --- |"]
    for option, field in options().items():
        for index, (values, meaning) in enumerate(_option_rows(option, field)):
            lines.append(f"| {f'`{option}`' if index == 0 else ''} | {values} | {meaning} |".replace("|  |", "| |"))
    return "\n".join(lines) + "\n"


def owner(option: str) -> str:
    if option in config_layers.PLATFORM_OPTIONS:
        return "platform only"
    return "tenant: only stricter" if option in config_layers.POLICY_OPTIONS else "tenant: freely"


def trust_table() -> str:
    lines = ["| option | who may set it | a tenant's other value |", "| --- | --- | --- |"]
    for option in options():
        why = config_layers._PLATFORM_WHY.get(option)
        other = f"an error: {why}" if why is not None else config_layers.TENANT_VALUE[option]
        lines.append(f"| `{option}` | {owner(option)} | {other} |")
    return "\n".join(lines) + "\n"


def synopsis(command: str) -> Callable[[], str]:
    """The synopsis of ``command`` from its parser, in a shell block."""

    def written() -> str:
        module = importlib.import_module(f"trainjob_resources.cli.{command}")
        lines = usage.synopsis(f"trainjob-resources {command}", module._parser())
        return "```sh\n" + "\n".join(lines) + "\n```\n"

    return written


TABLES: dict[str, tuple[Path, Callable[[], str]]] = {
    "options table": (CONFIG_DOC, config_table),
    "trust model table": (TRUST_DOC, trust_table),
    "render synopsis": (ROOT / "docs" / "integrations.md", synopsis("render")),
    "explain synopsis": (ROOT / "docs" / "explain-and-policy.md", synopsis("explain")),
    "check synopsis": (ROOT / "docs" / "check.md", synopsis("check")),
}


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}: written by `{RUN}` from its declaration -->\n", f"<!-- end of {name} -->\n"


def rewritten(name: str) -> tuple[Path, str]:
    """The page that holds ``name``, and its text with ``name`` as its declaration makes it."""
    path, table = TABLES[name]
    text = path.read_text()
    begin, end = markers(name)
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return path, head + begin + table() + end + tail


def main() -> int:
    for name in TABLES:
        path, text = rewritten(name)
        if path.read_text() != text:
            path.write_text(text)
            print(f"rewrote the {name} in {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
