"""The examples in kustomization-examples/, built by the real kustomize (in kubectl), kpt and the
Argo CD plugin's own commands, against their goldens (``make goldens`` rewrites them: tests/kit/golden.py)."""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from trainjob_resources import __version__
from trainjob_resources.cli.render import env_name
from trainjob_resources.options.config import FunctionConfig

from tests.cluster import standalone
from tests.cluster.standalone import KUSTOMIZE_ROLES
from tests.engine import Engine
from tests.examples import (
    CMP,
    CMP_EXAMPLES,
    EXAMPLES,
    EXEC_EXAMPLES,
    FUNCTION_ANNOTATION,
    IMAGE,
    KPT_IMAGE_PACKAGE,
    KPT_PACKAGE,
    KUSTOMIZE_BUILDS,
    WRAPPER,
    application,
    argocd_env,
    assert_rendered,
    cmp_generate,
    cmp_run,
    documents,
    expected_path,
    identity,
    kpt_image_expected,
    kpt_render,
    kpt_unwrapped,
    kubectl_build,
    kustomize_exec_build,
    kustomize_provider,
    load,
    overlay_builds,
    sidecar_containers,
    sidecar_kustomize_dir,
    sidecar_path,
    stage_source,
    to_container,
    tree,
)
from tests.kit.golden import assert_golden

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
    assert_golden(EXAMPLES / example / "expected.yaml", out)
    assert_rendered(documents(out))


@pytest.mark.parametrize(("example", "build"), overlay_builds())
def test_overlay_matches_its_golden(
    kubectl: str, engine_or_stand_in: Engine | None, example: str, build: str, tmp_path: Path
) -> None:
    out = kubectl_build(kubectl, example, tmp_path, engine_or_stand_in, build)
    assert_golden(expected_path(example, build), out)
    assert_rendered(documents(out))


def test_the_name_prefix_overlay_points_trainjobs_at_the_renamed_runtimes() -> None:
    """kustomize renames the runtime but not spec.runtimeRef.name; the function follows previousNames."""
    objects = documents((EXAMPLES / "overlay-multi" / "overlays" / "team-a" / "expected.yaml").read_text())
    trainjobs = {o["metadata"]["name"]: o for o in assert_rendered(objects)}
    assert set(trainjobs) == {f"team-a-{n}" for n in ("llama-pretrain", "llama-finetune", "llama-eval", "smoke-test")}
    assert trainjobs["team-a-smoke-test"]["spec"]["runtimeRef"]["name"] == "team-a-torch-data-pipeline"
    for name in ("team-a-llama-pretrain", "team-a-llama-finetune"):
        assert trainjobs[name]["spec"]["runtimeRef"]["name"].startswith("team-a-torch-data-pipeline-")
    for obj in objects:
        assert not any("previousNames" in key for key in obj["metadata"].get("annotations") or {})


EXEC_BUILDS = [
    *((e, KUSTOMIZE_BUILDS[e]) for e in EXEC_EXAMPLES),
    *((e, b) for e, b in overlay_builds() if e in EXEC_EXAMPLES),
]


@pytest.mark.cluster
@pytest.mark.parametrize("role", KUSTOMIZE_ROLES)
@pytest.mark.parametrize(("example", "build"), EXEC_BUILDS)
def test_exec_example_with_a_standalone_kustomize(example: str, build: str, role: str) -> None:
    """As written: ``kustomize build --enable-alpha-plugins --enable-exec`` in the example itself,
    with the newest and the oldest standalone kustomize `make cluster` builds."""
    out = kustomize_exec_build(standalone.kustomize(role), example, build)
    assert out == expected_path(example, build if build != KUSTOMIZE_BUILDS[example] else None).read_text()


def test_kubectl_kustomize_skips_exec_functions_silently(kubectl: str) -> None:
    """Why docs/integrations.md sends exec users to a standalone kustomize: if this starts failing,
    kubectl has learned to run exec functions and the docs should say so."""
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
    assert IMAGE.endswith(f":{__version__}")
    assert f"docker build -t {IMAGE} ." in dockerfile
    source = re.search(r'org\.opencontainers\.image\.source="https://github\.com/([^"]+)"', dockerfile)
    assert source is not None
    assert IMAGE.startswith(f"ghcr.io/{source.group(1)}:")


