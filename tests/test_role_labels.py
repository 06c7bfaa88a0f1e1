"""Roles come from the runtime (issue 46): a runtime patch that changes the label Kubeflow Trainer decides a
replicated job's role by (``trainer.kubeflow.org/trainjob-ancestor-step`` on the job template) is refused;
the label elsewhere, or with the runtime's own value, passes and changes no role. What Trainer itself does
with such a patch is shown on the control plane (tests/cluster/test_role_labels.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.kit import build
from tests.support import Rendered, render, trainer_runtime, trainjob

ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
JOB_LABELS = "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.metadata.labels"
CAPS = {"container": {"memory": "16Gi"}, "initializer": {"memory": "256Gi"}}


def policy() -> dict[str, Any]:
    return build.function_config("policy", maxPerRole=CAPS)


def runtime() -> dict[str, Any]:
    """The trainer job ``node`` with a second container, ``helper``: a container to the policy (role container)."""
    out = trainer_runtime("rt", [])
    pod = out["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["containers"].append({"name": "helper", "image": "helper"})
    return out


def relabelling(
    value: str | None, site: str = "job", key: str = ANCESTOR, memory: str = "128Gi", job: str = "node"
) -> dict[str, Any]:
    """A TrainJob that sizes ``helper`` to ``memory`` and writes ``key: value`` on the labels at ``site``:
    ``job`` (the job template, where Trainer reads it), ``pod`` (the pod template) or ``jobset``."""
    replicated: dict[str, Any] = {
        "name": job,
        "template": {
            "spec": {
                "template": {"spec": {"containers": [{"name": "helper", "resources": {"limits": {"memory": memory}}}]}}
            }
        },
    }
    template: dict[str, Any] = {"spec": {"replicatedJobs": [replicated]}}
    if value is not None:
        labels = {"labels": {key: value}}
        if site == "job":
            replicated["template"]["metadata"] = labels
        elif site == "pod":
            replicated["template"]["spec"]["template"]["metadata"] = labels
        else:
            template["metadata"] = labels
    patch = {"manager": "user.example.com/me", "trainingRuntimeSpec": {"template": template}}
    out = trainjob("tj", "rt", [patch])
    out["metadata"]["namespace"] = "team-a"
    return out


def errors(out: Rendered) -> list[tuple[str, str]]:
    return [(r.get("field", {}).get("path", ""), r["message"]) for r in out.results if r["severity"] == "error"]


def test_a_trainer_relabelled_as_an_initializer_is_refused() -> None:
    """The issue's case: under the initializer cap, a 128Gi helper would pass the 16Gi container cap."""
    for value in ("dataset-initializer", "model-initializer"):
        out = render([runtime(), relabelling(value)], policy())
        assert out.code == 1
        assert errors(out) == [
            (
                f"{JOB_LABELS}[{ANCESTOR}]",
                f"this patch sets {ANCESTOR}: {value} on replicated job 'node', which ClusterTrainingRuntime rt "
                "gives 'trainer': Kubeflow Trainer reads it on the job template after merging the patches to decide "
                "the job's role (newRuntimeInfo, pkg/runtime/core/trainingruntime.go; Initializer and Trainer, "
                f"pkg/runtime/framework/plugins/jobset/builder.go), so the patch would make the job a {value} job "
                "to Trainer and to the platform's policy. Roles come from the runtime: remove the label from the patch",
            )
        ], out.results
        (result,) = [r for r in out.results if r["severity"] == "error"]
        assert result["field"]["currentValue"] == value and result["field"]["proposedValue"] == "trainer"
        assert out.of_kind("TrainJob")[0]["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"][
            "replicatedJobs"
        ][0]["template"]["metadata"] == {"labels": {ANCESTOR: value}}, "returned as written"
    unlabelled = render([runtime(), relabelling(None)], policy())
    assert (
        unlabelled.code == 1 and "above the policy's maximum for the container role, 16Gi" in errors(unlabelled)[0][1]
    )


def test_a_runtime_free_trainjob_that_writes_the_label_is_refused() -> None:
    trainjob_only = relabelling("trainer", memory="")
    pod = trainjob_only["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
    del pod["template"]["spec"]
    out = render([trainjob_only])
    assert out.code == 1
    ((path, message),) = errors(out)
    assert path == f"{JOB_LABELS}[{ANCESTOR}]"
    assert message.startswith(f"this patch sets {ANCESTOR}: trainer on replicated job 'node', and the runtime is not")
    assert message.endswith("Remove the label from the patch (the runtime's own label decides the role)")


ROLE_VALUES = st.sampled_from(["trainer", "dataset-initializer", "model-initializer", "", "Trainer", "launcher"])
OTHER_KEYS = st.sampled_from(
    [
        "trainer.kubeflow.org/trainjob-ancestor",
        "trainer.kubeflow.org/trainjob-ancestor-step-",
        "jobset.sigs.k8s.io/replicatedjob-name",
        "app",
    ]
)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    value=ROLE_VALUES,
    site=st.sampled_from(["job", "pod", "jobset"]),
    key=st.one_of(st.just(ANCESTOR), OTHER_KEYS),
    runtime_value=st.sampled_from(["trainer", "dataset-initializer", None]),
)
def test_only_a_changed_role_label_on_the_job_template_is_refused(
    value: str, site: str, key: str, runtime_value: str | None
) -> None:
    """Generated label keys, values, patch sites and runtime labels: refused exactly when the patch writes
    the ancestor label on the job template with another value than the runtime's; otherwise the policy
    sees the runtime's role (the helper's 128Gi is held against the container cap, 16Gi, unless the runtime
    itself makes the job an initializer)."""
    rt = runtime()
    labels = rt["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["metadata"]["labels"]
    if runtime_value is None:
        del labels[ANCESTOR]
    else:
        labels[ANCESTOR] = runtime_value
    if runtime_value == "dataset-initializer":  # the runtime webhook's rule: such a job has that container
        pod = rt["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
        pod["containers"].append({"name": "dataset-initializer", "image": "init"})
    out = render([copy.deepcopy(rt), relabelling(value, site, key)], policy())
    refused = [m for p, m in errors(out) if p == f"{JOB_LABELS}[{ANCESTOR}]"]
    changes_role = site == "job" and key == ANCESTOR and value != runtime_value
    assert bool(refused) == changes_role, out.results
    if changes_role:
        return
    role = "initializer" if runtime_value == "dataset-initializer" else "container"
    above = "limits.memory 128Gi (patch user.example.com/me) of container 'helper' of replicated job 'node' is above"
    said = [m for _, m in errors(out) if m.startswith(above)]
    assert (out.code, len(said)) == ((0, 0) if role == "initializer" else (1, 1)), out.results
