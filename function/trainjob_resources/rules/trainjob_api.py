"""A TrainJob against Trainer's API: every field the models of ``trainer/trainjob_view.py`` and
``trainer/models.py`` refuse (after upstream's ``pkg/apis/trainer/v1alpha1/trainjob_types.go``, whose
CRD makes the API server refuse the same), and a TrainJob without a name (``metadata.name``, which
every Kubernetes object needs: k8s.io/apimachinery ``pkg/api/validation/objectmeta.go``)."""

from __future__ import annotations

from typing import Any

from ..resolve.context import TrainJobContext
from ..values.violations import Violation
from .framework import Rule
from .stages import PARSE


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    if context.records_error is not None:
        return []  # not read at all
    out = list(context.api_violations)
    if not context.item.name:
        out.append(Violation("metadata.name", "a TrainJob needs a name (metadata.name)"))
    return out


RULE = Rule(
    "trainjob-api", (PARSE,), "trainjob", (), "fields Trainer's API refuses, and a TrainJob without a name", _check
)