def test_every_exec_wrapper_is_the_same_executable_script() -> None:
    wrappers = sorted(EXAMPLES.rglob(WRAPPER))
    assert len(wrappers) == 4
    for wrapper in wrappers:
        assert wrapper.read_bytes() == wrappers[0].read_bytes(), wrapper
        assert os.access(wrapper, os.X_OK), wrapper


def test_every_example_has_a_readme_and_a_golden() -> None:
    for example in [*KUSTOMIZE_BUILDS, "kpt", "kpt-image", *CMP_EXAMPLES]:
        assert (EXAMPLES / example / "README.md").is_file(), example
        assert (EXAMPLES / example / "expected.yaml").is_file(), example


@pytest.mark.parametrize("example", [*KUSTOMIZE_BUILDS, "kpt", "kpt-image", "argocd-cmp"])
def test_every_golden_has_each_runtime_before_the_trainjobs_using_it(example: str) -> None:
    assert_rendered(documents(expected(example)))


@pytest.mark.parametrize(("example", "build"), [*KUSTOMIZE_BUILDS.items(), *overlay_builds()])
def test_kustomize_examples_sort_runtimes_first(example: str, build: str) -> None:
    """kustomize appends what a function adds after what it was given, whatever ``order: fifo``
    says: only its legacy order, told where the runtime kinds and TrainJob go, puts them first."""
    kustomization = load(EXAMPLES / example / build / "kustomization.yaml")
    options = kustomization["sortOptions"]
    assert options["order"] == "legacy"
    first, last = options["legacySortOptions"]["orderFirst"], options["legacySortOptions"]["orderLast"]
    assert first[-2:] == ["ClusterTrainingRuntime", "TrainingRuntime"]
    assert last[0] == "TrainJob"


# kpt


def _comments(text: str) -> list[str]:
    return [line[line.index("#") :].strip() for line in text.splitlines() if "#" in line and "#!" not in line]


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
    assert_golden(EXAMPLES / "kpt" / "expected.yaml", kpt_unwrapped(kpt, tmp_path))


# After the kpt golden: under `make goldens`, the kpt-image golden follows the kpt golden just written.
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
    assert_golden(EXAMPLES / "kpt-image" / "expected.yaml", kpt_image_expected(expected("kpt")))


# Argo CD


def _discover(folder: Path) -> str:
    """plugin.yaml's discovery command in ``folder`` with plain sh; fails unless it exits 0 (Argo
    CD reports any other exit as an error)."""
    done = cmp_run("discover", folder, {})
    assert done.returncode == 0, done.stderr
    return done.stdout


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


TRAINJOB = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: a\n"
FUNCTION_CONFIG = "apiVersion: fn.trainjob-resources.io/v1alpha1\nkind: TrainJobResources\nmetadata:\n  name: f\n"
DEPLOYMENT = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
KUSTOMIZATION = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"

DISCOVERY = {
    "a TrainJob manifest below": ({"jobs/train.yaml": TRAINJOB}, True),
    "a quoted kind and a comment": ({"t.yml": TRAINJOB.replace("TrainJob", "'TrainJob' # mine")}, True),
    "a JSON TrainJob": ({"t.json": '{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob"}'}, True),
    "the transformer in a subfolder": (
        {
            "kustomization.yaml": KUSTOMIZATION + "transformers:\n- ./fn/config.yaml\n",
            "fn/config.yaml": FUNCTION_CONFIG,
        },
        True,
    ),
    "an inline transformer": (
        {"kustomization.yaml": KUSTOMIZATION + "transformers:\n  - |-\n    " + FUNCTION_CONFIG.replace("\n", "\n    ")},
        True,
    ),
    "no TrainJob": ({"web.yaml": DEPLOYMENT, "kustomization.yaml": KUSTOMIZATION + "resources:\n- web.yaml\n"}, False),
    "kinds that only start like TrainJob": ({"x.yaml": TRAINJOB.replace("TrainJob", "TrainJobTemplate")}, False),
    "a TrainJob kind inside another object": ({"x.yaml": DEPLOYMENT + "spec:\n  kind: TrainJob\n"}, False),
    "a function config the kustomization does not list": (
        {
            "kustomization.yaml": KUSTOMIZATION + "resources:\n- web.yaml\n",
            "web.yaml": DEPLOYMENT,
            "f.yaml": FUNCTION_CONFIG,
        },
        False,
    ),
    "a function config without a kustomization": ({"f.yaml": FUNCTION_CONFIG}, False),
    "an overlay of TrainJobs that does not name the function": (
        {"kustomization.yaml": KUSTOMIZATION + "resources:\n- ../../base\n"},
        False,
    ),
}


