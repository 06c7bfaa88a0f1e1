"""Every output format of every command, each declared once with its renderer: the parsers take
their ``--format`` and ``--output`` choices from here, and tests/test_formats.py fails when a choice
has no renderer or a renderer no choice.

A renderer is named as ``module:function`` under the package and imported only when its command
runs (start-up time: ``render`` imports no report module of ``explain`` or ``check``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Final

# command -> format -> renderer. ``explain --against`` reads the same ``--format`` as ``explain``.
RENDERERS: Final[dict[str, dict[str, str]]] = {
    "render": {"yaml": "cli.render:yaml_stream", "json": "cli.render:json_list"},
    "explain": {
        "table": "report.explain_report:render_table",
        "json": "report.explain_report:render_json",
        "markdown": "report.explain_report:render_markdown",
    },
    "explain --against": {
        "table": "report.change_report:render_table",
        "json": "report.change_report:render_json",
        "markdown": "report.change_report:render_markdown",
    },
    "check": {
        "table": "live.report:render_table",
        "json": "live.report:render_json",
        "markdown": "live.report:render_markdown",
    },
}


def choices(command: str) -> tuple[str, ...]:
    """The formats ``command`` offers, in the order its help lists them."""
    return tuple(RENDERERS[command])


def renderer(command: str, name: str) -> Callable[..., Any]:
    """The function that writes ``command``'s output in format ``name``."""
    module, function = RENDERERS[command][name].split(":")
    found: Callable[..., Any] = getattr(importlib.import_module(f"{__package__.rpartition('.')[0]}.{module}"), function)
    return found
