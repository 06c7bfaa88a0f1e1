"""The examples in kustomization-examples/, built by the real kustomize (in kubectl), kpt and the
Argo CD plugin's own commands, against their goldens (regenerate: ``python -m tests.examples``)."""

from __future__ import annotations

import copy
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from trainjob_resources.config import FunctionConfig
from trainjob_resources.render_cli import env_name

from tests.engine import Engine
from tests.examples import (
    CMP,
    EXAMPLES,
    EXEC_EXAMPLES,
    FUNCTION_ANNOTATION,
    IMAGE,
    KPT_IMAGE_PACKAGE,
    KPT_PACKAGE,
    KUSTOMIZE_BUILDS,
    WRAPPER,
    argocd_env,
    assert_rendered,
    cmp_generate,
    cmp_run,
    documents,
    identity,
    kpt_image_expected,
    kpt_render,
    kpt_unwrapped,
    kubectl_build,
    kustomize_exec_build,
    load,
    to_container,
    tree,
)

ROOT = EXAMPLES.parent


def expected(example: str) -> str:
    return (EXAMPLES / example / "expected.yaml").read_text()


@pytest.fixture(scope="session")
def engine_or_stand_in(request: pytest.FixtureRequest) -> Engine | None:
    """What kustomize's container runtime runs: the real engine and image (tests/engine.py; CI
    fails without them), else None: the docker stand-in running this checkout."""
    try:
        engine: Engine = request.getfixturevalue("engine")
    except pytest.skip.Exception:
        return None
    return engine


@pytest.mark.parametrize("example", list(KUSTOMIZE_BUILDS))
def test_kustomize_example_matches_its_golden(
    kubectl: str, engine_or_stand_in: Engine | None, example: str, tmp_path: Path
) -> None:
    out = kubectl_build(kubectl, example, tmp_path, engine_or_stand_in)
    assert out == expected(example)
    assert_rendered(documents(out))


@pytest.mark.parametrize("example", EXEC_EXAMPLES)
def test_exec_example_with_a_standalone_kustomize(example: str) -> None:
    kustomize = shutil.which("kustomize")
    if kustomize is None:
        pytest.skip("no standalone kustomize on PATH (kubectl's cannot run exec functions; see tests/examples.py)")
    assert kustomize_exec_build(kustomize, example) == expected(example)


def test_kubectl_kustomize_skips_exec_functions_silently(kubectl: str) -> None:
    """Why docs/integrations.md sends exec users to a standalone kustomize: if this starts failing,
    kubectl has learned to run exec functions and the docs should say so."""
    import subprocess

    done = subprocess.run(
        [kubectl, "kustomize", "--enable-alpha-plugins", str(EXAMPLES / "exec-data-loader")],
        capture_output=True,
        text=True,
        check=True,
    )
    (trainjob,) = [o for o in documents(done.stdout) if o["kind"] == "TrainJob"]
    assert "resources" in str(trainjob["spec"]["runtimePatches"])


