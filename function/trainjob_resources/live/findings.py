"""What a sync of the render would do to the live cluster: each finding ``check`` reports, from the
rendered objects, the live ones and the pods ``explain`` counts.

Pure: the cluster's objects come in as the API server's JSON (``Live``), the render's as plain
values; nothing here talks to the cluster. Each rule cites the upstream file it follows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..derive.provenance import DERIVED_FROM, DERIVED_LABEL, RUNTIME_REF
from ..krm.resource_list import Item
from ..kube import compare
from ..kube.quantity import Quantity, QuantityError, parse_quantity
from ..report.explain import TrainJobPods
from ..rules.namespace_objects import Quota, read_quota
from ..rules.resource_quota import pod_usage, scopes_match
from ..trainer.api import CLUSTER_RUNTIME_KIND, NAMESPACED_RUNTIME_KIND, RUNTIME_KINDS, TRAINER_GROUP, TRAINJOB_KIND
from ..trainer.releases import NEWEST
from ..values.records import MutableRecord, Record
from ..yamltext import yamlnodes as yn
from .queues import KueueObjects, exceeded, queue_name, release_followed
from .report import Finding, object_name
from .trainer_release import Followed, trainer_version

# The release of Trainer whose API and webhooks the function's rules follow (README: upstream v2.3.0).
RECREATE: Final = (
    "recreate the TrainJob: delete it and apply it again, or under Argo CD annotate it "
    "argocd.argoproj.io/sync-options: Force=true,Replace=true"
)
# Argo CD's resource tracking: the annotation (``<app>:<group>/<kind>:<ns>/<name>``) or the label.
TRACKING_ANNOTATION: Final = "argocd.argoproj.io/tracking-id"
TRACKING_LABEL: Final = "app.kubernetes.io/instance"
MAX_NAMED: Final = 10  # objects named in one message

RuntimeKey = tuple[str, str, str]  # (kind, namespace or "" for a ClusterTrainingRuntime, name)


class RuntimeRef(Record):
    """A TrainJob's ``spec.runtimeRef`` with the CRD's defaults (pkg/apis/trainer/v1alpha1/trainjob_types.go:
    ``apiGroup`` defaults to trainer.kubeflow.org, ``kind`` to ClusterTrainingRuntime)."""

    __slots__ = ("group", "kind", "name")

    def __init__(self, name: str, kind: str = CLUSTER_RUNTIME_KIND, group: str = TRAINER_GROUP) -> None:
        self.name: Final = name
        self.kind: Final = kind
        self.group: Final = group

    def key(self, namespace: str) -> RuntimeKey:
        return (self.kind, namespace if self.kind == NAMESPACED_RUNTIME_KIND else "", self.name)

    def display(self) -> str:
        group = "" if self.group == TRAINER_GROUP else f" ({self.group})"
        return f"{self.kind} {self.name}{group}"


def runtime_ref(obj: Mapping[str, Any]) -> RuntimeRef | None:
    spec = obj.get("spec")
    ref = spec.get("runtimeRef") if isinstance(spec, Mapping) else None
    if not isinstance(ref, Mapping) or not isinstance(ref.get("name"), str):
        return None
    kind, group = ref.get("kind"), ref.get("apiGroup")
    return RuntimeRef(
        ref["name"],
        kind if isinstance(kind, str) and kind else CLUSTER_RUNTIME_KIND,
        group if isinstance(group, str) and group else TRAINER_GROUP,
    )


def metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def name_of(obj: Mapping[str, Any]) -> str:
    return str(metadata(obj).get("name") or "")


def namespace_of(obj: Mapping[str, Any]) -> str:
    return str(metadata(obj).get("namespace") or "")


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    labels = metadata(obj).get("labels")
    return labels if isinstance(labels, Mapping) else {}


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    annotations = metadata(obj).get("annotations")
    return annotations if isinstance(annotations, Mapping) else {}


def group_of(obj: Mapping[str, Any]) -> str:
    version = str(obj.get("apiVersion") or "")
    return version.split("/", 1)[0] if "/" in version else ""


def is_trainer(obj: Mapping[str, Any], kinds: Sequence[str]) -> bool:
    return group_of(obj) == TRAINER_GROUP and str(obj.get("kind")) in kinds


def runtime_key(obj: Mapping[str, Any]) -> RuntimeKey:
    kind = str(obj.get("kind"))
    return (kind, namespace_of(obj) if kind == NAMESPACED_RUNTIME_KIND else "", name_of(obj))


def key_name(key: RuntimeKey) -> str:
    return object_name(*key)


def is_derived(obj: Mapping[str, Any]) -> bool:
    return str(labels_of(obj).get(DERIVED_LABEL)) == "true"


def base_refs(obj: Mapping[str, Any]) -> list[RuntimeKey]:
    """The runtimes a rendered object was made from, by the function's own records: a TrainJob's
    runtimeRef as written (``runtime-ref``), a derived runtime's base (``derived-from``)."""
    annotations = annotations_of(obj)
    out: list[RuntimeKey] = []
    recorded = annotations.get(RUNTIME_REF)
    if isinstance(recorded, str):
        try:
            ref = runtime_ref({"spec": {"runtimeRef": json.loads(recorded)}})
        except ValueError:
            ref = None
        if ref is not None:
            out.append(ref.key(namespace_of(obj)))
    base = annotations.get(DERIVED_FROM)
    if isinstance(base, str) and "/" in base:
        kind, _, rest = base.partition("/")
        namespace, _, name = rest.rpartition("/")
        if kind in RUNTIME_KINDS:
            out.append((kind, (namespace or namespace_of(obj)) if kind == NAMESPACED_RUNTIME_KIND else "", name))
    return out


