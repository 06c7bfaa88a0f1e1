"""The functionConfig option ``derivedRuntimeMetadata`` (issue 33): labels and annotations written on
every derived runtime after the base's are filtered; a platform option that a tenant may only add to
(on the control plane: scenario ``sdk-trainjob-on-derived``, every path)."""

from __future__ import annotations

from typing import Any

import pytest
from trainjob_resources.options.config import parse_config
from trainjob_resources.options.config_layers import Layer, LayerError, combine, layer_from_env

from tests.support import container_patch, load_fixture, render, trainjob
from tests.test_policy import typed

PRUNE = {"argocd.argoproj.io/sync-options": "Prune=false"}


def _sized() -> list[dict[str, Any]]:
    runtime = load_fixture("torch-plain")
    runtime["metadata"].setdefault("annotations", {})["argocd.argoproj.io/sync-options"] = "Prune=true"
    runtime["metadata"].setdefault("labels", {})["team"] = "base"
    pod = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod.setdefault("initContainers", []).append({"name": "loader", "image": "busybox", "restartPolicy": "Always"})
    patch = container_patch("node", "initContainers", {"name": "loader", "resources": {"limits": {"memory": "4Gi"}}})
    return [runtime, trainjob("sized", runtime["metadata"]["name"], [patch])]


def _metadata_of(config: dict[str, Any] | None) -> dict[str, Any]:
    items = _sized()
    out = render(items, config)
    assert out.code == 0, out.results
    (derived,) = [
        o for o in out.items if o["kind"].endswith("Runtime") and o["metadata"]["name"] != "torch-distributed"
    ]
    return dict(derived["metadata"])


def test_every_derived_runtime_gets_the_labels_and_annotations_after_the_base_s_are_filtered() -> None:
    metadata = _metadata_of(typed(derivedRuntimeMetadata={"annotations": PRUNE, "labels": {"team": "ml"}}))
    assert metadata["annotations"]["argocd.argoproj.io/sync-options"] == "Prune=false"  # the base's is dropped
    assert metadata["labels"]["team"] == "ml"
    assert metadata["labels"]["fn.trainjob-resources.io/derived"] == "true"
    without = _metadata_of(None)
    assert "argocd.argoproj.io/sync-options" not in without["annotations"]
    assert without["labels"]["team"] == "base"


def test_a_config_map_gives_it_as_json() -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    config["data"] = {"derivedRuntimeMetadata": '{"annotations": {"argocd.argoproj.io/sync-options": "Prune=false"}}'}
    assert _metadata_of(config)["annotations"]["argocd.argoproj.io/sync-options"] == "Prune=false"


@pytest.mark.parametrize(
    ("value", "path", "message"),
    [
        (
            {"annotations": {"fn.trainjob-resources.io/x": "1"}},
            "annotations[fn.trainjob-resources.io/x]",
            "by the function itself",
        ),
        (
            {"annotations": {"argocd.argoproj.io/sync-wave": "3"}},
            "annotations[argocd.argoproj.io/sync-wave]",
            "by the function itself",
        ),
        (
            {"labels": {"trainer.kubeflow.org/webhook-validation": "disabled"}},
            "labels[trainer.kubeflow.org/webhook-validation]",
            "by the function itself",
        ),
        ({"labels": {"a b": "x"}}, "labels[a b]", "name part must consist of"),
        ({"labels": {"team": "-ml-"}}, "labels.team", "a label value must be 63 characters or less"),
        ({"labels": {"team": "m" * 64}}, "labels.team", "a label value must be 63 characters or less"),
        ({"labels": {"team": 1}}, "labels.team", "Input should be a valid string"),
        ({"owners": {"a": "b"}}, "owners", "unknown key; accepted: annotations, labels"),
        ('{"labels": ', "", "not a JSON object"),
    ],
)
def test_what_the_api_server_or_the_function_refuses_is_an_error_at_the_field(
    value: Any, path: str, message: str
) -> None:
    config = typed(derivedRuntimeMetadata=value)
    out = render(_sized(), config)
    assert out.code == 1
    expected = "spec.derivedRuntimeMetadata" + ("." + path if path and not path.startswith("[") else path)
    found = [r for r in out.results if r["severity"] == "error"]
    assert any(r["field"]["path"] == expected and message in r["message"] for r in found), found


def _layer(value: dict[str, Any], platform: bool) -> Layer:
    return Layer(parse_config(typed(derivedRuntimeMetadata=value)), {"derivedRuntimeMetadata": "x"}, platform)


def test_a_tenant_adds_keys_to_the_platform_s_but_changes_none() -> None:
    platform = _layer({"annotations": PRUNE}, True)
    merged = combine([platform, _layer({"labels": {"team": "ml"}, "annotations": {"example.com/a": "1"}}, False)])
    assert merged.derived_runtime_metadata == {"annotations": {**PRUNE, "example.com/a": "1"}, "labels": {"team": "ml"}}
    with pytest.raises(LayerError, match="would loosen the platform's policy"):
        combine([platform, _layer({"annotations": {"argocd.argoproj.io/sync-options": "Prune=true"}}, False)])
    tenant = layer_from_env({"ARGOCD_ENV_DERIVED_RUNTIME_METADATA": '{"labels": {"team": "ml"}}'})
    assert tenant is not None
    assert combine([platform, tenant]).derived_runtime_metadata["labels"] == {"team": "ml"}
