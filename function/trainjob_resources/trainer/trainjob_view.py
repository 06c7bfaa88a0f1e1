"""A TrainJob as the function reads it, without building pydantic models (start-up time: the
function runs on every render, and importing pydantic costs more than a small render).

The classes are views of the ``models`` classes (the TrainJob API this function reads): each is
named as its model with ``View`` after it, with the same fields by the same names. The direct
reading takes only values that ``models`` would accept unchanged (plain dicts with string keys,
the exact types of each field, no field given by its Python name); any other TrainJob (a value
pydantic coerces, such as ``numNodes: "2"``, or rejects) is validated by those models, so results
and error messages are theirs in every case, as ``runtime_view`` does for runtimes.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

from ..values.violations import Violation


class _Unusual(Exception):
    """A value the direct reading leaves to the pydantic models."""


# A field's kind: "str", "str?" (or None), "int?", "strmap?" (dict[str, str]), "anymap?"
# (dict[str, Any]), "anylist?", "strlist?", "any", a view class (a nested model, or None) or a
# one-class tuple (a list of that model, or None).
Kind = Any
Schema = dict[str, tuple[str, Kind]]


class _View:
    """One model's fields; ``model_fields_set`` and ``model_extra`` as pydantic has them. A field
    not given is the class's attribute (its default): a view is never changed."""

    _schema: ClassVar[Schema] = {}  # alias -> (field name, kind)
    _required: ClassVar[frozenset[str]] = frozenset()  # aliases
    _not_null: ClassVar[frozenset[str]] = frozenset()  # aliases that may be absent (a default) but not null
    _defaults: ClassVar[dict[str, Any]] = {}  # field name -> default, when not None
    _by_name: ClassVar[frozenset[str]] = frozenset()  # field names that differ from their alias
    _open: ClassVar[bool] = False  # extra fields allowed (kept in model_extra)

    model_fields_set: set[str]
    model_extra: dict[str, Any] | None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._by_name = frozenset(name for alias, (name, _) in cls._schema.items() if name != alias)
        strings = {alias for alias, (_, kind) in cls._schema.items() if kind == "str"}
        cls._not_null = cls._not_null | cls._required | strings
        for name, _ in cls._schema.values():
            setattr(cls, name, cls._defaults.get(name))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({vars(self)!r})"


def _build(cls: type[_View], value: Any, trusted: bool) -> Any:
    """``trusted``: ``value`` is a validated model's dump by alias, so a Python name in it is an
    extra field of an open model."""
    if type(value) is not dict:
        raise _Unusual
    schema = cls._schema
    attrs: dict[str, Any] = {}
    extra: dict[str, Any] | None = {} if cls._open else None
    for key, entry in value.items():
        field = schema.get(key)
        if field is None:
            if extra is None or type(key) is not str or (not trusted and key in cls._by_name):
                raise _Unusual  # pydantic refuses it, or reads it as the field of that Python name
            extra[key] = entry
            continue
        name, kind = field
        if entry is None:
            if key in cls._not_null:
                raise _Unusual
            attrs[name] = None
        elif kind == "str" or kind == "str?":
            if type(entry) is not str:
                raise _Unusual
            attrs[name] = entry
        elif kind == "any":
            attrs[name] = entry
        else:
            attrs[name] = _convert(kind, entry, trusted)
    if cls._required and not cls._required.issubset(value):
        raise _Unusual
    view = cls.__new__(cls)
    fields_set = set(attrs)
    if extra:
        fields_set.update(extra)  # pydantic counts extra fields as set
    attrs["model_fields_set"] = fields_set
    attrs["model_extra"] = extra
    view.__dict__ = attrs
    return view


def _convert(kind: Kind, value: Any, trusted: bool) -> Any:
    """A value that is not None, of a kind other than str and any."""
    if type(kind) is tuple:
        if type(value) is not list:
            raise _Unusual
        return [_build(kind[0], entry, trusted) for entry in value]
    if type(kind) is not str:
        return _build(kind, value, trusted)
    if kind == "int?":
        if type(value) is not int:
            raise _Unusual
        return value
    if kind == "strmap?":
        if type(value) is not dict or any(type(k) is not str or type(v) is not str for k, v in value.items()):
            raise _Unusual
        return dict(value)
    if kind == "anymap?":
        if type(value) is not dict or any(type(k) is not str for k in value):
            raise _Unusual
        return dict(value)
    if kind == "anylist?":
        if type(value) is not list:
            raise _Unusual
        return list(value)
    assert kind == "strlist?", kind
    if type(value) is not list or any(type(v) is not str for v in value):
        raise _Unusual
    return list(value)