def tracking(obj: Mapping[str, Any]) -> str | None:
    """The Argo CD application that tracks the object, if any (its tracking annotation or label)."""
    annotation = annotations_of(obj).get(TRACKING_ANNOTATION)
    if isinstance(annotation, str) and ":" in annotation:
        return annotation.split(":", 1)[0]
    label = labels_of(obj).get(TRACKING_LABEL)
    return label if isinstance(label, str) and label else None


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:MAX_NAMED])
    return f"{shown} and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else shown


class Denial(Record):
    """A SelfSubjectAccessReview that did not allow ``verb`` on the objects of one kind and namespace."""

    __slots__ = ("kind", "namespace", "objects", "reason", "resource", "verb")

    def __init__(
        self, verb: str, kind: str, resource: str, namespace: str, objects: Sequence[str], reason: str
    ) -> None:
        self.verb: Final = verb
        self.kind: Final = kind
        self.resource: Final = resource  # "trainingruntimes.trainer.kubeflow.org"
        self.namespace: Final = namespace
        self.objects: Final = objects  # their names
        self.reason: Final = reason


class Live(MutableRecord):
    """What ``check`` read of the cluster."""

    __slots__ = ("crds", "jobsets", "kueue", "quotas", "runtimes", "snapshots", "trainer", "trainjobs")

    def __init__(self) -> None:
        self.trainjobs: list[dict[str, Any]] = []  # in the namespaces read (or every namespace)
        self.runtimes: dict[RuntimeKey, dict[str, Any]] = {}
        self.quotas: list[dict[str, Any]] = []
        # "<namespace>/<trainjob>" -> the runtime of its snapshot ConfigMap (pkg/runtime/core/snapshot.go)
        self.snapshots: dict[str, Any] = {}
        self.crds: dict[str, dict[str, Any]] = {}  # by name
        # (what Trainer's release is, or None; what was read to tell it)
        self.trainer: tuple[str | None, str] = (None, "nothing read")
        self.kueue = KueueObjects()  # read only when a TrainJob the sync starts is queued
        # "<namespace>/<name>" -> JobSet, read where the sync changes a suspended TrainJob's runtimePatches
        # (``gather_jobsets``); None where the cluster serves no JobSets
        self.jobsets: dict[str, dict[str, Any]] | None = {}


class Render(MutableRecord):
    """What the sync applies (``objects``), the platform's runtimes and local-config copies the render
    read (``copies``), and the pods of each rendered TrainJob by ``explain``'s arithmetic (``views``,
    by ``namespace/name``; ``kueue_views``: the queued ones' under the Trainer Kueue builds in, where
    that is not the release ``views`` follow)."""

    __slots__ = ("copies", "kueue_views", "objects", "views")

    def __init__(
        self,
        objects: list[dict[str, Any]],
        copies: list[tuple[dict[str, Any], str]],  # (runtime, where it was read)
        views: Mapping[str, TrainJobPods],
        kueue_views: Mapping[str, TrainJobPods] | None = None,
    ) -> None:
        self.objects = objects
        self.copies = copies
        self.views = views
        self.kueue_views = kueue_views

    def trainjobs(self) -> list[dict[str, Any]]:
        return [o for o in self.objects if is_trainer(o, (TRAINJOB_KIND,))]

    def runtimes(self) -> dict[RuntimeKey, dict[str, Any]]:
        return {runtime_key(o): o for o in self.objects if is_trainer(o, RUNTIME_KINDS)}


