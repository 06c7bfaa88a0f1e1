"""Names of upstream Trainer's API that every layer above uses: the group, the kinds, and the
path from a runtime patch down to its jobs and from a job down to its pod spec.

The API's types are in ``models`` (pydantic); this module imports nothing, so the paths that only
need the names do not load pydantic.
"""

from __future__ import annotations

TRAINER_GROUP = "trainer.kubeflow.org"
TRAINJOB_KIND = "TrainJob"
CLUSTER_RUNTIME_KIND = "ClusterTrainingRuntime"
NAMESPACED_RUNTIME_KIND = "TrainingRuntime"
RUNTIME_KINDS = (CLUSTER_RUNTIME_KIND, NAMESPACED_RUNTIME_KIND)

# ``runtimePatches[].trainingRuntimeSpec.template.spec.replicatedJobs`` (pkg/apis/trainer/v1alpha1/trainjob_types.go)
JOB_CHAIN = ("trainingRuntimeSpec", "template", "spec", "replicatedJobs")
# ``replicatedJobs[].template.spec.template.spec``: a JobSet's job template down to its pod spec
POD_CHAIN = ("template", "spec", "template", "spec")
