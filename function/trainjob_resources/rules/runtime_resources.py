"""A runtime of the bundle with container resources the API server refuses
(pkg/apis/core/validation/validation.go ``validateResourceRequirements``, as
``bundle.runtime_resource_violations`` applies it): the runtime is a template of the pods, which
the API server refuses with such resources, so no runtime is derived from it. Said once per runtime
(a TrainJob that would derive from it is told by ``runtime-ref``)."""

from __future__ import annotations

from ..resolve.bundle import Bundle, RuntimeEntry
from ..values.violations import Violation
from .framework import Rule
from .stages import INDEX

_REFUSED = "Kubernetes refuses it; no runtime is derived from this one"


def _check(_: Bundle, entry: RuntimeEntry) -> list[Violation]:
    return [
        Violation(
            v.path,
            f"{v.message} (Kubernetes refuses it; no runtime is derived from this one)",
            "error",
            v.current_value,
        )
        for v in entry.invalid
    ]


RULE = Rule(
    "runtime-resources", (INDEX,), "runtime", (), "container resources of a runtime that Kubernetes refuses", _check
)
