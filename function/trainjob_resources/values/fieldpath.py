"""Field paths as results carry them: ``spec.runtimePatches[0].trainingRuntimeSpec``.

Map keys that are plain identifiers are joined with a dot (``resources.limits.memory``); keys
that would be ambiguous there (``nvidia.com/gpu``) are written in brackets, as Kubernetes'
``field.Path.Key`` does: ``resources.limits[nvidia.com/gpu]``.
"""

from __future__ import annotations

import re

_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def child(path: str, key: str) -> str:
    """The path of map key ``key`` below ``path``."""
    if not _PLAIN_KEY.match(key):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def index(path: str, i: int) -> str:
    """The path of list element ``i`` below ``path``."""
    return f"{path}[{i}]"


_SEGMENT = re.compile(r"\[([^\]]*)\]|([^.\[\]]+)")


def segments(path: str) -> list[str | int]:
    """``spec.runtimePatches[0].limits[nvidia.com/gpu]`` -> ``spec``, ``runtimePatches``, 0, ``limits``,
    ``nvidia.com/gpu``: a bracketed number is a list index, any other bracketed text a key."""
    out: list[str | int] = []
    for match in _SEGMENT.finditer(path):
        bracketed, plain = match.groups()
        out.append(int(bracketed) if bracketed is not None and bracketed.isdigit() else bracketed or plain or "")
    return out
