"""The Kueue release a cluster runs, and how that release sizes a TrainJob's pod sets.

Kueue builds a TrainJob's Workload in its own process, with the Trainer its go.mod names
(sigs.k8s.io/kueue/pkg/controller/jobs/trainjob/trainjob_controller.go, ``getChildJobSet``: that Trainer's
``RuntimeInfo`` and JobSet builder), not with the Trainer the cluster runs:

- v0.17.0 builds on Trainer v2.2.0, v0.19.2 on v2.2.1 (each release's go.mod): ``resourcesPerNode``
  *replaces* the trainer container's resources (pkg/runtime/framework/plugins/jobset/builder.go at
  v2.2.x). Run: tests/cluster/test_kueue_release.py, on both.
- From v0.20 (kubernetes-sigs/kueue PR 14504, on main since 2026-08-17: go.mod names Trainer v2.3.0)
  it is *merged* per resource name (``newRuntimeInfo``, pkg/runtime/core/trainingruntime.go at
  v2.3.0). By reading: no v0.20 module is served here.

What tells the release: ``check --kueue-version`` where its caller pins it, else, read from objects only the
platform writes (cluster-scoped), the
``app.kubernetes.io/version`` label Kueue's Helm chart puts on its CRDs (charts/kueue/templates/_helpers.tpl,
``kueue.labels``; its kustomize manifests carry none), else the API versions of ``kueue.x-k8s.io`` the
cluster serves: v0.15-v0.19 serve ``v1beta1`` beside ``v1beta2``; v0.20 serves ``v1beta2`` only
(kubernetes-sigs/kueue PR 14558 sets ``v1beta1`` unserved, issue 13957).

Pure: the CRD and the served versions come in as read.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any, Final

from ..values.records import Record
from .report import Finding, object_name

CRD: Final = "clusterqueues.kueue.x-k8s.io"
VERSION_LABEL: Final = "app.kubernetes.io/version"  # Kueue's Helm chart: the chart's appVersion
FIRST_MERGING_MINOR: Final = 20
_RELEASE = re.compile(r"v?0\.(\d+)\.(\d+)")
# The Trainer each Kueue minor builds in (the go.mod of its releases; v0.18's is a v2.2.1 pre-release).
TRAINER_OF: Final = {17: "v2.2.0", 18: "v2.2.1", 19: "v2.2.1", 20: "v2.3.0"}


class KueueRelease(Record):
    """The Kueue release ``check`` followed: ``version`` (``v0.19.2``) or a range where only the served API
    versions told (``v0.19 or older``), what told it (``read``) and the minor whose rule applies."""

    __slots__ = ("exact", "minor", "read", "version")

    def __init__(self, version: str, minor: int, read: str, exact: bool = True) -> None:
        self.version: Final = version
        self.minor: Final = minor
        self.read: Final = read
        self.exact: Final = exact

    @property
    def per_node_replaces(self) -> bool:
        """Whether Kueue gives the trainer container ``resourcesPerNode`` as its whole resources (through
        v0.19), or merges it per resource name (from v0.20)."""
        return self.minor < FIRST_MERGING_MINOR

    @property
    def trainer(self) -> str:
        """The Trainer that computes the pod sets, in Kueue's process."""
        known = TRAINER_OF.get(self.minor) if self.exact else None
        return known or ("v2.2 or older" if self.per_node_replaces else "v2.3.0 or later")

    def describe(self) -> str:
        rule = "replaces" if self.per_node_replaces else "is merged onto"
        return (
            f"Kueue {self.version} ({self.read}) builds a TrainJob's pod sets with Trainer {self.trainer}: "
            f"resourcesPerNode {rule} the trainer container's resources"
        )


def pinned(value: str) -> KueueRelease:
    """The release ``check --kueue-version`` names (the caller's: a platform's hook, a CI job)."""
    found = _RELEASE.fullmatch(value)
    if found is None:
        raise ValueError(f"not a Kueue release: {value!r} (e.g. v0.19.2)")
    return KueueRelease(f"v0.{found[1]}.{found[2]}", int(found[1]), "--kueue-version")


def kueue_release(crd: Mapping[str, Any] | None, served: Collection[str]) -> KueueRelease:
    """The release from the CRD's version label, else from the served API versions (``v1beta1``, ``v1beta2``)."""
    labels = (crd or {}).get("metadata", {}).get("labels") if isinstance(crd, Mapping) else None
    value = labels.get(VERSION_LABEL) if isinstance(labels, Mapping) else None
    found = _RELEASE.fullmatch(value) if isinstance(value, str) else None
    if found is not None:
        version = f"v0.{found[1]}.{found[2]}"
        return KueueRelease(version, int(found[1]), f"CRD {CRD} label {VERSION_LABEL}: {value}")
    listed = ", ".join(sorted(served)) or "none"
    if "v1beta1" in served:
        read = f"kueue.x-k8s.io serves {listed}; no {VERSION_LABEL} label on CRD {CRD}"
        return KueueRelease(f"v0.{FIRST_MERGING_MINOR - 1} or older", FIRST_MERGING_MINOR - 1, read, exact=False)
    read = f"kueue.x-k8s.io serves {listed}, not v1beta1; no {VERSION_LABEL} label on CRD {CRD}"
    return KueueRelease(f"v0.{FIRST_MERGING_MINOR} or later", FIRST_MERGING_MINOR, read, exact=False)


def followed(release: KueueRelease) -> Finding:
    """``kueue-release``: the release whose rule ``queue-exceeded`` sized the queued TrainJobs' pod sets by."""
    return Finding(
        "kueue-release",
        "info",
        object_name("CustomResourceDefinition", "", CRD),
        f"{release.describe()}; queue-exceeded sized the queued TrainJobs' pod sets so",
    )