def find(render: Render, live: Live, trainer: Followed | None = None) -> list[Finding]:
    """Every finding but ``forbidden`` (``forbidden``, from the access reviews ``cluster`` ran),
    ``runtime-patches-immutable`` and ``runtime-in-use`` (their own modules);
    ``trainer``: the trainerVersion the render followed, whether the config set it, and what it changes."""
    return [
        *runtime_ref_immutable(render, live),
        *runtime_missing(render, live),
        *quota_exceeded(render, live),
        *queue_exceeded(render, live),
        *runtime_drift(render, live),
        *snapshot_kept(render, live),
        *trainer_version(*live.trainer, trainer or Followed(NEWEST, False)),
    ]


def _live_trainjobs(live: Live) -> dict[str, dict[str, Any]]:
    return {f"{namespace_of(t)}/{name_of(t)}": t for t in live.trainjobs}


def _trainjob_name(obj: Mapping[str, Any]) -> str:
    return object_name(TRAINJOB_KIND, namespace_of(obj), name_of(obj))


def runtime_ref_immutable(render: Render, live: Live) -> list[Finding]:
    """A live TrainJob whose runtimeRef the render changes: the CRD's CEL rule ``self == oldSelf`` on
    spec.runtimeRef (pkg/apis/trainer/v1alpha1/trainjob_types.go) refuses the update."""
    existing = _live_trainjobs(live)
    out = []
    for trainjob in render.trainjobs():
        old = existing.get(f"{namespace_of(trainjob)}/{name_of(trainjob)}")
        new_ref, old_ref = runtime_ref(trainjob), runtime_ref(old) if old is not None else None
        if new_ref is None or old_ref is None or new_ref == old_ref:
            continue
        out.append(
            Finding(
                "runtime-ref-immutable",
                "error",
                _trainjob_name(trainjob),
                f"the sync changes spec.runtimeRef from {old_ref.display()} to {new_ref.display()}, and the API "
                "server refuses it (spec.runtimeRef is immutable: field is immutable); an override of the TrainJob "
                f"was changed, added or removed since it was created. To apply it, {RECREATE}; or put the "
                "overrides back as they were",
            )
        )
    return out


def runtime_missing(render: Render, live: Live) -> list[Finding]:
    """A rendered TrainJob names a runtime the sync does not apply and the cluster does not have: the
    TrainJob webhook refuses it (``ValidateObjects``, pkg/runtime/core/trainingruntime.go and
    clustertrainingruntime.go: the runtime must exist)."""
    applied = render.runtimes()
    out = []
    for trainjob in render.trainjobs():
        ref = runtime_ref(trainjob)
        if ref is None or ref.group != TRAINER_GROUP or ref.kind not in RUNTIME_KINDS:
            continue
        key = ref.key(namespace_of(trainjob))
        if key in applied or key in live.runtimes:
            continue
        out.append(
            Finding(
                "runtime-missing",
                "error",
                _trainjob_name(trainjob),
                f"names {ref.display()}{' in its namespace' if key[1] else ''}, which the sync does not apply and "
                "the cluster does not have: Trainer's webhook refuses the TrainJob (the runtime must be created "
                "before the TrainJob). Install the runtime first, add it to the render, or point the TrainJob at "
                "one the cluster has",
            )
        )
    return out


def _quantities(value: Any) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    for name, raw in value.items() if isinstance(value, Mapping) else ():
        try:
            out[str(name)] = parse_quantity(raw)
        except QuantityError:
            continue
    return out


def suspended(obj: Mapping[str, Any] | None) -> bool:
    spec = obj.get("spec") if obj is not None else None
    return isinstance(spec, Mapping) and spec.get("suspend") is True


def starting(render: Render, live: Live, kueue_served: bool | None = None) -> list[dict[str, Any]]:
    """The rendered TrainJobs whose pods the sync starts: new ones, and live suspended ones it resumes;
    suspended ones start none (pkg/apis/trainer/v1alpha1/trainjob_types.go, ``suspend``), but where
    Kueue is served (``kueue_served``, else what was read) one labelled with a queue is Kueue's to start:
    Kueue suspends every such job itself and unsuspends it on admission, whatever the sync wrote
    (sigs.k8s.io/kueue/pkg/controller/jobframework/reconciler.go at v0.17.0)."""
    existing = _live_trainjobs(live)
    served = bool(live.kueue.version) if kueue_served is None else kueue_served
    out = []
    for trainjob in render.trainjobs():
        old = existing.get(f"{namespace_of(trainjob)}/{name_of(trainjob)}")
        held = suspended(trainjob) and not (served and queue_name(trainjob) is not None)
        if held or (old is not None and not suspended(old)):
            continue
        out.append(trainjob)
    return out