class ObjectMetaPatchView(_View):
    _schema: ClassVar[Schema] = {
        "annotations": ("annotations", "strmap?"),
        "labels": ("labels", "strmap?"),
        "finalizers": ("finalizers", "strlist?"),
        "name": ("name", "str?"),
        "namespace": ("namespace", "str?"),
    }
    annotations: dict[str, str] | None
    labels: dict[str, str] | None
    finalizers: list[str] | None
    name: str | None
    namespace: str | None


class ResourceClaimView(_View):
    _schema: ClassVar[Schema] = {"name": ("name", "str"), "request": ("request", "str?")}
    _required = frozenset({"name"})
    name: str
    request: str | None


class ResourceRequirementsPatchView(_View):
    _schema: ClassVar[Schema] = {
        "limits": ("limits", "anymap?"),
        "requests": ("requests", "anymap?"),
        "claims": ("claims", (ResourceClaimView,)),
    }
    limits: dict[str, Any] | None
    requests: dict[str, Any] | None
    claims: list[ResourceClaimView] | None


class ContainerPatchView(_View):
    _schema: ClassVar[Schema] = {
        "name": ("name", "str"),
        "env": ("env", "anylist?"),
        "volumeMounts": ("volume_mounts", "anylist?"),
        "securityContext": ("security_context", "anymap?"),
        "resources": ("resources", ResourceRequirementsPatchView),
    }
    _required = frozenset({"name"})
    name: str
    env: list[Any] | None
    volume_mounts: list[Any] | None
    security_context: dict[str, Any] | None
    resources: ResourceRequirementsPatchView | None


class PodSpecPatchView(_View):
    _schema: ClassVar[Schema] = {
        "affinity": ("affinity", "anymap?"),
        "containers": ("containers", (ContainerPatchView,)),
        "imagePullSecrets": ("image_pull_secrets", "anylist?"),
        "initContainers": ("init_containers", (ContainerPatchView,)),
        "nodeSelector": ("node_selector", "strmap?"),
        "resourceClaims": ("resource_claims", "anylist?"),
        "schedulingGates": ("scheduling_gates", "anylist?"),
        "securityContext": ("security_context", "anymap?"),
        "serviceAccountName": ("service_account_name", "str?"),
        "terminationGracePeriodSeconds": ("termination_grace_period_seconds", "int?"),
        "tolerations": ("tolerations", "anylist?"),
        "volumes": ("volumes", "anylist?"),
    }
    containers: list[ContainerPatchView] | None
    init_containers: list[ContainerPatchView] | None


class PodTemplatePatchView(_View):
    _schema: ClassVar[Schema] = {"metadata": ("metadata", ObjectMetaPatchView), "spec": ("spec", PodSpecPatchView)}
    metadata: ObjectMetaPatchView | None
    spec: PodSpecPatchView | None


class JobSpecPatchView(_View):
    _schema: ClassVar[Schema] = {"template": ("template", PodTemplatePatchView)}
    template: PodTemplatePatchView | None


class JobTemplatePatchView(_View):
    _schema: ClassVar[Schema] = {"metadata": ("metadata", ObjectMetaPatchView), "spec": ("spec", JobSpecPatchView)}
    metadata: ObjectMetaPatchView | None
    spec: JobSpecPatchView | None


class ReplicatedJobPatchView(_View):
    _schema: ClassVar[Schema] = {"name": ("name", "str"), "template": ("template", JobTemplatePatchView)}
    _required = frozenset({"name"})
    name: str
    template: JobTemplatePatchView | None


class JobSetSpecPatchView(_View):
    _schema: ClassVar[Schema] = {"replicatedJobs": ("replicated_jobs", (ReplicatedJobPatchView,))}
    replicated_jobs: list[ReplicatedJobPatchView] | None