@pytest.mark.parametrize("case", list(DISCOVERY))
def test_cmp_discovery(case: str, tmp_path: Path) -> None:
    files, selected = DISCOVERY[case]
    assert bool(_discover(_write(tmp_path / "app", files)).strip()) is selected


@pytest.mark.parametrize("example", CMP_EXAMPLES)
def test_cmp_discovery_selects_each_example_and_not_an_empty_folder(example: str, tmp_path: Path) -> None:
    found = _discover(stage_source(example, tmp_path)).splitlines()
    assert found == ["./trainjobs.yaml" if example == CMP.name else "./trainjob-resources.yaml"]
    (tmp_path / "empty").mkdir()
    assert _discover(tmp_path / "empty") == "", "no TrainJob, no plugin"


@pytest.mark.parametrize("example", CMP_EXAMPLES)
def test_cmp_inits_and_generates_the_golden(example: str, kubectl: str, tmp_path: Path) -> None:
    out = cmp_generate(tmp_path, example, kubectl)
    assert_golden(EXAMPLES / example / "expected.yaml", out)
    objects = documents(out)
    assert_rendered(objects)
    namespace = argocd_env(example)["ARGOCD_APP_NAMESPACE"]
    assert {o["metadata"]["namespace"] for o in objects} == {namespace}
    assert "TrainJobResources" not in {o["kind"] for o in objects}, "the function's config is not a manifest"


def test_the_overlay_is_rendered_with_its_transformers_options() -> None:
    """The overlay's own config (trainerResources: moveToResourcesPerNode; the default is an
    error) and its patch (4 nodes) reach the output: kustomize built it, the function used its
    options."""
    objects = documents(expected("argocd-cmp-kustomize"))
    jobs = {o["metadata"]["name"]: o for o in objects if o["kind"] == "TrainJob"}
    train = jobs["resnet-train"]["spec"]
    assert train["trainer"]["numNodes"] == 4
    assert train["trainer"]["resourcesPerNode"]["limits"]["memory"] == "64Gi"
    assert train["runtimeRef"]["name"] != "torch-streaming"
    assert jobs["resnet-eval"]["spec"]["runtimeRef"]["name"] == "torch-streaming"


@pytest.mark.parametrize("example", CMP_EXAMPLES)
def test_cmp_errors_are_one_line_each_with_the_application_file_and_field(
    example: str, kubectl: str, tmp_path: Path
) -> None:
    app = stage_source(example, tmp_path)
    trainjobs = app / "trainjobs.yaml" if example == CMP.name else app / "../../base/trainjobs.yaml"
    text = trainjobs.read_text()
    bad = "memory: 64Gi" if example == CMP.name else "memory: 32Gi"
    assert bad in text
    trainjobs.write_text(text.replace(bad, bad.replace("Gi", "GB"), 1))
    env = argocd_env(example)
    done = cmp_run("generate", app, env, kustomize_provider(kubectl, tmp_path))
    assert (done.returncode, done.stdout) == (1, "")
    lines = done.stderr.splitlines()
    assert lines and all(line.startswith(f"application {env['ARGOCD_APP_NAME']}: ") for line in lines), lines
    assert lines[-1].endswith("1 error; nothing rendered")
    (problem,) = lines[:-1]
    file = "./trainjobs.yaml" if example == CMP.name else "../../base/trainjobs.yaml"  # as written
    # the line of the bad value: read from the file itself, or, through the overlay, from the base's file
    file += f":{text[: text.index(bad)].count(chr(10)) + 1}"
    assert f": error: {file}: TrainJob {env['ARGOCD_APP_NAMESPACE']}/" in problem, problem
    assert ".resources.limits.memory: " in problem, problem


