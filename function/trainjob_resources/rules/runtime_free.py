"""The rules of upstream's TrainJob webhook that read no runtime
(``pkg/runtime/framework/plugins/jobset/jobset.go`` ``Validate``), for a TrainJob passed through
without its runtime: each manager (``managers``) and no ``env`` for the ``node`` and initializer
containers. Its other rules (the initializer jobs, the patched jobs and containers existing) need
the runtime."""

from __future__ import annotations

from typing import Any

from ..resolve.context import TrainJobContext
from ..trainer.runtime_view import RESERVED_ENV_CONTAINERS
from ..trainer.sites import ContainerSite
from ..values.violations import Violation
from .framework import Rule
from .managers import validate_managers
from .stages import RUNTIME_FREE


def reserved_env_violations(site: ContainerSite) -> list[Violation]:
    """``jobset.go`` ``Validate``: no ``env`` in a ``containers`` entry named ``node``,
    ``dataset-initializer`` or ``model-initializer``. By the name alone, whatever the runtime: it checks
    the spec with the patches merged, and a container of that name missing there is refused too ('must
    not have container that doesn't exist'), so the rule needs no runtime."""
    if not (site.patch.env and site.container_list == "containers" and site.name in RESERVED_ENV_CONTAINERS):
        return []
    return [
        Violation(
            f"{site.path}.env",
            f"must not set env for the {', '.join(RESERVED_ENV_CONTAINERS)} containers: "
            "use spec.trainer.env or spec.initializer instead (Trainer's TrainJob webhook refuses it, whatever "
            "the runtime: jobset.go Validate, pkg/runtime/framework/plugins/jobset/jobset.go)",
        )
    ]


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    resolution = context.resolution
    if resolution is not None and resolution.foreign is not None:
        return []
    out = validate_managers(list(context.managers))
    for site in context.sites:
        out += reserved_env_violations(site)
    return out


RULE = Rule(
    "runtime-free",
    (RUNTIME_FREE,),
    "trainjob",
    (),
    "managers and ContainerPatches the webhook refuses whatever the runtime",
    _check,
)
