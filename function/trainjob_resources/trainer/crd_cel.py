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

import re
from functools import cache
from typing import Any


@cache
def _env() -> Any:
    from cel_expr_python import cel  # type: ignore[import-untyped]  # ships no py.typed

    return cel.NewEnv(variables={"self": cel.Type.DYN})


@cache
def _program(rule: str) -> Any:
    return _env().compile(rule)


# The verdicts on scalar values (a managedBy every TrainJob defaults alike), by rule, type and value.
_SCALAR_VERDICTS: dict[tuple[str, type, Any], str | None] = {}
_MOST_REMEMBERED = 4096


_SELF = re.compile(r"\bself\b(\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)(\s*\()?)?")


@cache
def _fields_read(rule: str) -> frozenset[str] | None:
    """The fields of ``self`` that ``rule`` reads, when it reads ``self`` only as ``self.<field>``
    (None: it reads it otherwise, as a whole or by a macro)."""
    fields = set()
    for found in _SELF.finditer(rule):
        if found[2] is None or found[3] is not None:
            return None
        fields.add(found[2])
    return frozenset(fields)


def _conjunction(rules: tuple[str, ...]) -> str:
    return " && ".join(f"({rule})" for rule in rules)


def failures(rules: tuple[str, ...], value: Any) -> list[tuple[str, str]]:
    """Each of ``rules`` that fails for ``self`` = ``value``, with why (``failure``). Several rules
    are evaluated as one conjunction first: when it holds, as it almost always does, one evaluation
    said so."""
    if len(rules) > 1 and failure(_conjunction(rules), value) is None:
        return []
    return [(rule, why) for rule in rules if (why := failure(rule, value)) is not None]


def failure(rule: str, value: Any) -> str | None:
    """None when ``rule`` holds for ``self`` = ``value`` (plain data, as the API server has it after
    pruning and defaulting); else why not: "false", or the evaluation error."""
    if type(value) is dict:
        # The library converts all of self on each evaluation: only the fields the rule reads go in
        # (a field it tests with has() and that is absent stays absent).
        fields = _fields_read(rule)
        if fields is not None:
            value = {k: value[k] for k in fields if k in value}
    elif type(value) in (str, int, bool):
        key = (rule, type(value), value)
        if key in _SCALAR_VERDICTS:
            return _SCALAR_VERDICTS[key]
        found = _evaluate(rule, value)
        if len(_SCALAR_VERDICTS) < _MOST_REMEMBERED:
            _SCALAR_VERDICTS[key] = found
        return found
    return _evaluate(rule, value)


def _evaluate(rule: str, value: Any) -> str | None:
    try:
        result = _program(rule).eval(data={"self": value})
    except RuntimeError as err:  # a rule the library cannot compile, or data it cannot convert
        return f"not evaluated: {err}"
    if result.type().name() == "ERROR":
        return f"evaluation error: {result.value()}"
    return None if result.value() is True else "false"
