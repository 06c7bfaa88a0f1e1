"""``trainer-version``: whether the render followed the Trainer release the cluster runs, and whether a
difference changes what the caps and quotas saw.

v2.2.x and v2.3.0 compute the trainer container's resources differently (trainer/releases.py:
``resourcesPerNode`` replaces them on v2.2, pkg/runtime/framework/plugins/jobset/builder.go at v2.2.1; it is
merged per resource name on v2.3, ``newRuntimeInfo`` in pkg/runtime/core/trainingruntime.go at v2.3.0).
Where the render's release and the cluster's give a TrainJob's containers other resources, the policy
was checked on pods the cluster will not run: an error. Other differences are a warning.

Pure: the views come in as ``explain`` computed them under each release.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ..kube.quantity import Quantity
from ..report.explain import TrainJobPods
from ..trainer.api import TRAINJOB_KIND
from ..trainer.releases import NEWEST, SUPPORTED, trainer_version_of
from ..trainer.releases import release as release_of
from ..values.records import Record
from .report import Finding, object_name

MAX_DIFFERENCES: Final = 5  # differing values named in one message


class Followed(Record):
    """The release ``check`` rendered as (``checked``), whether a config set it (``configured``), and, by
    TrainJob (``namespace/name``), where the sync's render and the cluster's release give its containers
    other resources (``differences``)."""

    __slots__ = ("checked", "configured", "differences")

    def __init__(self, checked: str, configured: bool, differences: Mapping[str, list[str]] | None = None) -> None:
        self.checked: Final = checked
        self.configured: Final = configured
        self.differences: Final = differences or {}

    @property
    def rendered(self) -> str:
        """The release the sync's render follows: the config's, else the function's default (render has no
        cluster to read it from)."""
        return self.checked if self.configured else NEWEST


def sync_release(followed: Followed, cluster_release: str | None) -> tuple[str, str] | None:
    """(the sync's render's release, the cluster's) where they differ and the cluster's is supported."""
    cluster = trainer_version_of(cluster_release)
    if cluster is None or release_of(cluster) == release_of(followed.rendered):
        return None
    return followed.rendered, cluster


def differences(rendered: Mapping[str, TrainJobPods], cluster: Mapping[str, TrainJobPods]) -> dict[str, list[str]]:
    """By TrainJob, each container value one release gives and the other does not give alike."""
    out: dict[str, list[str]] = {}
    for key, view in rendered.items():
        other = cluster.get(key)
        if other is None:
            continue
        theirs = {(job.name, c.name): c for job in other.jobs for c in job.containers}
        found: list[str] = []
        for job in view.jobs:
            for container in job.containers:
                twin = theirs.get((job.name, container.name))
                if twin is None:
                    continue
                for section in ("requests", "limits"):
                    mine, cluster_values = container.quantities(section), twin.quantities(section)
                    for name in sorted({*mine, *cluster_values}):
                        if mine.get(name) != cluster_values.get(name):
                            found.append(
                                f"{section}.{name} of container {container.name!r} of replicated job {job.name!r}: "
                                f"{_value(cluster_values.get(name))} on the cluster, {_value(mine.get(name))} in "
                                "the render"
                            )
        if found:
            out[key] = found
    return out


def _value(quantity: Quantity | None) -> str:
    return "none" if quantity is None else quantity.canonical()


def trainer_version(release: str | None, read: str, followed: Followed) -> list[Finding]:
    """What ``check`` says of the Trainer releases: nothing where the sync's render follows the cluster's."""
    supported = trainer_version_of(release)
    rendered = followed.rendered
    how = "(trainerVersion)" if followed.configured else "(the default: trainerVersion is unset)"
    fix = f"set trainerVersion: {supported} in the config (the platform's --config, where there is one)"
    if supported is not None and release_of(supported) == release_of(rendered):
        return []
    crd = object_name("CustomResourceDefinition", "", f"{TRAINJOB_KIND.lower()}s.trainer.kubeflow.org")
    if release is None:
        message = (
            f"could not tell the cluster's Trainer release ({read}); the render followed Trainer {rendered} {how}: "
            "check that the installed release is that one, or set trainerVersion"
        )
        return [Finding("trainer-version", "warning", crd, message)]
    if supported is None:
        message = (
            f"the cluster runs Trainer {release} ({read}), which the function does not support "
            f"({', '.join(SUPPORTED)}); the render followed Trainer {rendered} {how}: what it checks and derives "
            "may not be what this release accepts"
        )
        return [Finding("trainer-version", "warning", crd, message)]
    runs = f"the cluster runs Trainer {release} ({read}), and the render follows Trainer {rendered} {how}"
    errors = [
        Finding(
            "trainer-version",
            "error",
            object_name(TRAINJOB_KIND, *key.split("/", 1)),
            f"{runs}, which gives this TrainJob's pods other resources: {_listed(found)}. The caps and quotas were "
            f"checked on pods the cluster will not run; {fix}",
        )
        for key, found in sorted(followed.differences.items())
    ]
    if errors:
        return errors
    checked = (
        ""
        if followed.configured
        else f"; check followed the cluster's ({followed.checked}), but render, without a cluster, follows {rendered}"
    )
    message = f"{runs}{checked}: what it checks and derives is not what this release does; {fix}"
    return [Finding("trainer-version", "warning", crd, message)]


def _listed(found: list[str]) -> str:
    shown = "; ".join(found[:MAX_DIFFERENCES])
    return f"{shown}; and {len(found) - MAX_DIFFERENCES} more" if len(found) > MAX_DIFFERENCES else shown