def quota_exceeded(render: Render, live: Live) -> list[Finding]:
    """Per ResourceQuota and resource: what the TrainJobs the sync starts need with all their pods
    running (the quota evaluator's pod usage, ``pod_usage``, on ``explain``'s pods) against ``hard``
    minus the live ``used`` (k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go:
    a pod whose usage would take ``used`` above ``hard`` is refused). ``count/trainjobs...``
    counts the TrainJobs themselves, which the API server then refuses to create."""
    by_namespace: dict[str, list[dict[str, Any]]] = {}
    for trainjob in starting(render, live):
        by_namespace.setdefault(namespace_of(trainjob), []).append(trainjob)
    out = []
    for raw in live.quotas:
        namespace = namespace_of(raw)
        trainjobs = by_namespace.get(namespace, [])
        if not trainjobs:
            continue
        try:
            quota = read_quota(Item(yn.from_python(raw)))
        except ValueError:
            continue
        status = raw.get("status")
        used = _quantities(status.get("used") if isinstance(status, Mapping) else None)
        out += _over_quota(quota, namespace, name_of(raw), trainjobs, used, render.views)
    return out


def queue_exceeded(render: Render, live: Live) -> list[Finding]:
    """The queued TrainJobs the sync starts that Kueue would not admit (``queues.exceeded``), and the Kueue
    release whose rule sized them."""
    started = starting(render, live)
    views = render.views if render.kueue_views is None else render.kueue_views
    return [*exceeded(started, views, live.kueue), *release_followed(started, views, live.kueue)]


def _over_quota(
    quota: Quota,
    namespace: str,
    name: str,
    trainjobs: list[dict[str, Any]],
    used: Mapping[str, Quantity],
    views: Mapping[str, TrainJobPods],
) -> list[Finding]:
    needed: dict[str, Quantity] = {}
    counted: dict[str, list[str]] = {}
    for trainjob in trainjobs:
        view = views.get(f"{namespace}/{name_of(trainjob)}")
        usage: dict[str, Quantity] = {f"count/trainjobs.{TRAINER_GROUP}": Quantity(1)}
        if view is not None:
            for job in view.jobs:
                if not job.pods or scopes_match(quota, job) is not True:
                    continue
                for key, q in pod_usage(job.pod_requests, job.pod_limits).items():
                    usage[key] = usage[key] + q * job.pods if key in usage else q * job.pods
        for key, q in usage.items():
            if key in quota.hard and not q.is_zero():
                needed[key] = needed[key] + q if key in needed else q
                counted.setdefault(key, []).append(name_of(trainjob))
    out = []
    for key in sorted(needed):
        hard = quota.hard[key]
        in_use = used.get(key, Quantity(0))
        left = hard + in_use * -1 if hard > in_use else Quantity(0)
        if not needed[key] > left:
            continue
        what = "are refused" if key.startswith("count/") else "stay unscheduled: the quota refuses the pods"
        out.append(
            Finding(
                "quota-exceeded",
                "error",
                object_name("ResourceQuota", namespace, name),
                f"the TrainJobs this sync starts need {key} {needed[key].canonical()} with all their pods running "
                f"({_names(counted[key])}), and the quota has {left.canonical()} left (hard {hard.canonical()}, "
                f"used {in_use.canonical()}): those beyond it {what}. Lower the requests, raise the quota, or "
                "start fewer at once (spec.suspend: true on some)",
            )
        )
    return out


def runtime_drift(render: Render, live: Live) -> list[Finding]:
    """A copy of a runtime the render read (``--runtimes`` or a local-config copy) that differs from the
    one installed, by spec and labels, once the copy has the CRD's defaults: the render sized the
    derived runtimes and checked the policy on the copy, the cluster runs the installed one."""
    out = []
    for copy_obj, where in render.copies:
        key = runtime_key(copy_obj)
        installed = live.runtimes.get(key)
        if installed is None:
            continue
        fields = runtime_fields(copy_obj, installed, live)
        if not fields:
            continue
        out.append(
            Finding(
                "runtime-drift",
                "warning",
                key_name(key),
                f"the copy read from {where} differs from the runtime installed in the cluster at "
                f"{compare.listed(fields)}: the render derived runtimes from the copy, the cluster runs the "
                "installed one. Update the copy (or drop --runtimes: check then reads the installed runtimes)",
            )
        )
    return out


