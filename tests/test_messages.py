"""What users read: each message names the bad value and the fix, stderr shows the proposed value
and file:line, and kpt shows each finding once."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from trainjob_resources.cli.main import results_are_shown
from trainjob_resources.krm.resource_list import Field, FileRef, ResourceRef, Result
from trainjob_resources.kube.quantity import suggestions

from tests.examples import KPT_PACKAGE, kpt_render
from tests.goldens import TESTDATA, run_function

REF = ResourceRef("trainer.kubeflow.org/v1alpha1", "TrainJob", "tj", "team-a")


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("64GB", ["64G", "64Gi"]),
        ("64gb", ["64G", "64Gi"]),
        ("8GiB", ["8Gi"]),
        ("2 cores", ["2", "2000m"]),
        ("0.5cpu", ["0.5", "500m"]),
        ("1gi", ["1Gi"]),
        ("1K", ["1k", "1Ki"]),
        ("512mb", ["512M", "512Mi"]),
        ("100 m", ["100m"]),
        ("1,5", ["1.5"]),
        (" 1", ["1"]),
        ("lots", []),
        ("1.2.3", []),
    ],
)
def test_a_value_that_is_not_a_quantity_gets_the_spellings_it_most_likely_means(written: str, meant: list[str]) -> None:
    assert suggestions(written) == meant


def test_stderr_shows_file_line_and_the_proposed_value_the_message_does_not_say() -> None:
    result = Result("must be a standard resource for containers", "error", REF, Field("spec.x", "CPU", "cpu"))
    assert result.display() == (
        "error: TrainJob team-a/tj: spec.x: must be a standard resource for containers (proposed: cpu)"
    )
    said = Result(
        "'64GB' is not a quantity: did you mean 64G?",
        "error",
        REF,
        Field("spec.x", "64GB", "64G"),
        FileRef("a.yaml", 0, 12),
    )
    assert said.display() == "error: a.yaml:12: TrainJob team-a/tj: spec.x: '64GB' is not a quantity: did you mean 64G?"
    mapping = Result("move it", "error", REF, Field("spec.x", None, {"spec": {"trainer": {}}}), FileRef("a.yaml", 2))
    assert (
        mapping.display()
        == 'error: a.yaml (document 3): TrainJob team-a/tj: spec.x: move it (proposed: {"spec":{"trainer":{}}})'
    )


def test_the_result_file_keeps_the_specs_path_and_index_and_adds_the_line() -> None:
    result = Result("m", "error", REF, Field("spec.x"), file=FileRef("a.yaml", 1, 40))
    assert result.to_python()["file"] == {"path": "a.yaml", "index": 1, "line": 40}
    assert Result("m", file=FileRef("a.yaml", 1)).to_python()["file"] == {"path": "a.yaml", "index": 1}


def test_the_function_echoes_errors_to_stderr_for_kustomize_but_not_for_kpt() -> None:
    data = (TESTDATA / "error" / "invalid-quantity" / "input.yaml").read_bytes()
    assert not results_are_shown(data)
    code, _, err = run_function(data)
    assert code == 1 and "'64GB' is not a quantity" in err
    under_kpt = data.replace(
        b"internal.config.kubernetes.io/path: trainjobs/invalid-quantity.yaml",
        b"internal.config.kubernetes.io/path: trainjobs/invalid-quantity.yaml\n"
        b"      internal.config.kubernetes.io/seqindent: compact",
    )
    assert results_are_shown(under_kpt)
    code, out, err = run_function(under_kpt)
    assert (code, err) == (1, "")
    assert b"is not a quantity: did you mean 64G" in out  # YAML quotes the message's own quotes


def test_kpt_shows_each_error_once(kpt: str, tmp_path: Path) -> None:
    package = tmp_path / "package"
    shutil.copytree(KPT_PACKAGE, package)
    job = package / "trainjob.yaml"
    job.write_text(job.read_text().replace('memory: "64Gi"', 'memory: "64GB"'))
    done = kpt_render(kpt, package)
    assert done.returncode == 1
    shown = done.stderr + done.stdout
    assert shown.count("'64GB' is not a quantity: did you mean 64G") == 2, shown  # limits and requests, once each
    assert "Stderr:" not in shown


def _explained(case: str, output_format: str = "table") -> tuple[str, list[str]]:
    from trainjob_resources.cli.explain import explain_resource_list
    from trainjob_resources.krm import resource_list as krm

    kind = "success" if (TESTDATA / "success" / case).is_dir() else "error"
    explained = explain_resource_list(krm.read((TESTDATA / kind / case / "input.yaml").read_bytes()), output_format)
    return explained.output, explained.messages


def test_explain_says_why_no_trainjob_is_shown_when_all_failed() -> None:
    output, messages = _explained("requests-above-limits")
    assert output == "No TrainJob could be explained (1 in the input):\n- requests-above-limits: 1 error (on stderr)\n"
    assert len(messages) == 1
    output, _ = _explained("cluster-installed-runtime", "markdown")
    assert output.startswith("No TrainJob could be explained (2 in the input):\n- team-a/nightly-eval: its runtime")
    output, _ = _explained("cluster-installed-runtime", "json")
    assert [t["name"] for t in json.loads(output)["notExplained"]] == ["nightly-eval", "finetune"]
    assert json.loads(output)["trainJobs"] == []
    # One refused without its runtime (env for the container node): each says its own reason.
    output, messages = _explained("cluster-installed-runtime-env-for-node", "json")
    reasons = {t["name"]: t["reason"] for t in json.loads(output)["notExplained"]}
    assert reasons["nightly-eval"].startswith("its runtime is not in the input")
    assert reasons["finetune"] == "1 error (on stderr)"
    assert len(messages) == 1 and "must not set env for the node" in messages[0], messages


def test_explain_shows_a_pod_limit_as_unbounded_when_a_container_in_the_sum_has_none() -> None:
    from trainjob_resources.cli.explain import explain_resource_list
    from trainjob_resources.krm import resource_list as krm

    data = (TESTDATA / "success" / "data-loader-64gi" / "input.yaml").read_bytes()
    explained = explain_resource_list(krm.read(data), "json")
    (trainjob,) = json.loads(explained.output)["trainJobs"]
    node = next(j for j in trainjob["replicatedJobs"] if j["name"] == "node")
    limited = {c["name"]: set(c["limits"]) for c in node["containers"]}
    requested = {n for c in node["containers"] for n in (*c["requests"], *c["limits"]) if "/" not in n}
    expected = sorted(n for n in requested if any(n not in names for names in limited.values()))
    assert expected, "the case needs a container without a limit"
    assert node["unboundedLimits"] == expected
    assert not set(expected) & set(node["podLimits"]), "a partial sum is not shown as the pod's limit"
    assert set(expected) <= set(trainjob["unboundedLimits"])
    table = explain_resource_list(krm.read(data), "table").output
    assert "unbounded" in table


def test_a_runtime_value_that_is_not_a_quantity_is_an_error_at_the_runtime_with_its_fix() -> None:
    """The CRD's quantity pattern refuses it (as the API server validates a Pod's resources,
    pkg/apis/core/validation/validation.go): an error at the runtime's own field, and no runtime is
    derived from it."""
    text = (TESTDATA / "success" / "data-loader-64gi" / "input.yaml").read_text()
    trainer = "                  - name: node\n                    image: pytorch/pytorch\n"
    assert trainer in text
    metrics = "                  - name: metrics\n                    image: metrics\n"
    metrics += "                    resources:\n                      requests:\n                        cpu: 2 cores\n"
    code, _, err = run_function(text.replace(trainer, trainer + metrics, 1).encode())
    assert code == 1
    assert err == (
        "error: runtime.yaml: ClusterTrainingRuntime pytorch-distributed: spec.template.spec.replicatedJobs[0]"
        ".template.spec.template.spec.containers[1].resources.requests.cpu: container 'metrics' of replicated "
        "job 'node': '2 cores' is not a quantity: did you mean 2 or 2000m (= 2000\N{MULTIPLICATION SIGN}10⁻³)? "
        "(Kubernetes refuses it; no runtime is derived from this one)\n"
        "error: trainjob.yaml: TrainJob large-dataset-training: spec.runtimeRef: ClusterTrainingRuntime "
        "pytorch-distributed has container resources the API server refuses (see its errors): no runtime is "
        "derived from it\n"
    )
