"""The CEL rules of Trainer's CRDs (``x-kubernetes-validations``), evaluated by cel-expr-python, the
CEL project's Python binding of cel-cpp (CONTRIBUTING.md says why this library).

The API server evaluates each rule with cel-go and Kubernetes' libraries
(k8s.io/apiextensions-apiserver ``pkg/apiserver/schema/cel``, k8s.io/apiserver ``pkg/cel/library``).
The rules of the shipped CRDs use only CEL's standard definitions (``has``, ``size``, ``matches``,
``in``, the ``all``/``exists``/``filter`` macros), which both implementations share, with RE2 as the
regular-expression engine of ``matches`` in both. The library is imported, and each rule compiled,
the first time a rule is evaluated in the process.
"""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def _env() -> Any:
    from cel_expr_python import cel  # type: ignore[import-untyped]  # ships no py.typed

    return cel.NewEnv(variables={"self": cel.Type.DYN})


@cache
def _program(rule: str) -> Any:
    return _env().compile(rule)


def failure(rule: str, value: Any) -> str | None:
    """None when ``rule`` holds for ``self`` = ``value`` (plain data, as the API server has it after
    pruning and defaulting); else why not: "false", or the evaluation error."""
    try:
        result = _program(rule).eval(data={"self": value})
    except RuntimeError as err:  # a rule the library cannot compile, or data it cannot convert
        return f"not evaluated: {err}"
    if result.type().name() == "ERROR":
        return f"evaluation error: {result.value()}"
    return None if result.value() is True else "false"