def crd_name(kind: str) -> str:
    return f"{kind.lower()}s.{TRAINER_GROUP}"


def _schema(kind: str, version: str, live: Live) -> Mapping[str, Any] | None:
    return compare.version_schema(live.crds.get(crd_name(kind)), version)


def _version(obj: Mapping[str, Any]) -> str:
    return str(obj.get("apiVersion") or "").rpartition("/")[2]


def runtime_fields(new: Mapping[str, Any], old: Mapping[str, Any], live: Live) -> list[str]:
    """The fields of spec and metadata.labels where ``new`` (defaulted by its CRD) differs from ``old``."""
    schema = _schema(str(new.get("kind")), _version(new), live)
    defaulted = compare.defaulted({"spec": new.get("spec")}, schema)
    fields = compare.differing(defaulted.get("spec"), old.get("spec"), "spec")
    labels = {k: v for k, v in labels_of(new).items()}
    return fields + compare.differing(labels, dict(labels_of(old)), "metadata.labels")


def snapshot_kept(render: Render, live: Live) -> list[Finding]:
    """A live TrainJob that has its runtime snapshot (its first reconcile copied the runtime into the
    ConfigMap ``<trainjob>-runtime-snapshot``, which later reconciles read: pkg/runtime/core/snapshot.go)
    and whose runtime the render gives other content: it keeps the snapshot, new TrainJobs get the new
    content (what ``explain`` shows)."""
    applied = render.runtimes()
    copies = {runtime_key(c): c for c, _ in render.copies}
    defaulted: dict[RuntimeKey, Any] = {}
    compared: dict[tuple[RuntimeKey, int], list[str]] = {}  # TrainJobs on one runtime share snapshots
    out = []
    for trainjob in live.trainjobs:
        ref = runtime_ref(trainjob)
        snapshot = live.snapshots.get(f"{namespace_of(trainjob)}/{name_of(trainjob)}")
        if ref is None or not isinstance(snapshot, Mapping):
            continue
        key = ref.key(namespace_of(trainjob))
        new = applied.get(key) or copies.get(key)
        if new is None:
            continue
        if key not in defaulted:
            schema = _schema(str(new.get("kind")), _version(new), live)
            defaulted[key] = compare.defaulted({"spec": new.get("spec")}, schema)["spec"]
        if (key, id(snapshot)) not in compared:
            compared[(key, id(snapshot))] = compare.differing(defaulted[key], snapshot.get("spec"))
        fields = compared[(key, id(snapshot))]
        if not fields:
            continue
        changed = ["spec" + _dot(f) for f in fields]
        out.append(
            Finding(
                "snapshot-kept",
                "info",
                _trainjob_name(trainjob),
                f"runs on its snapshot of {ref.display()} (ConfigMap {name_of(trainjob)}-runtime-snapshot), which "
                f"the render's content of that runtime changes at {compare.listed(changed)}: "
                "this TrainJob keeps the snapshot, only new TrainJobs get the change. Recreate it to give it the "
                "new content",
            )
        )
    return out


def _dot(path: str) -> str:
    return path if path.startswith("[") else f".{path}"


def forbidden(denials: Sequence[Denial], identity: str) -> list[Finding]:
    """What a SelfSubjectAccessReview (authorization.k8s.io/v1) did not allow the identity that syncs:
    the API server refuses those requests, and the sync fails on them."""
    out = []
    for d in denials:
        where = f" in namespace {d.namespace}" if d.namespace else " (cluster-scoped)"
        what = {"delete": "pruning", "get": "a client-side apply (kubectl apply, Argo CD's default) of"}.get(
            d.verb, "applying"
        )
        reason = f": {d.reason}" if d.reason else ""
        out.append(
            Finding(
                "forbidden",
                "error",
                object_name(d.kind, d.namespace, d.objects[0]),
                f"{identity} may not {d.verb} {d.resource}{where} (SelfSubjectAccessReview{reason}), so {what} "
                f"{_names(list(d.objects))} fails. Grant it that verb (a Role or ClusterRole bound to it), or sync "
                "as an identity that has it",
            )
        )
    return out
