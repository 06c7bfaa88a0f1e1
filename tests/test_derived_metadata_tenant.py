"""Ownership keys through derivedRuntimeMetadata (issue 46): a tenant (a repository's config,
``ARGOCD_ENV_DERIVED_RUNTIME_METADATA``) could put ``argocd.argoproj.io/hook: PreSync``,
``helm.sh/resource-policy``, ``cli-utils.sigs.k8s.io/on-remove``, ``app.kubernetes.io/instance``,
``trainer.kubeflow.org/managed-by`` and the like on derived runtimes, the keys the function strips
from base runtimes. Now a derived runtime carries only the platform's metadata in those key spaces
(one list, ``values/keys.py``), and a cluster-scoped derived runtime none of a tenant's at all.

Generated keys over the key spaces check the rule against the list; the installed command renders
with the platform's config and the tenant's variable, as Argo CD's plugin runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st
from trainjob_resources.options.config import parse_config
from trainjob_resources.options.config_layers import Layer, LayerError, combine, layer_from_env
from trainjob_resources.values.keys import OWNERSHIP_KEYS, PLATFORM_PREFIXES, is_ownership_key, is_platform_key

from tests.hostile import EXECUTABLE
from tests.kit import build
from tests.test_output_bound_aliases import trainjob

VARIABLE = "ARGOCD_ENV_DERIVED_RUNTIME_METADATA"
# The issue's keys, each a regression.
ISSUE_KEYS = (
    ("annotations", "argocd.argoproj.io/hook"),
    ("annotations", "argocd.argoproj.io/hook-delete-policy"),
    ("annotations", "argocd.argoproj.io/compare-options"),
    ("annotations", "argocd.argoproj.io/tracking-id"),
    ("annotations", "helm.sh/hook"),
    ("annotations", "helm.sh/resource-policy"),
    ("annotations", "cli-utils.sigs.k8s.io/on-remove"),
    ("annotations", "client.lifecycle.config.k8s.io/deletion"),
    ("labels", "app.kubernetes.io/instance"),
    ("labels", "trainer.kubeflow.org/managed-by"),
)
OTHER_PREFIXES = ("example.com/", "team-a.example/", "app.kubernetes.io/", "kubeflow.org/", "", "argocd.example/")


def platform_layer(metadata: dict[str, dict[str, str]], kind: str = "TrainingRuntime") -> Layer:
    data = {"derivedRuntimeMetadata": json.dumps(metadata), "derivedRuntimeKind": kind}
    config = parse_config({"apiVersion": "v1", "kind": "ConfigMap", "data": data})
    return Layer(config, {"derivedRuntimeMetadata": "--config", "derivedRuntimeKind": "--config"}, platform=True)


def tenant_layer(section: str, key: str, value: str = "x") -> Layer:
    layer = layer_from_env({VARIABLE: json.dumps({section: {key: value}})})
    assert layer is not None
    return layer


def test_the_issue_s_keys_are_refused_naming_the_key_and_the_variable() -> None:
    for section, key in ISSUE_KEYS:
        assert is_platform_key(key)
        with pytest.raises(LayerError) as raised:
            combine([platform_layer({}), tenant_layer(section, key)])
        (message,) = raised.value.messages
        assert message.startswith(f"{VARIABLE} (plugin env DERIVED_RUNTIME_METADATA): derivedRuntimeMetadata.{section}")
        assert repr(key) in message and "only the platform may set" in message


def test_the_platform_sets_them_and_a_tenant_may_repeat_the_platform_s_value() -> None:
    platform = platform_layer({"annotations": {"argocd.argoproj.io/sync-options": "Prune=false"}})
    assert combine([platform]).derived_runtime_metadata["annotations"] == {
        "argocd.argoproj.io/sync-options": "Prune=false"
    }
    same = tenant_layer("annotations", "argocd.argoproj.io/sync-options", "Prune=false")
    assert combine([platform, same]).derived_runtime_metadata == platform.config.derived_runtime_metadata


def test_the_base_s_keys_stripped_are_the_ones_a_tenant_may_not_add() -> None:
    """One list: every key stripped from a base for its ownership is a platform key."""
    for key in (*OWNERSHIP_KEYS, *(f"{p}x" for p, _ in zip(PLATFORM_PREFIXES, PLATFORM_PREFIXES, strict=True))):
        if is_ownership_key(key):
            assert is_platform_key(key), key


@settings(max_examples=60, deadline=None)
@given(
    prefix=st.sampled_from((*PLATFORM_PREFIXES, *OTHER_PREFIXES)),
    name=st.from_regex(r"[a-z]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True),
    section=st.sampled_from(("annotations", "labels")),
    cluster=st.booleans(),
)
@example(prefix="argocd.argoproj.io/", name="hook", section="annotations", cluster=False)
@example(prefix="example.com/", name="team", section="labels", cluster=True)
@example(prefix="app.kubernetes.io/", name="instance", section="labels", cluster=False)
@example(prefix="app.kubernetes.io/", name="name", section="labels", cluster=False)
def test_a_tenant_key_is_refused_exactly_in_the_platform_s_key_spaces_or_on_a_cluster_runtime(
    prefix: str, name: str, section: str, cluster: bool
) -> None:
    key = prefix + name
    kind = "ClusterTrainingRuntime" if cluster else "TrainingRuntime"
    # The function's own keys are refused for every layer (parse_config); the rest only for a tenant.
    refused = cluster or is_platform_key(key)
    try:
        config = combine([platform_layer({}, kind), tenant_layer(section, key)])
    except LayerError as error:
        assert refused, error.messages
        assert any(key in m and VARIABLE in m for m in error.messages)
        if cluster and not error.messages[0].endswith(f"got {json.dumps({section: {key: 'x'}})!r}"):
            assert any("takes no metadata but the platform's" in m for m in error.messages)
        return
    assert not refused, key
    assert config.derived_runtime_metadata[section] == {key: "x"}


def _app(root: Path) -> Path:
    app = root / "app"
    app.mkdir()
    (app / "all.yaml").write_text(build.yaml_text(build.aliased_runtime(10, 0), trainjob(0)))
    (root / "platform.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "platform"},
                "data": {"derivedRuntimeMetadata": json.dumps({"annotations": {"helm.sh/resource-policy": "keep"}})},
            }
        )
    )
    return app


def _render(root: Path, tenant: dict[str, dict[str, str]] | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARGOCD_ENV_")}
    if tenant is not None:
        env[VARIABLE] = json.dumps(tenant)
    return subprocess.run(
        [str(EXECUTABLE), "render", "app", "--config", "platform.yaml", "--config-from-env"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_installed_render_refuses_a_tenant_hook_and_keeps_the_platform_s_key(tmp_path: Path) -> None:
    _app(tmp_path)
    refused = _render(tmp_path, {"annotations": {"argocd.argoproj.io/hook": "PreSync"}})
    assert refused.returncode == 1 and refused.stdout == ""
    assert f"{VARIABLE} (plugin env DERIVED_RUNTIME_METADATA): derivedRuntimeMetadata.annotations: " in refused.stderr
    assert "'argocd.argoproj.io/hook'" in refused.stderr and "Traceback" not in refused.stderr
    done = _render(tmp_path, {"labels": {"team": "ml"}})
    assert done.returncode == 0, done.stderr
    (derived,) = [d for d in yaml.safe_load_all(done.stdout) if d and d["kind"] == "TrainingRuntime"]
    assert derived["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    assert derived["metadata"]["labels"]["team"] == "ml"


def test_without_the_platform_s_config_the_repository_s_metadata_is_the_user_s() -> None:
    """No ``--config``: no platform layer, so every option is the user's (docs/hardening.md, trust model),
    metadata included: a repository that derives ClusterTrainingRuntimes may keep them from Argo CD's prune
    (scenario sdk-trainjob-on-derived)."""
    repository = Layer(
        parse_config(
            build.function_config(
                "repo",
                derivedRuntimeKind="ClusterTrainingRuntime",
                derivedRuntimeMetadata={"annotations": {"argocd.argoproj.io/sync-options": "Prune=false"}},
            )
        ),
        {
            "derivedRuntimeMetadata": "base/trainjob-resources.yaml",
            "derivedRuntimeKind": "base/trainjob-resources.yaml",
        },
    )
    combined = combine([repository])
    assert combined.derived_runtime_metadata["annotations"] == {"argocd.argoproj.io/sync-options": "Prune=false"}
