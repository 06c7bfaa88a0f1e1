"""The platform decides, the tenant only asks (issue 46): who may set each functionConfig option.

With a platform layer (``render --config``), a tenant's layer (the repository's config, ``ARGOCD_ENV_*``)
may not change a platform option (how effective resources are computed, which objects are written),
may only tighten a policy option, and may set the reporting options freely. The rule is checked on
generated (option, platform value or unset, tenant value, through the repository or the plugin env)
against an oracle written here, and the issue's case through the installed command.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trainjob_resources.options.config import FunctionConfig
from trainjob_resources.options.config_layers import (
    PLATFORM_OPTIONS,
    POLICY_OPTIONS,
    TENANT_OPTIONS,
    Layer,
    LayerError,
    combine,
    env_name,
    layer_from_env,
    layer_from_object,
)

from tests.examples import EXAMPLES
from tests.kit import build
from tests.test_render_hostile import render, write

ROOT = Path(__file__).resolve().parents[1]
# The decision, written here apart from the code's tuples (which the last test compares with it).
PLATFORM_ONLY = ("mode", "derivedRuntimeKind", "trainerVersion")
STRICTER_ONLY = (
    "trainerResources",
    "namespacePolicy",
    "maxPerContainer",
    "maxPerRole",
    "allowedResources",
    "allowGpuInSidecars",
    "gpuResources",
    "derivedRuntimeMetadata",
)
FREELY = ("results",)
PLATFORM_LABEL = "/etc/trainjob-resources/platform.yaml"
REPOSITORY_LABEL = "./fn.yaml"

# Each option's values, as a ConfigMap's data (and ARGOCD_ENV_*) spells them.
_QUANTITIES = ("1Gi", "8Gi", "64Gi")
_RESOURCES = ("cpu", "memory", "nvidia.com/gpu", "example.com/fpga")
_GPUS = ("nvidia.com/gpu", "amd.com/gpu", "example.com/tpu")


def _caps(draw: st.DrawFn) -> dict[str, str]:
    names = draw(st.lists(st.sampled_from(("memory", "nvidia.com/gpu")), min_size=1, unique=True))
    return {name: draw(st.sampled_from(_QUANTITIES)) for name in names}


@st.composite
def option_values(draw: st.DrawFn, option: str) -> str:
    """A value of ``option`` as text."""
    if option == "maxPerContainer":
        return ",".join(f"{k}={v}" for k, v in _caps(draw).items())
    if option == "maxPerRole":
        roles = draw(st.lists(st.sampled_from(("sidecar", "trainer")), min_size=1, unique=True))
        return ",".join(f"{role}.{k}={v}" for role in roles for k, v in _caps(draw).items())
    if option == "allowedResources":
        return ",".join(draw(st.lists(st.sampled_from(_RESOURCES), min_size=1, unique=True)))
    if option == "gpuResources":
        return ",".join(draw(st.lists(st.sampled_from(_GPUS), min_size=1, unique=True)))
    if option == "derivedRuntimeMetadata":
        labels = draw(st.dictionaries(st.sampled_from(("example.com/team", "example.com/cost")), st.sampled_from("ab")))
        return json.dumps({"labels": labels})
    choices = {
        "mode": ("materialize", "native"),
        "derivedRuntimeKind": ("TrainingRuntime", "ClusterTrainingRuntime"),
        "trainerVersion": ("v2.2", "v2.2.0", "v2.2.1", "v2.3", "v2.3.0"),
        "trainerResources": ("error", "moveToResourcesPerNode"),
        "namespacePolicy": ("error", "warning", "off"),
        "allowGpuInSidecars": ("true", "false"),
        "results": ("all", "summary", "problems"),
    }
    return draw(st.sampled_from(choices[option]))


def _options() -> list[str]:
    return [f.alias or n for n, f in FunctionConfig.model_fields.items()]


def _parse(option: str, text: str) -> Any:
    return getattr(_layer(option, text, "x", platform=False).config, _name(option))


def _name(option: str) -> str:
    return next(n for n, f in FunctionConfig.model_fields.items() if (f.alias or n) == option)


def _layer(option: str, text: str, via: str, platform: bool) -> Layer:
    if via == "env":
        layer = layer_from_env({env_name(option): text})
        assert layer is not None
        return layer
    data = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {option: text}}
    return layer_from_object(data, PLATFORM_LABEL if platform else REPOSITORY_LABEL, platform)


def _minor(version: str) -> str:
    return version.removeprefix("v")[:3]


def _looser(option: str, tenant: Any, floor: Any) -> bool:
    """The oracle: whether the tenant's value lets through something the platform's does not."""
    gi = {"1Gi": 1, "8Gi": 8, "64Gi": 64}
    if option == "maxPerContainer":
        return any(k in floor and gi[v] > gi[floor[k]] for k, v in tenant.items())
    if option == "maxPerRole":
        return any(_looser("maxPerContainer", caps, floor.get(role, {})) for role, caps in tenant.items())
    if option == "allowedResources":
        return floor is not None and not set(tenant) <= set(floor)
    if option == "gpuResources":
        return not set(floor) <= set(tenant)
    if option == "allowGpuInSidecars":
        return bool(tenant) and not floor
    if option == "namespacePolicy":
        return ["off", "warning", "error"].index(tenant) < ["off", "warning", "error"].index(floor)
    if option == "trainerResources":
        return tenant == "moveToResourcesPerNode" and floor == "error"
    if option == "derivedRuntimeMetadata":
        mine, theirs = tenant.get("labels", {}), floor.get("labels", {})
        return any(k in theirs and v != theirs[k] for k, v in mine.items())
    raise AssertionError(option)


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, str | None, str, str]:
    option = draw(st.sampled_from(_options()))
    platform = draw(st.none() | option_values(option))
    return option, platform, draw(option_values(option)), draw(st.sampled_from(("env", "repository")))


# Kept cases (the fast loop runs them): the issue's, a platform that does not pin trainerVersion and a
# tenant that picks v2.2; the same release spelled otherwise; the other options the rule changed.
REGRESSIONS = [
    ("trainerVersion", None, "v2.2.0", "env"),
    ("trainerVersion", None, "v2.2.1", "repository"),
    ("trainerVersion", "v2.3", "v2.3.0", "env"),
    ("trainerVersion", "v2.2.1", "v2.2", "repository"),
    ("mode", None, "native", "env"),
    ("derivedRuntimeKind", None, "ClusterTrainingRuntime", "repository"),
    ("trainerResources", None, "moveToResourcesPerNode", "repository"),
    ("trainerResources", "moveToResourcesPerNode", "error", "env"),
    ("results", "problems", "all", "env"),
]


@pytest.mark.parametrize("case", REGRESSIONS)
def test_the_kept_cases(case: tuple[str, str | None, str, str]) -> None:
    assert_the_rule(case)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(cases())
def test_a_tenant_changes_no_platform_option_and_loosens_no_policy(case: tuple[str, str | None, str, str]) -> None:
    assert_the_rule(case)


def assert_the_rule(case: tuple[str, str | None, str, str]) -> None:
    option, platform_text, tenant_text, via = case
    name = _name(option)
    platform = (
        _layer(option, platform_text, "repository", platform=True)
        if platform_text is not None
        else layer_from_object({"apiVersion": "v1", "kind": "ConfigMap", "data": {}}, PLATFORM_LABEL, True)
    )
    tenant = _layer(option, tenant_text, via, platform=False)
    theirs = getattr(platform.config, name)
    mine = getattr(tenant.config, name)
    if option in PLATFORM_ONLY:
        refused = _minor(mine) != _minor(theirs) if option == "trainerVersion" else mine != theirs
    elif option in STRICTER_ONLY:
        refused = _looser(option, mine, theirs)
    else:
        refused = False
    where = tenant.sources[option]
    if refused:
        with pytest.raises(LayerError) as err:
            combine([platform, tenant])
        (message,) = err.value.messages
        assert message.startswith(f"{where}: {option} "), message
        assert PLATFORM_LABEL in message, "where the platform's value comes from"
        if option in PLATFORM_ONLY:
            assert f"{option} {tenant_text}:" in message and str(theirs) in message, message
            assert ("the default" in message) == (platform_text is None), message
        return
    effective = getattr(combine([platform, tenant]), name)
    if option in PLATFORM_ONLY:
        assert _minor(effective) == _minor(theirs) if option == "trainerVersion" else effective == theirs
    elif option in STRICTER_ONLY:
        assert not _looser(option, effective, theirs), "the effective policy is at least the platform's"
    else:
        assert effective == mine, "a reporting option is the tenant's"
    # Without a platform there is no floor: the one config is the user's.
    assert getattr(combine([tenant]), name) == mine


def test_every_option_has_one_owner_and_the_trust_model_lists_it() -> None:
    """Each FunctionConfig field is decided once (a new option must be), and docs/hardening.md's table says
    the same of each."""
    assert sorted([*PLATFORM_ONLY, *STRICTER_ONLY, *FREELY]) == sorted(_options()), "each option decided, once"
    assert (set(PLATFORM_OPTIONS), set(POLICY_OPTIONS), set(TENANT_OPTIONS)) == (
        set(PLATFORM_ONLY),
        set(STRICTER_ONLY),
        set(FREELY),
    )
    text = (ROOT / "docs" / "hardening.md").read_text()
    rows = dict(re.findall(r"^\| `(\w+)` \| (platform only|tenant: only stricter|tenant: freely)", text, re.MULTILINE))
    expected = {
        **dict.fromkeys(PLATFORM_ONLY, "platform only"),
        **dict.fromkeys(STRICTER_ONLY, "tenant: only stricter"),
        **dict.fromkeys(FREELY, "tenant: freely"),
    }
    assert rows == expected


# The case through the installed command: the multi-team walkthrough's platform config (GPUs capped
# at 8, trainerVersion not pinned), a platform runtime whose trainer has 64 GPUs, and a TrainJob that sets
# resourcesPerNode {cpu: 1}: on v2.2 that replaces the trainer's resources (no GPU), on v2.3.0 it merges
# (64 GPUs). The cluster runs v2.3.0 unless the platform says otherwise.
PLATFORM = EXAMPLES / "argocd-multi-team" / "platform" / "trainjob-resources" / "platform.yaml"
GPUS = {"nvidia.com/gpu": 64}
GPU_TRAINER = {"name": "node", "image": "docker.io/pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime"}
GPU_RUNTIME = build.trainer_runtime(
    "gpu64",
    labels={build.FRAMEWORK: "torch"},
    containers=[{**GPU_TRAINER, "resources": {"limits": dict(GPUS), "requests": dict(GPUS)}}],
)
CPU_ONLY_JOB = build.trainjob(
    "greedy", "gpu64", namespace="team-a", trainer={"resourcesPerNode": {"limits": {"cpu": 1}, "requests": {"cpu": 1}}}
)
V22_WHY = "the Trainer the cluster runs decides how the pods' resources are computed"


@pytest.mark.slow
@pytest.mark.parametrize("via", ["env", "repository"])
def test_a_tenant_cannot_pick_the_trainer_release_that_hides_64_gpus(tmp_path: Path, via: str) -> None:
    assert "trainerVersion" not in PLATFORM.read_text() and "nvidia.com/gpu: 8" in PLATFORM.read_text()
    runtimes = write(tmp_path / "platform" / "runtimes" / "gpu64.yaml", build.yaml_text(GPU_RUNTIME)).parent
    app = write(tmp_path / "repo" / "app" / "trainjob.yaml", build.yaml_text(CPU_ONLY_JOB)).parent
    args = ("--config", str(PLATFORM), "--runtimes", str(runtimes), "--config-from-env", ".")
    capped = render(app, *args)
    assert capped.code == 1 and "limits.nvidia.com/gpu 64 (runtime)" in capped.stderr, capped
    env: dict[str, str] = {}
    if via == "env":
        env, tenant_value, where = {"ARGOCD_ENV_TRAINER_VERSION": "v2.2.0"}, "v2.2.0", "ARGOCD_ENV_TRAINER_VERSION"
    else:
        spec = "spec:\n  trainerVersion: v2.2.1\n"
        write(app / "fn.yaml", f"apiVersion: fn.trainjob-resources.io/v1alpha1\nkind: TrainJobResources\n{spec}")
        tenant_value, where = "v2.2.1", "./fn.yaml"
    out = render(app, *args, env=env)
    assert (out.code, out.stdout) == (1, ""), out
    assert f"error: {where}" in out.stderr and f"trainerVersion {tenant_value}: the platform's config" in out.stderr
    assert f"({PLATFORM}) does not set it, so it is v2.3.0, the default" in out.stderr, out
    assert V22_WHY in out.stderr and "ask the platform to set trainerVersion in its config" in out.stderr
    # Where the platform pins the release its cluster runs, the tenant's equal value is no error (and v2.2's
    # arithmetic is then the cluster's: resourcesPerNode replaces, no GPU).
    pinned = write(tmp_path / "platform" / "v22.yaml", PLATFORM.read_text() + "  trainerVersion: v2.2\n")
    follows = render(app, "--config", str(pinned), *args[2:], env=env)
    assert follows.code == 0, follows
