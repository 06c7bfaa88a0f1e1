"""A runtime of the bundle the function cannot read: the fields the runtime models of
``trainer/runtime_view.py`` and ``trainer/runtime_models.py`` refuse (after upstream's
``pkg/apis/trainer/v1alpha1/trainingruntime_types.go``, whose CRD makes the API server refuse the
same). Said once per runtime, whichever TrainJobs name it (those that do are told by ``runtime-ref``)."""

from __future__ import annotations

from ..resolve.bundle import Bundle, RuntimeEntry
from ..values.violations import Violation
from .framework import Rule
from .stages import INDEX


def _check(_: Bundle, entry: RuntimeEntry) -> list[Violation]:
    return [
        Violation(v.path, f"runtime cannot be read: {v.message}", "error", v.current_value) for v in entry.violations
    ]


RULE = Rule("runtime-readable", (INDEX,), "runtime", (), "runtimes whose fields Trainer's API refuses", _check)
