"""What the API server refuses of a TrainJob by its CRD's structural schema and CEL rules
(``trainer/crd_validate.py``, against ``manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml`` of
the release ``trainerVersion`` names): a field the release does not declare (``terminationGracePeriodSeconds``
in a PodSpecPatch on v2.2), a wrong type, a value outside an enum or a bound (``activeDeadlineSeconds``
at least 1, MaxItems, MaxLength), a duplicate list key, a CEL rule that fails (``metadata.name`` an
RFC 1035 label, ``managedBy`` one of two values, the initializers' ``storageUri`` on v2.3).

A ContainerPatch's ``resources`` is the function's own field, which it removes before the TrainJob
reaches the cluster (the patches' rules check it), so it is left out; so is a PodSpecPatch's
``resourceClaims`` (KEP-2782's field: ``pod-claims`` checks it in native mode and refuses it in
the others); strategic-merge directives (``$patch``...) are the ``crd`` rule's, which says more of them.
"""

from __future__ import annotations

import re
from typing import Any, Final

from ..resolve.context import TrainJobContext
from ..trainer.crd_validate import described, said_elsewhere, validate
from ..values.violations import Violation
from .framework import Rule
from .stages import RUNTIME_FREE, TRAINJOB

_POD_CLAIMS: Final = re.compile(r"spec\.runtimePatches\[\d+\]\..*\.template\.spec\.resourceClaims(?:$|[.\[])")


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    version = context.config.trainer_version
    return [
        Violation(
            f.path, f"{described(f, 'TrainJob', version)}: the API server refuses the TrainJob", current_value=f.value
        )
        for f in validate(context.raw, version, "TrainJob", skip_directives=True, own_resources=True)
        if not said_elsewhere(f) and not _POD_CLAIMS.match(f.path)
    ]


RULE = Rule(
    "trainjob-schema",
    (RUNTIME_FREE, TRAINJOB),
    "trainjob",
    (),  # reads the TrainJob as written: never remembered
    "what the API server refuses of a TrainJob by its CRD's schema and CEL rules (unknown fields, types, "
    "enums, bounds, duplicate keys, the CEL rules)",
    _check,
)