class JobSetTemplatePatchView(_View):
    _schema: ClassVar[Schema] = {"metadata": ("metadata", ObjectMetaPatchView), "spec": ("spec", JobSetSpecPatchView)}
    metadata: ObjectMetaPatchView | None
    spec: JobSetSpecPatchView | None


class TrainingRuntimeSpecPatchView(_View):
    _schema: ClassVar[Schema] = {"template": ("template", JobSetTemplatePatchView)}
    template: JobSetTemplatePatchView | None


class RuntimePatchView(_View):
    _schema: ClassVar[Schema] = {
        "manager": ("manager", "str"),
        "time": ("time", "str?"),
        "trainingRuntimeSpec": ("training_runtime_spec", TrainingRuntimeSpecPatchView),
    }
    _required = frozenset({"manager"})
    manager: str
    time: str | None
    training_runtime_spec: TrainingRuntimeSpecPatchView | None


class RuntimeRefView(_View):
    _schema: ClassVar[Schema] = {"name": ("name", "str"), "apiGroup": ("api_group", "str?"), "kind": ("kind", "str?")}
    _required = frozenset({"name"})
    name: str
    api_group: str | None
    kind: str | None


class TrainerView(_View):
    _schema: ClassVar[Schema] = {
        "numNodes": ("num_nodes", "int?"),
        "resourcesPerNode": ("resources_per_node", ResourceRequirementsPatchView),
    }
    _open = True
    num_nodes: int | None
    resources_per_node: ResourceRequirementsPatchView | None


class TrainJobSpecView(_View):
    _schema: ClassVar[Schema] = {
        "runtimeRef": ("runtime_ref", RuntimeRefView),
        "trainer": ("trainer", TrainerView),
        "runtimePatches": ("runtime_patches", (RuntimePatchView,)),
        "activeDeadlineSeconds": ("active_deadline_seconds", "any"),
        "initializer": ("initializer", "any"),
        "managedBy": ("managed_by", "any"),
        "suspend": ("suspend", "any"),
    }
    _required = frozenset({"runtimeRef"})
    runtime_ref: RuntimeRefView
    trainer: TrainerView | None
    runtime_patches: list[RuntimePatchView] | None


class ObjectMetaView(_View):
    _schema: ClassVar[Schema] = {"name": ("name", "str"), "namespace": ("namespace", "str")}
    _defaults: ClassVar[dict[str, Any]] = {"name": "", "namespace": ""}
    _open = True
    name: str
    namespace: str


_EMPTY_META: Final[ObjectMetaView] = _build(ObjectMetaView, {}, trusted=True)


class TrainJobView(_View):
    _schema: ClassVar[Schema] = {"metadata": ("metadata", ObjectMetaView), "spec": ("spec", TrainJobSpecView)}
    _required = frozenset({"spec"})
    _not_null = frozenset({"metadata"})
    _defaults: ClassVar[dict[str, Any]] = {"metadata": _EMPTY_META}
    _open = True
    metadata: ObjectMetaView
    spec: TrainJobSpecView


_DUMPED: Final = ("limits", "requests")


def parse_trainjob(value: Any) -> tuple[TrainJobView | None, list[Violation]]:
    """The TrainJob as the function reads it, or a violation for every field the models reject."""
    try:
        trainjob: TrainJobView = _build(TrainJobView, value, trusted=False)
        return trainjob, []
    except _Unusual:
        pass
    from . import models

    model, violations = models.parse_trainjob(value)
    if model is None:
        return None, violations
    trainjob = _build(TrainJobView, model.model_dump(by_alias=True, exclude_unset=True), trusted=True)
    return trainjob, []


def resources_per_node(trainjob: TrainJobView) -> dict[str, Any] | None:
    """``spec.trainer.resourcesPerNode`` as plain data (nulls as written), or None; what the model's
    ``model_dump(by_alias=True, exclude_none=True)`` gives."""
    trainer = trainjob.spec.trainer
    if trainer is None or trainer.resources_per_node is None:
        return None
    patch = trainer.resources_per_node
    out: dict[str, Any] = {}
    for key in _DUMPED:
        section = getattr(patch, key)
        if section is not None:
            out[key] = dict(section)
    if patch.claims is not None:
        out["claims"] = [
            {"name": c.name} if c.request is None else {"name": c.name, "request": c.request} for c in patch.claims
        ]
    return out
