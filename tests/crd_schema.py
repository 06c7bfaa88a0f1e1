"""Whether an object fits the upstream Kubeflow Trainer API, checked with its official models
(``kubeflow-trainer-api`` from PyPI, pinned in the test extra, generated from the same OpenAPI as
the CRDs): the fields a real API server would prune or reject.

``Model.from_dict(obj)`` rejects wrong shapes (a string where an object goes, a missing required
field) and ``.to_dict()`` drops every field the API does not declare, so whatever the round trip
loses is a field the API server would drop: a ContainerPatch ``resources``, a misspelt key.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kubeflow_trainer_api.models import (
    TrainerV1alpha1ClusterTrainingRuntime,
    TrainerV1alpha1TrainingRuntime,
    TrainerV1alpha1TrainJob,
)

MODELS: dict[str, Any] = {
    "TrainJob": TrainerV1alpha1TrainJob,
    "TrainingRuntime": TrainerV1alpha1TrainingRuntime,
    "ClusterTrainingRuntime": TrainerV1alpha1ClusterTrainingRuntime,
}


def problems(obj: Any, kind: str | None = None) -> list[str]:
    """Every place where ``obj`` does not fit its kind's upstream model; empty when it fits."""
    model = MODELS[kind or obj["kind"]]
    try:
        back = model.from_dict(obj).to_dict()
    except (TypeError, ValueError) as err:  # pydantic's ValidationError is a ValueError
        errors = getattr(err, "errors", None)
        if callable(errors):
            return [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors()]
        return [str(err)]
    return list(_lost(obj, back, ""))


def _lost(original: Any, back: Any, path: str) -> Iterator[str]:
    """What the round trip dropped or changed. A null the model leaves out is not a loss: the API
    server prunes nulls of fields that are not nullable too."""
    if isinstance(original, dict) and isinstance(back, dict):
        for key, value in original.items():
            child = f"{path}.{key}" if path else str(key)
            if key in back:
                yield from _lost(value, back[key], child)
            elif value is not None:
                yield f"{child}: field not declared by the upstream API (the API server drops it)"
    elif isinstance(original, list) and isinstance(back, list) and len(original) == len(back):
        for i, (item, item_back) in enumerate(zip(original, back, strict=True)):
            yield from _lost(item, item_back, f"{path}[{i}]")
    elif original != back:
        yield f"{path}: {original!r} comes back as {back!r}"
