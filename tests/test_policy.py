"""Namespace policy (LimitRange, ResourceQuota) and the functionConfig's platform policy, through the function."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from trainjob_resources.cli import explain as explain_cli
from trainjob_resources.krm.resource_list import Item, ResourceList
from trainjob_resources.options.config import ConfigError, FunctionConfig, parse_config
from trainjob_resources.yamltext.yamlnodes import from_python

from tests.kit import build
from tests.support import Rendered, container_patch, render, trainer_runtime, trainjob

SIDECAR = (
    "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]"
    ".template.spec.template.spec.initContainers[0].resources"
)
PER_NODE = "spec.trainer.resourcesPerNode"


def runtime(init_containers: list[dict[str, Any]] | None = None, **pod: Any) -> dict[str, Any]:
    """A ClusterTrainingRuntime whose trainer job has a data-loader sidecar (unless given others)."""
    inits = (
        init_containers
        if init_containers is not None
        else [
            {
                "name": "data-loader",
                "image": "loader",
                "restartPolicy": "Always",
                "resources": {"requests": {"cpu": "1", "memory": "8Gi"}, "limits": {"cpu": "2", "memory": "8Gi"}},
            }
        ]
    )
    return trainer_runtime("rt", inits, pod=pod)


def job(
    resources: dict[str, Any] | None = None,
    num_nodes: int = 4,
    per_node: dict[str, Any] | None = None,
    namespace: str = "team-a",
) -> dict[str, Any]:
    """A TrainJob that sizes the data-loader sidecar (64Gi unless told) and the trainer (resourcesPerNode)."""
    sidecar = {"limits": {"memory": "64Gi"}, "requests": {"memory": "64Gi"}} if resources is None else resources
    patch = container_patch("node", "initContainers", {"name": "data-loader", "resources": sidecar})
    trainer = {
        "numNodes": num_nodes,
        "resourcesPerNode": per_node or {"limits": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "4"}},
    }
    return trainjob("tj", "rt", [patch], namespace=namespace, trainer=trainer)


def limit_range(*items: dict[str, Any], name: str = "caps", namespace: str = "team-a") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"limits": list(items)},
    }


def quota(hard: dict[str, Any], name: str = "compute", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": name, "namespace": "team-a"},
        "spec": {"hard": hard, **spec},
    }


def config_map(**data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "policy"}, "data": data}


def typed(**spec: Any) -> dict[str, Any]:
    return build.function_config("policy", **spec)


def findings(out: Rendered, severity: str = "error") -> list[tuple[str, str]]:
    return [(r.get("field", {}).get("path", ""), r["message"]) for r in out.results if r["severity"] == severity]


def info(out: Rendered) -> list[str]:
    return [r["message"] for r in out.results if r["severity"] == "info"]


# LimitRange


def test_limit_range_max_exceeded_by_an_overridden_sidecar() -> None:
    out = render([runtime(), job(), limit_range({"type": "Container", "max": {"memory": "48Gi"}})])
    assert out.code == 1
    assert findings(out) == [
        (
            f"{SIDECAR}.limits.memory",
            "LimitRange team-a/caps: maximum memory usage per Container is 48Gi, but limit is 64Gi "
            "(sidecar 'data-loader' of replicated job 'node'; the limit is from patch user.example.com/me)",
        )
    ]
    (error,) = out.errors()
    assert error["resourceRef"]["kind"] == "TrainJob" and error["field"]["currentValue"] == "64Gi"
    # The TrainJob is returned as written.
    assert out.of_kind("TrainJob")[0]["spec"]["runtimeRef"] == {"name": "rt"}


def test_within_limits_renders_and_reports_the_numbers() -> None:
    out = render([runtime(), job(), limit_range({"type": "Container", "max": {"memory": "64Gi"}})])
    assert out.code == 0, out.results
    assert info(out)[0] == (
        "requests per pod: node: 4 pods x (cpu 9, memory 96Gi, nvidia.com/gpu 4); "
        "total requests: cpu 36, memory 384Gi, nvidia.com/gpu 16"
    )


def test_other_namespaces_and_kinds_do_not_apply() -> None:
    other = limit_range({"type": "Container", "max": {"memory": "1Gi"}}, namespace="team-b")
    not_core = {**limit_range({"type": "Container", "max": {"memory": "1Gi"}}), "apiVersion": "example.com/v1"}
    assert render([runtime(), job(), other, not_core]).code == 0


@pytest.mark.parametrize(
    ("config", "severity"),
    [
        (config_map(namespacePolicy="warning"), "warning"),
        (typed(namespacePolicy="warning"), "warning"),
        (typed(namespacePolicy="off"), None),
    ],
)
def test_namespace_policy_switch(config: dict[str, Any], severity: str | None) -> None:
    out = render([runtime(), job(), limit_range({"type": "Container", "max": {"memory": "48Gi"}})], config)
    assert out.code == 0
    got = [r["severity"] for r in out.results if "LimitRange" in r["message"]]
    assert got == ([severity] if severity else [])


def test_min_and_ratio_per_container() -> None:
    lr = limit_range({"type": "Container", "min": {"memory": "1Gi"}, "maxLimitRequestRatio": {"cpu": "1500m"}})
    out = render([runtime(), job({"requests": {"memory": "512Mi"}, "limits": {"memory": "8Gi"}}), lr])
    assert findings(out) == [
        (
            f"{SIDECAR}.requests.memory",
            "LimitRange team-a/caps: minimum memory usage per Container is 1Gi, but request is 512Mi "
            "(sidecar 'data-loader' of replicated job 'node'; the request is from patch user.example.com/me)",
        ),
        (
            "spec.runtimeRef",
            "LimitRange team-a/caps: cpu max limit to request ratio per Container is 1500m, but provided ratio "
            "is 2.000000 (sidecar 'data-loader' of replicated job 'node'; the limit is from runtime)",
        ),
    ]


def test_pod_limits_use_the_sidecar_formula() -> None:
    # A sidecar (8Gi) runs next to the regular init container (60Gi) after it: the pod needs 68Gi,
    # where the LimitRanger before native sidecars would have said max(60Gi, 8Gi + 4Gi).
    inits = [
        {"name": "sidecar", "image": "s", "restartPolicy": "Always", "resources": {"limits": {"memory": "8Gi"}}},
        {"name": "unpack", "image": "u", "resources": {"limits": {"memory": "60Gi"}}},
    ]
    rt = runtime(inits)
    tj = trainjob("tj", "rt", [], namespace="team-a")
    tj["spec"]["trainer"] = {"resourcesPerNode": {"limits": {"memory": "4Gi"}}}
    out = render([rt, tj, limit_range({"type": "Pod", "max": {"memory": "64Gi"}})])
    assert findings(out) == [
        (
            "spec.runtimeRef",
            "LimitRange team-a/caps: maximum memory usage per Pod is 64Gi, but limit is 68Gi "
            "(each pod of replicated job 'node')",
        )
    ]
    assert render([rt, tj, limit_range({"type": "Pod", "max": {"memory": "68Gi"}})]).code == 0


def test_limit_range_defaults_apply_as_admission_does() -> None:
    # max defaults the limit; default defaults the request; the trainer container gets both.
    lr = limit_range({"type": "Container", "max": {"cpu": "4"}, "default": {"memory": "1Gi"}})
    tj = job(per_node={"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 1}})
    explained = explain(runtime(), tj, lr)
    (view,) = explained["trainJobs"]
    node = next(c for c in view["replicatedJobs"][0]["containers"] if c["name"] == "node")
    assert node["limits"] == {"cpu": "4", "memory": "1Gi", "nvidia.com/gpu": "1"}
    assert node["requests"] == {"cpu": "4", "memory": "1Gi", "nvidia.com/gpu": "1"}
    # the API server's defaulting (SetDefaults_LimitRangeItem): which field each default came from
    assert node["sources"]["limits"]["cpu"] == "LimitRange team-a/caps (max)"
    assert node["sources"]["requests"]["cpu"] == "LimitRange team-a/caps (max)"
    assert node["sources"]["limits"]["memory"] == "LimitRange team-a/caps"
    assert node["sources"]["requests"]["memory"] == "LimitRange team-a/caps (default)"


def test_a_limit_range_default_request_from_min_says_so() -> None:
    lr = limit_range({"type": "Container", "min": {"cpu": "250m"}, "defaultRequest": {"ephemeral-storage": "1Gi"}})
    bare = runtime([{"name": "data-loader", "image": "loader", "restartPolicy": "Always"}])
    (view,) = explain(bare, job({"limits": {"memory": "8Gi"}}), lr)["trainJobs"]
    loader = next(c for c in view["replicatedJobs"][0]["containers"] if c["name"] == "data-loader")
    assert loader["sources"]["requests"] == {
        "cpu": "LimitRange team-a/caps (min)",
        "ephemeral-storage": "LimitRange team-a/caps",
        "memory": "defaulted from limits",
    }


def test_a_default_limit_below_a_request_is_reported() -> None:
    lr = limit_range({"type": "Container", "default": {"memory": "16Gi"}})
    out = render([runtime(), job({"requests": {"memory": "32Gi"}, "limits": {"memory": None}}), lr])
    assert [p for p, _ in findings(out)] == [f"{SIDECAR}.requests.memory"]
    assert (
        "requests.memory 32Gi (patch user.example.com/me) is above limits.memory 16Gi (LimitRange team-a/caps)"
        in (findings(out)[0][1])
    )


def test_an_unreadable_limit_range_is_a_warning() -> None:
    out = render([runtime(), job(), limit_range({"type": "Container", "max": {"memory": "lots"}})])
    assert out.code == 0
    (warning,) = findings(out, "warning")
    assert warning[1].startswith("LimitRange team-a/caps cannot be read (spec.limits[0].max.memory: ")


# ResourceQuota


def test_a_quota_one_trainjob_can_never_fit() -> None:
    out = render([runtime(), job(), quota({"requests.nvidia.com/gpu": "8"}, name="gpus")])
    assert out.code == 1
    assert findings(out) == [
        (
            f"{PER_NODE}.limits[nvidia.com/gpu]",
            "ResourceQuota team-a/gpus: this TrainJob alone needs requests.nvidia.com/gpu 16 with all its pods "
            "running (4 x 4 (node)), more than the quota's hard 8: it could never be admitted in full",
        )
    ]
    assert render([runtime(), job(num_nodes=2), quota({"requests.nvidia.com/gpu": "8"})]).code == 0


def test_quota_on_pods_and_memory_limits() -> None:
    out = render([runtime(), job(), quota({"pods": "3", "limits.memory": "256Gi"})])
    assert [(p, m.split(": ")[1]) for p, m in findings(out)] == [
        (
            "spec.trainer.numNodes",
            "this TrainJob alone needs pods 4 with all its pods running (4 x 1 (node)), more than the quota's hard 3",
        ),
        (
            f"{SIDECAR}.limits.memory",
            "this TrainJob alone needs limits.memory 384Gi with all its pods running (4 x 96Gi (node)), "
            "more than the quota's hard 256Gi",
        ),
    ]


def test_a_quota_on_cpu_requires_every_container_to_set_it() -> None:
    out = render([runtime(), job(per_node={"limits": {"memory": "32Gi"}}), quota({"limits.cpu": "1000"})])
    assert findings(out) == [
        (
            PER_NODE,
            "ResourceQuota team-a/compute tracks limits.cpu, so admission requires limits.cpu of every container, "
            "and container 'node' of replicated job 'node' has none",
        )
    ]
    lr = limit_range({"type": "Container", "default": {"cpu": "1"}})
    assert (
        render([runtime(), job(per_node={"limits": {"memory": "32Gi"}}), quota({"limits.cpu": "1000"}), lr]).code == 0
    )


@pytest.mark.parametrize(
    ("spec", "applies"),
    [
        (
            {
                "scopeSelector": {
                    "matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]
                }
            },
            False,
        ),
        (
            {
                "scopeSelector": {
                    "matchExpressions": [{"scopeName": "PriorityClass", "operator": "NotIn", "values": ["high"]}]
                }
            },
            True,
        ),
        ({"scopes": ["BestEffort"]}, False),
        ({"scopes": ["NotBestEffort", "NotTerminating"]}, True),
        ({"scopes": ["Terminating"]}, False),
        ({"scopes": ["CrossNamespacePodAffinity"]}, False),
    ],
)
def test_quota_scopes(spec: dict[str, Any], applies: bool) -> None:
    out = render([runtime(), job(), quota({"requests.nvidia.com/gpu": "8"}, **spec)])
    assert out.code == (1 if applies else 0)


def test_a_priority_class_in_the_template_selects_the_quota() -> None:
    selector = {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}
    out = render([runtime(priorityClassName="high"), job(), quota({"requests.cpu": "1"}, scopeSelector=selector)])
    assert out.code == 1


# The functionConfig's platform policy


@pytest.mark.parametrize(
    "config",
    [
        config_map(maxPerContainer="memory=48Gi, nvidia.com/gpu=8"),
        config_map(maxPerContainer='{"memory": "48Gi"}'),
        typed(maxPerContainer={"memory": "48Gi", "nvidia.com/gpu": 8}),
        typed(maxPerContainer="memory=48Gi"),
    ],
)
def test_max_per_container(config: dict[str, Any]) -> None:
    out = render([runtime(), job()], config)
    assert [p for p, _ in findings(out)] == [f"{SIDECAR}.requests.memory", f"{SIDECAR}.limits.memory"]
    assert findings(out)[1][1] == (
        "limits.memory 64Gi (patch user.example.com/me) of sidecar 'data-loader' of replicated job 'node' is above "
        "the policy's maximum per container, 48Gi (functionConfig maxPerContainer)"
    )


def test_a_runtime_value_over_the_maximum_points_at_the_runtime_ref() -> None:
    out = render([runtime(), job({"limits": {"memory": "8Gi"}})], config_map(maxPerContainer="cpu=4"))
    assert findings(out) == [
        (
            f"{PER_NODE}.limits.cpu",
            "limits.cpu 8 (resourcesPerNode) of container 'node' of replicated job 'node' is above the policy's "
            "maximum per container, 4 (functionConfig maxPerContainer)",
        )
    ]
    out = render([runtime(), job({"limits": {"memory": "8Gi"}})], config_map(maxPerContainer="cpu=1500m"))
    assert findings(out)[0] == (
        "spec.runtimeRef",
        "limits.cpu 2 (runtime) of sidecar 'data-loader' of replicated job 'node' is above the policy's "
        "maximum per container, 1500m (functionConfig maxPerContainer)",
    )


def test_allowed_resources_and_gpus_in_sidecars() -> None:
    gpu_sidecar = {"limits": {"nvidia.com/gpu": 1, "memory": "8Gi"}}
    config = config_map(allowedResources='["cpu", "memory", "nvidia.com/gpu"]', allowGpuInSidecars="false")
    out = render(
        [runtime(), job(gpu_sidecar, per_node={"limits": {"nvidia.com/gpu": 2, "example.com/fpga": 1}})], config
    )
    assert findings(out) == [
        (
            f"{SIDECAR}.limits[nvidia.com/gpu]",
            "sidecar 'data-loader' of replicated job 'node' asks for nvidia.com/gpu 1 (patch user.example.com/me), "
            "but the platform lets only regular containers use GPUs "
            "(functionConfig allowGpuInSidecars: false applies to every initContainers entry)",
        ),
        (
            f"{PER_NODE}.limits[example.com/fpga]",
            "container 'node' of replicated job 'node' uses example.com/fpga, which the platform does not allow "
            "(functionConfig allowedResources: cpu, memory, nvidia.com/gpu)",
        ),
    ]
    assert render([runtime(), job(gpu_sidecar)], config_map(allowGpuInSidecars="true")).code == 0


def test_gpu_resource_names_are_configurable() -> None:
    sidecar = {"limits": {"example.com/tpu": 1, "memory": "8Gi"}}
    assert render([runtime(), job(sidecar)], typed(allowGpuInSidecars=False)).code == 0
    out = render([runtime(), job(sidecar)], typed(allowGpuInSidecars=False, gpuResources=["example.com/*"]))
    assert out.code == 1


# maxPerRole (issue 32): "no sidecar above 64Gi" without capping the trainer


def initializer_runtime() -> dict[str, Any]:
    """``runtime()`` with a dataset-initializer job whose container asks for 16Gi, and a runtime-set
    init container that runs to completion."""
    out = runtime(
        [
            {"name": "fetch", "image": "fetch", "resources": {"limits": {"memory": "2Gi"}}},
            *runtime()["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
                "initContainers"
            ],
        ]
    )
    initializer = {
        "name": "dataset-initializer",
        "template": {
            "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "dataset-initializer"}},
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "dataset-initializer",
                                "image": "init",
                                "resources": {"limits": {"memory": "16Gi"}},
                                "volumeMounts": [{"name": "initializer", "mountPath": "/workspace"}],
                            }
                        ],
                        "volumes": [{"name": "initializer", "emptyDir": {}}],
                    }
                }
            },
        },
    }
    out["spec"]["template"]["spec"]["replicatedJobs"].insert(0, initializer)
    return out


SIDECAR_ROLE = "functionConfig maxPerRole.sidecar: restartable init containers"


@pytest.mark.parametrize(
    "config",
    [
        typed(maxPerRole={"sidecar": {"memory": "48Gi"}}),
        typed(maxPerRole="sidecar.memory=48Gi"),
        config_map(maxPerRole="sidecar.memory=48Gi trainer.nvidia.com/gpu=8"),
        config_map(maxPerRole='{"sidecar": {"memory": "48Gi"}}'),
    ],
)
def test_max_per_role_caps_the_sidecar_not_the_trainer(config: dict[str, Any]) -> None:
    # The trainer's 32Gi and 4 GPUs are under no cap; the sidecar's 64Gi is above its role's.
    out = render([runtime(), job(per_node={"limits": {"memory": "128Gi", "nvidia.com/gpu": "4"}})], config)
    assert findings(out) == [
        (
            f"{SIDECAR}.requests.memory",
            "requests.memory 64Gi (patch user.example.com/me) of sidecar 'data-loader' of replicated job 'node' is "
            f"above the policy's maximum for the sidecar role, 48Gi ({SIDECAR_ROLE})",
        ),
        (
            f"{SIDECAR}.limits.memory",
            "limits.memory 64Gi (patch user.example.com/me) of sidecar 'data-loader' of replicated job 'node' is "
            f"above the policy's maximum for the sidecar role, 48Gi ({SIDECAR_ROLE})",
        ),
    ]
    assert render([runtime(), job({"limits": {"memory": "48Gi"}})], config).code == 0, "at the cap is allowed"


def test_max_per_role_names_each_role() -> None:
    caps = {
        "trainer": {"nvidia.com/gpu": "2"},
        "initializer": {"memory": "8Gi"},
        "initContainer": {"memory": "1Gi"},
        "sidecar": {"cpu": "1"},
    }
    out = render([initializer_runtime(), job({"limits": {"memory": "8Gi"}})], typed(maxPerRole=caps))
    assert findings(out) == [
        (
            "spec.runtimeRef",
            "limits.memory 16Gi (runtime) of container 'dataset-initializer' of replicated job 'dataset-initializer' "
            "is above the policy's maximum for the initializer role, 8Gi "
            "(functionConfig maxPerRole.initializer: the containers of the initializer jobs)",
        ),
        (
            "spec.runtimeRef",
            "limits.memory 2Gi (runtime) of initContainer 'fetch' of replicated job 'node' is above the policy's "
            "maximum for the initContainer role, 1Gi "
            "(functionConfig maxPerRole.initContainer: init containers that run to completion)",
        ),
        (
            "spec.runtimeRef",
            "limits.cpu 2 (runtime) of sidecar 'data-loader' of replicated job 'node' is above the policy's "
            f"maximum for the sidecar role, 1 ({SIDECAR_ROLE})",
        ),
        (
            f"{PER_NODE}.limits[nvidia.com/gpu]",
            "limits.nvidia.com/gpu 4 (resourcesPerNode) of container 'node' of replicated job 'node' is above the "
            "policy's maximum for the trainer role, 2 (functionConfig maxPerRole.trainer: the trainer container)",
        ),
    ]


LIMIT_RANGE_FIX = "the LimitRange's default applies only where the container has none"


def test_every_limit_range_default_counts_against_max_per_role() -> None:
    """A LimitRange's default limit beside a request the team set counts too: the LimitRange may be the
    repository's own (issue 46: a 64Gi default beside a 16Gi cap was exempt as "the namespace's choice")."""
    defaults = {"type": "Container", "default": {"memory": "96Gi", "cpu": "4"}}
    bare = runtime([{"name": "data-loader", "image": "loader", "restartPolicy": "Always"}])
    caps = typed(maxPerRole={"sidecar": {"memory": "64Gi", "cpu": "2"}})
    out = render([bare, job({"requests": {"memory": "8Gi"}}), limit_range(defaults)], caps)
    assert findings(out) == [
        (
            f"{SIDECAR}",
            "requests.cpu 4 (LimitRange team-a/caps (default), a default: neither the TrainJob nor the runtime sets "
            "cpu for this container) of sidecar 'data-loader' of replicated job 'node' is above the policy's "
            f"maximum for the sidecar role, 2 ({SIDECAR_ROLE}); set requests.cpu of this container within the cap "
            f"({LIMIT_RANGE_FIX})",
        ),
        (
            f"{SIDECAR}",
            "limits.cpu 4 (LimitRange team-a/caps, a default: neither the TrainJob nor the runtime sets cpu for this "
            "container) of sidecar 'data-loader' of replicated job 'node' is above the policy's maximum for the "
            f"sidecar role, 2 ({SIDECAR_ROLE}); set limits.cpu of this container within the cap ({LIMIT_RANGE_FIX})",
        ),
        (
            f"{SIDECAR}",
            "limits.memory 96Gi (LimitRange team-a/caps, a default: neither the TrainJob nor the runtime sets "
            "limits.memory for this container) of sidecar 'data-loader' of replicated job 'node' is above the "
            f"policy's maximum for the sidecar role, 64Gi ({SIDECAR_ROLE}); set limits.memory of this container "
            f"within the cap ({LIMIT_RANGE_FIX})",
        ),
    ]
    within = job({"requests": {"memory": "8Gi", "cpu": "1"}, "limits": {"memory": "64Gi", "cpu": "2"}})
    assert render([bare, within, limit_range(defaults)], caps).code == 0, "the fix the message names"