def test_the_overlay_example_shares_and_separates_derived_runtimes() -> None:
    objects = documents(expected("overlay-multi"))
    trainjobs = {o["metadata"]["name"]: o for o in assert_rendered(objects)}
    assert {o["metadata"]["namespace"] for o in objects} == {"ml-prod"}
    refs = {name: job["spec"]["runtimeRef"]["name"] for name, job in trainjobs.items()}
    assert refs["llama-finetune"] == refs["llama-eval"] != refs["llama-pretrain"]
    assert refs["smoke-test"] == "torch-data-pipeline"
    derived = {o["metadata"]["name"]: o for o in objects if o["kind"] == "TrainingRuntime"}
    pod = derived[refs["llama-pretrain"]]["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
    spec = pod["template"]["spec"]
    assert spec["initContainers"][0]["resources"]["limits"]["memory"] == "128Gi", "the overlay's patch applied"
    assert spec["containers"][1]["resources"]["limits"]["memory"] == "1Gi", "the second manager's patch applied"


def _without_function(config: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(config)
    del out["metadata"]["annotations"][FUNCTION_ANNOTATION]
    return out


def test_the_container_example_is_the_exec_example_with_another_runtime() -> None:
    exec_dir, container_dir = EXAMPLES / "exec-data-loader", EXAMPLES / "container"
    for name in ("kustomization.yaml", "runtime.yaml", "trainjob.yaml", "expected.yaml"):
        assert (container_dir / name).read_text() == (exec_dir / name).read_text(), name
    exec_config = load(exec_dir / "trainjob-resources.yaml")
    container_config = load(container_dir / "trainjob-resources.yaml")
    assert _without_function(container_config) == _without_function(exec_config)
    assert yaml.safe_load(exec_config["metadata"]["annotations"][FUNCTION_ANNOTATION]) == {
        "exec": {"path": f"./{WRAPPER}"}
    }
    assert yaml.safe_load(container_config["metadata"]["annotations"][FUNCTION_ANNOTATION]) == {
        "container": {"image": IMAGE}
    }
    assert load(container_dir / "trainjob-resources.yaml") == yaml.safe_load(
        to_container((exec_dir / "trainjob-resources.yaml").read_text())
    )


def test_the_image_is_the_one_the_dockerfile_builds() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    version = re.search(r"^version = \"(.+)\"$", (ROOT / "pyproject.toml").read_text(), re.MULTILINE)
    assert version is not None
    assert IMAGE.endswith(f":{version.group(1)}")
    assert f"docker build -t {IMAGE} ." in dockerfile
    source = re.search(r'org\.opencontainers\.image\.source="https://github\.com/([^"]+)"', dockerfile)
    assert source is not None
    assert IMAGE.startswith(f"ghcr.io/{source.group(1)}:")


def test_every_exec_wrapper_is_the_same_executable_script() -> None:
    wrappers = sorted(EXAMPLES.rglob(WRAPPER))
    assert len(wrappers) == 3
    for wrapper in wrappers:
        assert wrapper.read_bytes() == wrappers[0].read_bytes(), wrapper
        assert os.access(wrapper, os.X_OK), wrapper


def test_every_example_has_a_readme_and_a_golden() -> None:
    for example in [*KUSTOMIZE_BUILDS, "kpt", "kpt-image", "argocd-cmp"]:
        assert (EXAMPLES / example / "README.md").is_file(), example
        assert (EXAMPLES / example / "expected.yaml").is_file(), example


@pytest.mark.parametrize("example", [*KUSTOMIZE_BUILDS, "kpt", "kpt-image", "argocd-cmp"])
def test_every_golden_has_each_runtime_before_the_trainjobs_using_it(example: str) -> None:
    assert_rendered(documents(expected(example)))


@pytest.mark.parametrize("example", list(KUSTOMIZE_BUILDS))
def test_kustomize_examples_sort_runtimes_first(example: str) -> None:
    """kustomize appends what a function adds after what it was given, whatever ``order: fifo``
    says: only its legacy order, told where the runtime kinds and TrainJob go, puts them first."""
    kustomization = load(EXAMPLES / example / KUSTOMIZE_BUILDS[example] / "kustomization.yaml")
    options = kustomization["sortOptions"]
    assert options["order"] == "legacy"
    first, last = options["legacySortOptions"]["orderFirst"], options["legacySortOptions"]["orderLast"]
    assert first[-2:] == ["ClusterTrainingRuntime", "TrainingRuntime"]
    assert last[0] == "TrainJob"


# kpt


def _comments(text: str) -> list[str]:
    return [line[line.index("#") :].strip() for line in text.splitlines() if "#" in line and "#!" not in line]


def test_the_kpt_image_package_is_the_kpt_package_with_the_image() -> None:
    exec_files, image_files = tree(KPT_PACKAGE), tree(KPT_IMAGE_PACKAGE)
    assert set(exec_files) - set(image_files) == {WRAPPER}
    for name in set(image_files) - {"Kptfile"}:
        assert image_files[name] == exec_files[name], name
    exec_kptfile, image_kptfile = load(KPT_PACKAGE / "Kptfile"), load(KPT_IMAGE_PACKAGE / "Kptfile")
    assert exec_kptfile["pipeline"].pop("mutators") == [
        {"exec": f"./{WRAPPER}", "configPath": "trainjob-resources.yaml"}
    ]
    assert image_kptfile["pipeline"].pop("mutators") == [{"image": IMAGE, "configPath": "trainjob-resources.yaml"}]
    assert image_kptfile == exec_kptfile
    assert expected("kpt-image") == kpt_image_expected(expected("kpt"))


def test_kpt_render_in_place_twice(kpt: str, tmp_path: Path) -> None:
    package = tmp_path / "package"
    shutil.copytree(KPT_PACKAGE, package)
    original = tree(package)

    first = kpt_render(kpt, package)
    assert first.returncode == 0, first.stderr
    rendered = tree(package)
    assert rendered != original
    for name, data in original.items():
        kept = rendered[name].decode()
        for comment in _comments(data.decode()):
            assert comment in kept, f"{name}: comment lost: {comment}"
    new_files = sorted(set(rendered) - set(original))
    assert len(new_files) == 1
    # The derived runtime's file is placed beside the TrainJob's (trainjob.yaml, at the package root),
    # named after its kind, namespace and name.
    assert re.fullmatch(r"trainingruntime_ml-team_pytorch-distributed-[0-9a-f]{10}\.yaml", new_files[0])

    objects = [
        d
        for name, data in rendered.items()
        if name.endswith(".yaml") or name == "Kptfile"
        for d in documents(data.decode())
    ]
    golden = documents(expected("kpt"))
    assert sorted(objects, key=lambda o: identity(o)) == sorted(golden, key=lambda o: identity(o))
    assert_rendered(objects)

    second = kpt_render(kpt, package)
    assert second.returncode == 0, second.stderr
    assert tree(package) == rendered, "a second render changes nothing"


def test_kpt_renders_one_folder_of_trainjobs_in_two_namespaces(kpt: str, tmp_path: Path) -> None:
    """Two TrainJobs of one file, in two namespaces, with the same sizes: two derived runtimes of one
    name, which kpt can only write to two paths."""
    package = tmp_path / "package"
    shutil.copytree(KPT_PACKAGE, package)
    job = (package / "trainjob.yaml").read_text()
    (package / "trainjob.yaml").write_text(job + "---\n" + job.replace("ml-team", "vision-team"))
    first = kpt_render(kpt, package)
    assert first.returncode == 0, first.stderr
    derived = sorted(p.name for p in package.iterdir() if p.name.startswith("trainingruntime_"))
    assert [re.sub(r"-[0-9a-f]{10}\.yaml$", "", name) for name in derived] == [
        "trainingruntime_ml-team_pytorch-distributed",
        "trainingruntime_vision-team_pytorch-distributed",
    ]
    rendered = tree(package)
    assert kpt_render(kpt, package).returncode == 0
    assert tree(package) == rendered


def test_kpt_unwrapped_output_matches_its_golden(kpt: str, tmp_path: Path) -> None:
    assert kpt_unwrapped(kpt, tmp_path) == expected("kpt")


# Argo CD


def test_cmp_discovers_inits_and_generates(tmp_path: Path) -> None:
    app = tmp_path / "discover"
    shutil.copytree(CMP / "app", app)
    discovered = cmp_run("discover", app, argocd_env())
    assert discovered.returncode == 0
    assert discovered.stdout.strip() == "./trainjobs.yaml"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cmp_run("discover", empty, argocd_env()).stdout == "", "no TrainJob, no plugin"

    out = cmp_generate(tmp_path)
    assert out == expected("argocd-cmp")
    objects = documents(out)
    assert_rendered(objects)
    namespace = argocd_env()["ARGOCD_APP_NAMESPACE"]
    assert {o["metadata"]["namespace"] for o in objects} == {namespace}


def test_cmp_generate_fails_with_messages_and_no_manifests(tmp_path: Path) -> None:
    app = tmp_path / "app"
    shutil.copytree(CMP / "app", app)
    env = {**argocd_env(), "ARGOCD_ENV_MODE": "fast"}
    done = cmp_run("generate", app, env)
    assert (done.returncode, done.stdout) == (1, "")
    assert "ARGOCD_ENV_MODE (plugin env MODE): " in done.stderr
    assert done.stderr.endswith(f"application {env['ARGOCD_APP_NAME']}: 1 error; nothing rendered\n")
    env = {**argocd_env(), "ARGOCD_ENV_MODEL": "x"}
    done = cmp_run("generate", app, env)
    assert (done.returncode, done.stdout) == (1, "")
    assert "unknown option ARGOCD_ENV_MODEL" in done.stderr


def test_the_application_names_the_plugin_and_only_known_options() -> None:
    plugin = load(CMP / "plugin.yaml")
    assert plugin["kind"] == "ConfigManagementPlugin"
    app = load(CMP / "application.yaml")
    source = app["spec"]["source"]
    assert source["plugin"]["name"] == f"{plugin['metadata']['name']}-{plugin['spec']['version']}"
    assert source["path"] == str((CMP / "app").relative_to(ROOT))
    accepted = {env_name(f.alias or n) for n, f in FunctionConfig.model_fields.items()}
    assert {f"ARGOCD_ENV_{e['name']}" for e in source["plugin"]["env"]} <= accepted


def test_the_sidecar_runs_the_image_with_the_plugin_config() -> None:
    patch = load(CMP / "sidecar.yaml")
    assert (patch["kind"], patch["metadata"]["name"]) == ("Deployment", "argocd-repo-server")
    pod = patch["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == IMAGE
    assert container["command"] == ["/var/run/argocd/argocd-cmp-server"]
    security = container["securityContext"]
    assert security["runAsNonRoot"] and security["readOnlyRootFilesystem"] and security["runAsUser"] == 999
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts["/home/argocd/cmp-server/config/plugin.yaml"]["subPath"] == "plugin.yaml"
    assert {"/var/run/argocd", "/home/argocd/cmp-server/plugins", "/tmp"} <= set(mounts)
    volumes = {v["name"]: v for v in pod["volumes"]}
    config_volume = volumes[mounts["/home/argocd/cmp-server/config/plugin.yaml"]["name"]]
    configmap = config_volume["configMap"]["name"]
    text = (CMP / "sidecar.yaml").read_text()
    assert f"create configmap {configmap} --from-file=plugin.yaml" in text
