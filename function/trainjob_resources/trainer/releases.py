"""The Kubeflow Trainer releases the function supports (``trainerVersion``) and what differs between
them, each difference read from the release's code and seen on its control plane
(tests/cluster/test_trainer_releases.py).

v2.2.x (v2.2.0, v2.2.1) and v2.3.0 all have ``runtimePatches``. Where v2.2.x differs:

- ``spec.trainer.resourcesPerNode`` replaces the trainer container's resources: the JobSet builder
  gives the container ``WithResources(resourcesPerNode)``
  (pkg/runtime/framework/plugins/jobset/builder.go at v2.2.1), where v2.3.0 merges it per resource
  name (``newRuntimeInfo``, pkg/runtime/core/trainingruntime.go at v2.3.0).
- ``PodSpecPatch`` has no ``terminationGracePeriodSeconds``, and the initializers' ``storageUri`` has
  no CEL rule (pkg/apis/trainer/v1alpha1/trainjob_types.go at v2.2.1).
- The runtime webhooks have no ``trainer.kubeflow.org/webhook-validation: disabled`` selector
  (manifests/base/webhook/patch_validating.yaml is v2.3.0's).
- No runtime snapshot (pkg/runtime/core/snapshot.go is v2.3.0's), and a runtime in use carries the
  finalizer ``trainer.kubeflow.org/resource-in-use``: neither changes what the function writes.
- The dataset and model initializer containers need not mount the volume ``initializer``.
"""

from __future__ import annotations

import re
from typing import Final, Literal

from ..values.records import Record

TrainerVersion = Literal["v2.2", "v2.2.0", "v2.2.1", "v2.3", "v2.3.0"]
NEWEST: Final = "v2.3.0"
SUPPORTED: Final = ("v2.2.0", "v2.2.1", "v2.3.0")
_RELEASE = re.compile(r"v?2\.([23])\.(\d+)")


class TrainerRelease(Record):
    """One supported Kubeflow Trainer release, by its minor version."""

    __slots__ = ("minor",)

    def __init__(self, version: str) -> None:
        self.minor: Final = int(version.removeprefix("v").split(".")[1])

    @property
    def name(self) -> str:
        return f"Kubeflow Trainer v2.{self.minor}"

    @property
    def per_node_replaces(self) -> bool:
        """Whether resourcesPerNode replaces the trainer container's resources (v2.2) or is merged
        onto them per resource name (v2.3)."""
        return self.minor < 3

    @property
    def grace_period_patch(self) -> bool:
        """Whether ``PodSpecPatch`` has ``terminationGracePeriodSeconds``."""
        return self.minor >= 3

    @property
    def storage_uri_rule(self) -> bool:
        """Whether the CRD checks an initializer's ``storageUri`` (empty or ``scheme://...``)."""
        return self.minor >= 3

    @property
    def initializer_volume_rule(self) -> bool:
        """Whether the TrainJob webhook needs the dataset and model initializer containers to mount the
        volume ``initializer`` (``Validate`` in pkg/runtime/framework/plugins/jobset/jobset.go at v2.3.0; at
        v2.2.1 it needs the job and the container only, and runs upstream's data-cache runtime, which mounts
        no such volume)."""
        return self.minor >= 3

    @property
    def runtime_snapshot(self) -> bool:
        """Whether a TrainJob's JobSet is built from the snapshot of its runtime taken at its first reconcile
        (pkg/runtime/core/snapshot.go, v2.3.0) rather than from the live runtime at each reconcile (v2.2)."""
        return self.minor >= 3

    @property
    def in_use_finalizer(self) -> bool:
        """Whether the runtime controllers keep a runtime that TrainJobs name behind the finalizer
        ``trainer.kubeflow.org/resource-in-use`` (v2.2: a deleted one stays Terminating until they are gone;
        v2.3.0 only removes that finalizer): pkg/controller/trainingruntime_controller.go and
        clustertrainingruntime_controller.go."""
        return self.minor < 3

    @property
    def webhook_selector(self) -> bool:
        """Whether a runtime labelled ``trainer.kubeflow.org/webhook-validation: disabled`` skips the
        runtime webhooks."""
        return self.minor >= 3


def trainer_version_of(cluster_release: str | None) -> str | None:
    """The ``trainerVersion`` for a release a cluster names (``v2.2.1``, ``2.3.0``), or None where it
    is not one the function supports (a later patch of a supported minor is that minor)."""
    found = _RELEASE.fullmatch(cluster_release or "")
    if found is None:
        return None
    version = f"v2.{found[1]}.{found[2]}"
    return version if version in SUPPORTED else f"v2.{found[1]}"


def release(version: str) -> TrainerRelease:
    return _RELEASES.get(version) or TrainerRelease(version)


_RELEASES: Final = {v: TrainerRelease(v) for v in ("v2.2.1", NEWEST)}
