"""What the API server refuses of a runtime of the bundle by its CRD's structural schema and CEL rules
(``trainer/crd_validate.py``, against ``manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml``
and ``..._clustertrainingruntimes.yaml`` of the release ``trainerVersion`` names): a field the release
does not declare (``mlPolicy.torch.numProcPerNode`` on v2.3.0), a wrong type, a value outside an enum
or a bound, a duplicate list key, a CEL rule that fails.

A derived runtime is the runtime with other container resources (each checked by ``runtime-resources``
and the patches' rules), so the API server refuses it for the same reasons: said here once per
runtime, at the runtime's own file and line; ``derived-schema`` stops each TrainJob that would derive
from it. An error where the render emits the runtime; a warning for a runtime it never emits (a
``local-config`` copy of a runtime installed in the cluster, or the platform's ``--runtimes``), where
only what is derived from it is refused.
"""

from __future__ import annotations

from ..resolve.bundle import Bundle, RuntimeEntry
from ..trainer.crd_validate import described, said_elsewhere, validate
from ..values.violations import Severity, Violation
from .framework import Rule
from .stages import INDEX


def refusals(bundle: Bundle, entry: RuntimeEntry) -> list[Violation]:
    """What the API server refuses of ``entry`` (the same list each time it is asked)."""
    found = bundle.refusals.get(entry.identity)
    if found is None:
        kind = entry.item.kind
        version = bundle.trainer_version
        found = bundle.refusals[entry.identity] = [
            Violation(f.path, described(f, kind, version), current_value=f.value)
            for f in validate(entry.item.value(), version, kind)
            if not said_elsewhere(f)
        ]
    return found


def _check(bundle: Bundle, entry: RuntimeEntry) -> list[Violation]:
    found = refusals(bundle, entry)
    if not found:
        return found
    emitted = not (entry.local or entry.platform)
    severity: Severity = "error" if emitted else "warning"
    then = "this runtime and every runtime derived from it" if emitted else "every runtime derived from this one"
    return [Violation(v.path, f"{v.message}: the API server refuses {then}", severity, v.current_value) for v in found]


RULE = Rule(
    "runtime-schema",
    (INDEX,),
    "runtime",
    (),
    "runtimes the API server refuses by their CRD's schema and CEL rules (unknown fields, types, enums, bounds)",
    _check,
)