def test_cmp_generate_fails_with_messages_and_no_manifests(tmp_path: Path) -> None:
    app = stage_source(CMP.name, tmp_path)
    env = {**argocd_env(), "ARGOCD_ENV_MODE": "fast"}
    done = cmp_run("generate", app, env)
    assert (done.returncode, done.stdout) == (1, "")
    assert "ARGOCD_ENV_MODE (plugin env MODE): " in done.stderr
    assert done.stderr.endswith(
        f"application {env['ARGOCD_APP_NAME']}: trainjob-resources render: 1 error; nothing rendered\n"
    )
    env = {**argocd_env(), "ARGOCD_ENV_MODEL": "x"}
    done = cmp_run("generate", app, env)
    assert (done.returncode, done.stdout) == (1, "")
    assert "unknown option ARGOCD_ENV_MODEL" in done.stderr
    assert done.stderr.startswith(f"application {env['ARGOCD_APP_NAME']}: ")


@pytest.mark.parametrize("example", CMP_EXAMPLES)
def test_the_application_names_the_plugin_and_only_known_options(example: str) -> None:
    plugin = load(CMP / "plugin.yaml")
    assert plugin["kind"] == "ConfigManagementPlugin"
    source = application(example)["spec"]["source"]
    assert source["plugin"]["name"] == plugin["metadata"]["name"]
    assert (ROOT / source["path"]).is_dir()
    assert Path(source["path"]).parts[:2] == (EXAMPLES.name, example)
    accepted = {env_name(f.alias or n) for n, f in FunctionConfig.model_fields.items()}
    assert {f"ARGOCD_ENV_{e['name']}" for e in source["plugin"].get("env") or []} <= accepted


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


def test_the_sidecar_takes_kustomize_from_argo_cds_image() -> None:
    """An init container of Argo CD's image copies its kustomize into an emptyDir that the plugin
    container mounts read-only and puts first on its PATH, before the image's own PATH."""
    init, container = sidecar_containers()
    assert re.fullmatch(r"quay\.io/argoproj/argocd:v\d+\.\d+\.\d+", init["image"])
    (mount,) = init["volumeMounts"]
    assert init["command"] == ["cp", "/usr/local/bin/kustomize", f"{mount['mountPath']}/kustomize"]
    assert init["securityContext"]["readOnlyRootFilesystem"] and init["securityContext"]["runAsUser"] == 999
    volumes = {v["name"]: v for v in load(CMP / "sidecar.yaml")["spec"]["template"]["spec"]["volumes"]}
    assert volumes[mount["name"]] == {"name": mount["name"], "emptyDir": {}}
    (plugin_mount,) = [m for m in container["volumeMounts"] if m["name"] == mount["name"]]
    assert plugin_mount["readOnly"] is True
    path = sidecar_path().split(":")
    assert path[0] == sidecar_kustomize_dir() == plugin_mount["mountPath"]
    dockerfile_path = re.search(r"^ENV PATH=([^:\s]+):\$PATH", (ROOT / "Dockerfile").read_text(), re.MULTILINE)
    assert dockerfile_path is not None
    assert path[1] == dockerfile_path.group(1), "then the image's PATH"
    assert {"/usr/local/bin", "/usr/bin", "/bin"} <= set(path[2:])


def test_the_documented_pin_sets_the_init_containers_argocd_image(tmp_path: Path) -> None:
    """sidecar.yaml's install comment rewrites the init container's image to the repo-server's."""
    text = (CMP / "sidecar.yaml").read_text()
    sed = re.search(r'--patch "\$\((sed .*sidecar\.yaml)\)"', text)
    assert sed is not None, "the install comment pipes sidecar.yaml through sed"
    assert "-o jsonpath='{.spec.template.spec.containers[?(@.name==\"argocd-repo-server\")].image}'" in text
    shutil.copy(CMP / "sidecar.yaml", tmp_path / "sidecar.yaml")
    image = "registry.example.com/mirror/argocd:v3.0.6"
    done = subprocess.run(
        ["sh", "-c", sed.group(1)],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "image": image},
        capture_output=True,
        text=True,
        check=True,
    )
    patched = yaml.safe_load(done.stdout)["spec"]["template"]["spec"]
    assert [c["image"] for c in patched["initContainers"]] == [image]
    assert [c["image"] for c in patched["containers"]] == [IMAGE]
