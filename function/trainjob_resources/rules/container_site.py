"""One ContainerPatch against the unpatched runtime: the container it names must be there, in the
list it names; no ``env`` for the ``node`` and initializer containers (``runtime_free``); and the
trainer container's resources per the functionConfig's ``trainerResources`` (not in ``native`` mode, where
KEP-2782 keeps the node container's patch: ``native_per_node``).

Stricter than upstream on purpose: ``pkg/runtime/framework/plugins/jobset/jobset.go`` ``Validate``
checks that patched containers exist in the *merged* spec (``ValidateObjects``,
``pkg/runtime/core/trainingruntime.go``, runs ``newRuntimeInfo``, whose ``mergeRuntimePatches`` has
added them already), so it admits a misspelt name; here they must exist in the unpatched runtime,
in the list the patch names."""

from __future__ import annotations

from ..resolve.context import TrainJobContext
from ..trainer.sites import ContainerSite
from ..values.violations import Violation
from .framework import Rule
from .reads import MODE, MOVED, TRAINER_RESOURCES
from .runtime_free import reserved_env_violations
from .stages import PATCHES


def _check(context: TrainJobContext, site: ContainerSite) -> list[Violation]:
    job = context.runtime.jobs.get(site.job)
    if job is None:
        return []  # job-site's finding
    if (site.container_list, site.name) not in job.containers:
        return [Violation(f"{site.path}.name", _missing(context, site), current_value=site.name)]
    out = reserved_env_violations(site)
    # Only where the move can be made: where it cannot (resolve/moving.py), the unmovable rule says why,
    # once, instead of a proposal that contradicts it.
    if (
        site.resources is not None
        and not context.native
        and context.config.trainer_resources == "error"
        and context.topo.is_trainer(site.job, site.container_list, site.name)
        and (moved := context.moved[0]) is not None
    ):
        proposed = {"spec": {"trainer": {"resourcesPerNode": moved}}}
        out.append(
            Violation(
                site.resources_path,
                f"the trainer container {site.name!r} of replicated job {site.job!r} is sized by "
                "spec.trainer.resourcesPerNode, not by runtimePatches: move these resources there "
                "(or set the functionConfig option trainerResources: moveToResourcesPerNode)",
                current_value=None,
                proposed_value=proposed,
            )
        )
    return out


def _missing(context: TrainJobContext, site: ContainerSite) -> str:
    containers = context.runtime.jobs[site.job].containers
    display = context.runtime.display
    other = "containers" if site.container_list == "initContainers" else "initContainers"
    if (other, site.name) in containers:
        return (
            f"{site.name!r} is one of the {other} of replicated job {site.job!r} in {display}, "
            f"not one of its {site.container_list}: move this entry under {other}"
        )
    inits = [n for (lst, n) in containers if lst == "initContainers"]
    mains = [n for (lst, n) in containers if lst == "containers"]
    return (
        f"no container {site.name!r} among the {site.container_list} of replicated job {site.job!r} "
        f"in {display} (initContainers: {', '.join(inits) or 'none'}; "
        f"containers: {', '.join(mains) or 'none'})"
    )


RULE = Rule(
    "container-site",
    (PATCHES,),
    "container-site",
    (MODE, TRAINER_RESOURCES, *MOVED),
    "ContainerPatches naming a container the runtime lacks, and trainer containers sized by runtimePatches",
    _check,
)