@pytest.mark.parametrize(
    ("data", "path", "message"),
    [
        ({"maxPerRole": "sidecar.memory=lots"}, "data.maxPerRole.sidecar.memory", "not a quantity"),
        ({"maxPerRole": "memory=1Gi"}, "data.maxPerRole", "expected role.name=quantity entries"),
        ({"maxPerRole": "launcher.memory=1Gi"}, "data.maxPerRole.launcher", "unknown role 'launcher'; accepted: "),
        ({"maxPerRole": '{"sidecar": "1Gi"}'}, "data.maxPerRole.sidecar", "must be a mapping of resource names"),
        ({"maxPerRole": "{sidecar: {}}"}, "data.maxPerRole", "not a JSON object"),
        ({"maxPerRole": "trainer.nvidia.com/gpu=-1"}, "data.maxPerRole.trainer[nvidia.com/gpu]", "must not be"),
    ],
)
def test_bad_max_per_role_names_the_field(data: dict[str, str], path: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(config_map(**data))
    (violation,) = err.value.violations
    assert (violation.path, message in violation.message) == (path, True), violation
    out = render([runtime(), job()], config_map(**data))
    assert out.code == 1 and out.results[0]["field"]["path"] == path
    assert "accepted: trainer, initializer, container, sidecar, initContainer" in parse_error(
        {"maxPerRole": {"launcher": {"memory": "1Gi"}}}
    )


@pytest.mark.parametrize(
    ("value", "path", "message"),
    [
        (None, "spec.maxPerRole", "Input should be a valid dictionary"),
        (["sidecar"], "spec.maxPerRole", "Input should be a valid dictionary"),
        ({"sidecar": None}, "spec.maxPerRole.sidecar", "must be a mapping of resource names to quantities"),
        ({"sidecar": {"memory": None}}, "spec.maxPerRole.sidecar.memory", "must be a string or number"),
    ],
)
def test_a_typed_max_per_role_of_the_wrong_shape_is_named(value: Any, path: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(typed(maxPerRole=value))
    assert [(v.path, v.message) for v in err.value.violations] == [(path, message)]


def parse_error(spec: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as err:
        parse_config(typed(**spec))
    return str(err.value)


@pytest.mark.parametrize(
    ("data", "path", "message"),
    [
        ({"maxPerContainer": "memory=lots"}, "data.maxPerContainer.memory", "not a quantity"),
        ({"maxPerContainer": "memory"}, "data.maxPerContainer", "expected name=quantity entries"),
        ({"maxPerContainer": "{memory: 1Gi}"}, "data.maxPerContainer", "not a JSON object"),
        ({"maxPerContainer": "nvidia.com/gpu=-1"}, "data.maxPerContainer[nvidia.com/gpu]", "must not be negative"),
        ({"allowedResources": "[cpu]"}, "data.allowedResources", "not a JSON array"),
        ({"allowGpuInSidecars": "maybe"}, "data.allowGpuInSidecars", "must be true or false, got 'maybe'"),
        ({"allowGpuInSidecars": "off"}, "data.allowGpuInSidecars", "must be true or false, got 'off'"),
        ({"allowGpuInSidecars": "no"}, "data.allowGpuInSidecars", "must be true or false, got 'no'"),
        ({"allowGpuInSidecars": "N"}, "data.allowGpuInSidecars", "must be true or false, got 'N'"),
        ({"allowGpuInSidecars": "0"}, "data.allowGpuInSidecars", "must be true or false, got '0'"),
        ({"namespacePolicy": "ignore"}, "data.namespacePolicy", "'error', 'warning' or 'off'"),
    ],
)
def test_bad_policy_options_name_the_field(data: dict[str, str], path: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(config_map(**data))
    (violation,) = err.value.violations
    assert violation.path == path
    assert message in violation.message
    out = render([runtime(), job()], config_map(**data))
    assert out.code == 1 and out.results[0]["field"]["path"] == path


@pytest.mark.parametrize("value", [1, 0, "yes", "True"])
def test_a_typed_boolean_is_true_or_false_only(value: object) -> None:
    # The docs say true/false; pydantic's lax bool would also take these (issue 13).
    with pytest.raises(ConfigError) as err:
        parse_config(typed(allowGpuInSidecars=value))
    (violation,) = err.value.violations
    assert violation.path == "spec.allowGpuInSidecars"
    assert violation.message == f"must be true or false, got {value!r}"
    assert parse_config(typed(allowGpuInSidecars="false")).allow_gpu_in_sidecars is False


def test_policy_options_are_parsed() -> None:
    config = parse_config(config_map(maxPerContainer="memory=131072Mi", allowedResources="cpu memory"))
    assert config.max_per_container == {"memory": "128Gi"}
    assert config.allowed_resources == ("cpu", "memory")
    assert config.is_gpu("nvidia.com/mig-1g.5gb") and config.is_gpu("gpu.intel.com/i915")
    assert not config.is_gpu("example.com/fpga")
    defaults = parse_config(None)
    assert (defaults.namespace_policy, defaults.allow_gpu_in_sidecars, defaults.allowed_resources) == (
        "error",
        True,
        None,
    )
    assert defaults == FunctionConfig() == parse_config({"kind": "ConfigMap", "apiVersion": "v1"})
    assert repr(defaults) == repr(FunctionConfig()) and defaults.model_fields_set == set()


# Pods per replicated job, as the controller counts them


def explain(*documents: dict[str, Any]) -> Any:
    items = [Item(from_python(copy.deepcopy(d))) for d in documents]
    return json.loads(explain_cli.explain_resource_list(ResourceList(items=items), "json").output)


def test_pods_of_mpi_and_other_jobs() -> None:
    rt = runtime([])
    jobs = rt["spec"]["template"]["spec"]["replicatedJobs"]
    launcher = jobs[0]
    launcher["name"] = "launcher"
    node = copy.deepcopy(launcher)
    node["name"] = "node"
    node["template"]["metadata"] = {}
    evaluator = copy.deepcopy(node)
    evaluator.update(name="evaluator", replicas=2)
    evaluator["template"]["spec"].update(parallelism=3, completions=2)
    initializer = copy.deepcopy(node)
    initializer.update(name="dataset-initializer", replicas=3)
    initializer["template"]["metadata"] = {
        "labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "dataset-initializer"}
    }
    initializer["template"]["spec"]["parallelism"] = 2
    jobs[:] = [initializer, node, launcher, evaluator]
    rt["spec"]["mlPolicy"] = {"numNodes": 1, "mpi": {"runLauncherAsNode": True}}
    tj = trainjob("tj", "rt", [])
    tj["spec"]["trainer"] = {"numNodes": 5}
    pods = {j["name"]: j["pods"] for j in explain(rt, tj)["trainJobs"][0]["replicatedJobs"]}
    # evaluator: 2 replicas x parallelism 3; plugins/jobset/jobset.go syncParallelCount overwrites
    # completions with the PodSet's count, so the runtime's completions: 2 caps nothing.
    assert pods == {"dataset-initializer": 2, "node": 4, "launcher": 1, "evaluator": 6}
    rt["spec"]["mlPolicy"]["mpi"]["runLauncherAsNode"] = False
    assert explain(rt, tj)["trainJobs"][0]["replicatedJobs"][1]["pods"] == 5
    del tj["spec"]["trainer"]
    assert explain(rt, tj)["trainJobs"][0]["replicatedJobs"][1]["pods"] == 1


def test_pods_of_the_trainer_job() -> None:
    rt = runtime()
    rt["spec"]["mlPolicy"]["numNodes"] = 3
    tj = trainjob("tj", "rt", [])
    assert explain(rt, tj)["trainJobs"][0]["replicatedJobs"][0]["pods"] == 3
    tj["spec"]["trainer"] = {"numNodes": 6}
    assert explain(rt, tj)["trainJobs"][0]["replicatedJobs"][0]["pods"] == 6
