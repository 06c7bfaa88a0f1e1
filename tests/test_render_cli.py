"""``trainjob-resources render``: files, folders, stdin and kustomizations in; manifests out."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from trainjob_resources.cli import render as render_cli
from trainjob_resources.cli.render import env_name
from trainjob_resources.yamltext.documents import split_documents

from tests.examples import EXAMPLES, assert_rendered, documents

DATA_LOADER = EXAMPLES / "exec-data-loader"
RUNTIME = (DATA_LOADER / "runtime.yaml").read_text()
TRAINJOB = (DATA_LOADER / "trainjob.yaml").read_text()


def run(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, stdin: str = ""
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    code = render_cli.main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def _no_argocd_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith("ARGOCD_"):
            monkeypatch.delenv(key)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def test_files_render_to_manifests_without_internal_annotations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime, trainjob = write(tmp_path / "runtime.yaml", RUNTIME), write(tmp_path / "trainjob.yaml", TRAINJOB)
    code, out, err = run([str(runtime), str(trainjob)], capsys, monkeypatch)
    assert (code, err) == (0, "")
    assert "internal.config.kubernetes.io" not in out
    objects = documents(out)
    assert [o["kind"] for o in objects] == ["ClusterTrainingRuntime", "TrainingRuntime", "TrainJob"]
    assert "annotations" not in objects[0]["metadata"]
    (job,) = assert_rendered(objects)
    (derived,) = by_kind(objects, "TrainingRuntime")
    assert job["spec"]["runtimeRef"]["name"] == derived["metadata"]["name"]
    loader = derived["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert loader["initContainers"][0]["resources"] == {"limits": {"memory": "64Gi"}, "requests": {"memory": "64Gi"}}


def test_rendering_the_output_again_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "in" / "runtime.yaml", RUNTIME)
    write(tmp_path / "in" / "trainjob.yaml", TRAINJOB)
    _, first, _ = run([str(tmp_path / "in")], capsys, monkeypatch)
    code, second, err = run(["-"], capsys, monkeypatch, stdin=first)
    assert (code, err) == (0, "")
    assert second == first


def test_folders_are_read_recursively_in_name_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "b" / "trainjob.yml", TRAINJOB)
    write(tmp_path / "a.yaml", RUNTIME)
    write(tmp_path / "c.json", json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}))
    write(tmp_path / ".hidden" / "x.yaml", "not: [valid")
    write(tmp_path / ".skipped.yaml", "not: [valid")
    write(tmp_path / "notes.txt", "not: [valid")
    code, out, err = run([str(tmp_path)], capsys, monkeypatch)
    assert code == 0
    assert err == (
        f"note: {tmp_path}: skipped hidden entries: .hidden, .skipped.yaml\n"
        f"note: {tmp_path}: skipped files that are not *.yaml, *.yml or *.json: notes.txt\n"
    ), "nothing is skipped without a word"
    kinds = [o["kind"] for o in documents(out)]
    assert kinds == ["ClusterTrainingRuntime", "TrainingRuntime", "TrainJob", "ConfigMap"]
    assert "metadata:\n  name: c\n" in out, "JSON input is written in block style"


def test_multi_document_files_lists_and_markers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (
        "# a comment before the first marker\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\ndata:\n  text: |\n    a\n    b\n...\n---\n---\n"
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: v1, kind: ConfigMap, metadata: {name: two}}\n"
        "- {apiVersion: v1, kind: ConfigMap, metadata: {name: three, annotations: {}}}\n"
    )
    code, out, err = run([str(write(tmp_path / "all.yaml", text))], capsys, monkeypatch)
    assert (code, err) == (0, "")
    objects = documents(out)
    assert [o["metadata"]["name"] for o in objects] == ["one", "two", "three"]
    assert objects[0]["data"]["text"] == "a\nb\n"
    assert objects[2]["metadata"]["annotations"] == {}, "an empty annotations map of the user's stays"
    assert "annotations" not in objects[1]["metadata"]


def test_a_yaml_directive_is_refused_with_its_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30: a %YAML directive (the multi-document test had one) is refused: go-yaml ignores it."""
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n...\n# c\n%YAML 1.1\n---\nkind: X\n"
    code, out, err = run([str(write(tmp_path / "all.yaml", text))], capsys, monkeypatch)
    assert (code, out) == (1, "")
    assert "all.yaml: the %YAML directive is refused" in err and "(line 6, column 1)" in err, err


def test_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = run(["-"], capsys, monkeypatch, stdin=RUNTIME + "---\n" + TRAINJOB)
    assert (code, err) == (0, "")
    assert_rendered(documents(out))


def test_local_config_objects_are_read_but_not_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    local = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n"
    local += '    config.kubernetes.io/local-config: "true"\n'
    code, out, _ = run(["-"], capsys, monkeypatch, stdin=RUNTIME + "---\n" + local)
    assert code == 0
    assert [o["kind"] for o in documents(out)] == ["ClusterTrainingRuntime"]


def test_split_documents_keeps_line_numbers_and_directives() -> None:
    text = "%YAML 1.1\n---\na: 1\n--- \nb: 2\n...\n# trailing\nc: 3\n"
    assert list(split_documents(text)) == [
        (0, "%YAML 1.1\n---\na: 1\n"),
        (3, "--- \nb: 2\n...\n"),
        (6, "# trailing\nc: 3\n"),
    ]
    assert list(split_documents("")) == []
    assert list(split_documents("a: '---'\nb: ---x\n")) == [(0, "a: '---'\nb: ---x\n")]


def test_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    config = write(
        tmp_path / "fn-config.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\ndata:\n  mode: native\n",
    )
    write(tmp_path / "runtime.yaml", RUNTIME)
    write(tmp_path / "trainjob.yaml", TRAINJOB)
    code, out, err = run([str(tmp_path), "--config", str(config)], capsys, monkeypatch)
    assert (code, err) == (0, "")
    objects = documents(out)
    assert [o["kind"] for o in objects] == ["ClusterTrainingRuntime", "TrainJob"], (
        "the config file itself is not an input"
    )
    assert objects[1] == yaml.safe_load(TRAINJOB), "native mode validates and changes nothing"


def test_config_file_errors_name_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write(
        tmp_path / "fn.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\ndata:\n  mdoe: native\n"
    )
    code, out, err = run(["-", "--config", str(config)], capsys, monkeypatch, stdin=RUNTIME)
    assert (code, out) == (1, "")
    assert f"{config}: ConfigMap fn: data.mdoe: functionConfig: unknown option 'mdoe'" in err
    code, out, err = run(["-", "--config", str(tmp_path / "missing.yaml")], capsys, monkeypatch, stdin=RUNTIME)
    assert (code, out) == (1, "")
    assert "no such file" in err
    two = write(tmp_path / "two.yaml", "a: 1\n---\nb: 2\n")
    code, _, err = run(["-", "--config", str(two)], capsys, monkeypatch, stdin=RUNTIME)
    assert code == 1
    assert "expected one object" in err


def test_argocd_environment(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = RUNTIME.replace("ClusterTrainingRuntime", "TrainingRuntime")
    trainjob = TRAINJOB.replace("  runtimeRef:\n", "  runtimeRef:\n    kind: TrainingRuntime\n")
    monkeypatch.setenv("ARGOCD_APP_NAME", "trainjobs")
    monkeypatch.setenv("ARGOCD_APP_NAMESPACE", "ml-team")
    monkeypatch.setenv("ARGOCD_ENV_DERIVED_RUNTIME_KIND", "TrainingRuntime")
    monkeypatch.setenv("ARGOCD_ENV_TRAINER_RESOURCES", "")
    code, out, err = run(["-", "--config-from-env"], capsys, monkeypatch, stdin=runtime + "---\n" + trainjob)
    assert (code, err) == (0, "")
    objects = documents(out)
    assert {o["metadata"]["namespace"] for o in objects} == {"ml-team"}
    assert out.startswith("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainingRuntime\nmetadata:\n  name: ")
    assert "  namespace: ml-team\n  labels:" in out.split("---")[0], "the namespace goes right after the name"
    assert_rendered(objects)

    monkeypatch.setenv("ARGOCD_ENV_MODE", "native")
    code, out, _ = run(["-", "--config-from-env"], capsys, monkeypatch, stdin=runtime + "---\n" + trainjob)
    assert code == 0
    assert by_kind(documents(out), "TrainJob")[0]["spec"]["runtimeRef"]["name"] == "pytorch-distributed"

    code, out, err = run(["-"], capsys, monkeypatch, stdin=runtime + "---\n" + trainjob)
    assert code == 0
    assert "namespace" not in out, "without --config-from-env the environment is not read"


def test_argocd_environment_errors(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARGOCD_APP_NAME", "trainjobs")
    monkeypatch.setenv("ARGOCD_ENV_MDOE", "native")
    code, out, err = run(["-", "--config-from-env"], capsys, monkeypatch, stdin=RUNTIME)
    assert (code, out) == (1, "")
    assert "unknown option ARGOCD_ENV_MDOE in the environment; accepted: " in err
    assert "ARGOCD_ENV_DERIVED_RUNTIME_KIND, " in err
    monkeypatch.delenv("ARGOCD_ENV_MDOE")
    monkeypatch.setenv("ARGOCD_ENV_MODE", "fast")
    code, out, err = run(["-", "--config-from-env"], capsys, monkeypatch, stdin=RUNTIME + "---\n" + TRAINJOB)
    assert (code, out) == (1, "")
    assert err.startswith(
        "application trainjobs: error: ARGOCD_ENV_MODE (plugin env MODE): Input should be 'materialize' or "
        "'native', got 'fast'\n"
    ), "the message names what the user wrote, not a ConfigMap they never saw"
    assert "argocd-env" not in err
    assert err.endswith("application trainjobs: trainjob-resources render: 1 error; nothing rendered\n")


def test_env_names() -> None:
    assert env_name("mode") == "ARGOCD_ENV_MODE"
    assert env_name("derivedRuntimeKind") == "ARGOCD_ENV_DERIVED_RUNTIME_KIND"


def test_every_option_can_come_from_the_environment(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARGOCD_ENV_MAX_PER_CONTAINER", "memory=32Gi")
    code, out, err = run(["-", "--config-from-env"], capsys, monkeypatch, stdin=RUNTIME + "---\n" + TRAINJOB)
    assert (code, out) == (1, "")
    assert "64Gi" in err and "32Gi" in err, "the policy option from the environment applies"


def test_validation_errors_name_file_resource_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "runtime.yaml", RUNTIME)
    write(
        tmp_path / "trainjob.yaml",
        "---\n"
        + RUNTIME.replace("pytorch-distributed", "other")
        + "---\n"
        + TRAINJOB.replace("data-loader", "data-lodaer"),
    )
    code, out, err = run([str(tmp_path)], capsys, monkeypatch)
    assert (code, out) == (1, "")
    first = err.splitlines()[0]
    text = (tmp_path / "trainjob.yaml").read_text()
    number = text[: text.index("name: data-lodaer")].count("\n") + 1  # the line of the bad container's name
    assert first.startswith(
        f"error: {tmp_path / 'trainjob.yaml'}:{number}: TrainJob large-dataset-training: spec.runtimePatches[0]"
    )
    assert "data-lodaer" in first
    assert err.endswith("nothing rendered\n")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\na: [1\n", "x.yaml: invalid YAML"),
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n",
            "x.yaml: metadata.name: duplicate mapping key 'name' (line 5)",
        ),
        ("- a\n- b\n", "x.yaml: line 1: not a Kubernetes object (the document is not a mapping)"),
        ("---\n---\nmetadata: {name: a}\n", "x.yaml: line 3: not a Kubernetes object (no apiVersion or kind)"),
        ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n", "a ResourceList: pipe it to"),
    ],
)
def test_bad_input_is_a_message(
    text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run([str(write(tmp_path / "x.yaml", text))], capsys, monkeypatch)
    assert (code, out) == (1, "")
    assert message in err
    assert "Traceback" not in err


def test_yaml_errors_count_lines_from_the_top_of_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "x.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkind: [\n")
    code, _, err = run([str(path)], capsys, monkeypatch)
    assert code == 1
    assert "(line 6, column 1)" in err


def test_missing_path_and_undecodable_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run([str(tmp_path / "nope")], capsys, monkeypatch)
    assert (code, out) == (1, "")
    assert "nope: no such file or folder" in err
    (tmp_path / "bad.yaml").write_bytes(b"kind: \xff\n")
    code, _, err = run([str(tmp_path / "bad.yaml")], capsys, monkeypatch)
    assert code == 1
    assert "not valid UTF-8" in err


def test_a_kustomization_without_kustomize_or_kubectl_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "app" / "kustomization.yaml", "resources: []\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    code, out, err = run([str(tmp_path / "app")], capsys, monkeypatch)
    assert (code, out) == (1, "")
    assert "has a kustomization; building it needs kustomize or kubectl on PATH, and neither was found" in err


def test_a_failing_kustomize_build_is_reported(
    kubectl: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "app" / "kustomization.yaml", "resources:\n- missing.yaml\n")
    monkeypatch.setenv("PATH", str(Path(kubectl).parent))
    code, out, err = run([str(tmp_path / "app")], capsys, monkeypatch)
    assert (code, out) == (1, "")
    assert err.endswith("kustomization.yaml: resources[0]: missing.yaml: no such file or folder\n"), err
    write(tmp_path / "app" / "kustomization.yaml", "patches:\n- path: missing.yaml\n")
    code, out, err = run([str(tmp_path / "app")], capsys, monkeypatch)
    assert (code, out) == (1, "")
    assert f"{tmp_path / 'app'}: `kubectl kustomize` failed (exit 1): " in err
    assert "missing.yaml" in err and str(tmp_path / "app") in err
    assert "/tmp/trainjob-resources-" not in err, "the private copy's paths are named as the repository's"
    assert len(err.splitlines()) == 1, "kustomize's stderr is summarized in one line"


def test_a_kustomization_is_built_then_rendered(
    kubectl: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(Path(kubectl).parent))
    code, out, err = run([str(EXAMPLES / "overlay-multi" / "overlays" / "prod")], capsys, monkeypatch)
    assert (code, err) == (0, "")
    objects = documents(out)
    assert_rendered(objects)
    expected = documents((EXAMPLES / "overlay-multi" / "expected.yaml").read_text())

    def key(obj: dict[str, Any]) -> str:
        return json.dumps(obj, sort_keys=True)

    assert sorted(map(key, objects)) == sorted(map(key, expected)), "same objects as kustomize running the function"


def test_a_namePrefix_overlay_renders_as_kustomize_running_the_function(
    kubectl: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain build keeps no previousNames: render keeps each runtime's name through the build, so
    renamed runtimes resolve as under kustomize (the overlay's exec golden)."""
    monkeypatch.setenv("PATH", str(Path(kubectl).parent))
    monkeypatch.chdir(EXAMPLES / "overlay-multi")
    code, out, err = run(["overlays/team-a"], capsys, monkeypatch)
    assert (code, err) == (0, "")
    expected = documents((EXAMPLES / "overlay-multi" / "overlays" / "team-a" / "expected.yaml").read_text())

    def key(obj: dict[str, Any]) -> str:
        return json.dumps(obj, sort_keys=True)

    assert sorted(map(key, documents(out))) == sorted(map(key, expected))


def test_a_message_through_an_overlay_names_the_base_file_and_line(
    kubectl: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """kustomize's origin annotation names the file; the line is the field's in that file's document,
    found by kind and name through the overlay's namePrefix (issue 32)."""
    monkeypatch.setenv("PATH", str(Path(kubectl).parent))
    bad = TRAINJOB.replace("data-loader", "data-lodaer")
    write(tmp_path / "base" / "runtime.yaml", RUNTIME)
    write(tmp_path / "base" / "trainjobs.yaml", TRAINJOB.replace("large-dataset-training", "first") + "---\n" + bad)
    write(tmp_path / "base" / "kustomization.yaml", "resources: [runtime.yaml, trainjobs.yaml]\n")
    write(tmp_path / "overlay" / "kustomization.yaml", "namePrefix: team-\nnamespace: ml\nresources: [../base]\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["overlay"], capsys, monkeypatch)
    assert (code, out) == (1, "")
    text = (tmp_path / "base" / "trainjobs.yaml").read_text()
    number = text[: text.index("name: data-lodaer")].count("\n") + 1
    first = next(line for line in err.splitlines() if line.startswith("error:"))
    assert first.startswith(f"error: base/trainjobs.yaml:{number}: TrainJob ml/team-large-dataset-training: "), err


def _runtime(kind: str, name: str, namespace: str = "") -> str:
    where = f"\n  namespace: {namespace}" if namespace else ""
    return RUNTIME.replace("kind: ClusterTrainingRuntime", f"kind: {kind}", 1).replace(
        "name: pytorch-distributed", f"name: {name}{where}", 1
    )


def test_renamed_runtimes_resolve_by_kind_and_absent_ones_stay_untouched(
    kubectl: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(Path(kubectl).parent))
    assert "kind: ClusterTrainingRuntime" in RUNTIME and "name: pytorch-distributed" in RUNTIME
    write(tmp_path / "base" / "runtime.yaml", _runtime("TrainingRuntime", "shared", "ml"))
    jobs = [
        ("to-namespaced", "{name: shared, kind: TrainingRuntime}"),
        ("to-cluster", "{name: shared}"),  # the ClusterTrainingRuntime 'shared' is not in the build
        ("to-absent", "{name: elsewhere, kind: TrainingRuntime}"),
    ]
    write(
        tmp_path / "base" / "jobs.yaml",
        "---\n".join(
            f"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {{name: {name}, namespace: ml}}\n"
            f"spec:\n  runtimeRef: {ref}\n"
            for name, ref in jobs
        ),
    )
    write(tmp_path / "base" / "kustomization.yaml", "resources: [runtime.yaml, jobs.yaml]\n")
    write(tmp_path / "overlay" / "kustomization.yaml", "namePrefix: team-\nresources: [../base]\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["overlay"], capsys, monkeypatch)
    assert code == 0, err
    objects = documents(out)
    refs = {o["metadata"]["name"]: o["spec"]["runtimeRef"] for o in by_kind(objects, "TrainJob")}
    assert refs == {
        "team-to-namespaced": {"name": "team-shared", "kind": "TrainingRuntime"},
        "team-to-cluster": {"name": "shared"},
        "team-to-absent": {"name": "elsewhere", "kind": "TrainingRuntime"},
    }
    (runtime,) = by_kind(objects, "TrainingRuntime")
    assert "annotations" not in runtime["metadata"], "render's marks and previousNames are not printed"


def test_local_config_runtimes_in_a_kustomization_are_read_not_printed(
    kubectl: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """kustomize drops local-config objects from its output; under kustomize the function still sees
    them, and so it does under render. Only real annotation keys are rewritten for the build."""
    monkeypatch.setenv("PATH", str(Path(kubectl).parent))
    local = RUNTIME.replace(
        "metadata:\n", 'metadata:\n  annotations: {"config.kubernetes.io/local-config": "true"}\n', 1
    )
    assert local != RUNTIME
    write(tmp_path / "runtime.yaml", local)
    write(tmp_path / "trainjob.yaml", TRAINJOB)
    text = "config.kubernetes.io/local-config: true\n"
    write(tmp_path / "data.yaml", text)
    write(
        tmp_path / "cm.yaml",
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: notes}}\ndata:\n  note: {json.dumps(text)}\n",
    )
    write(
        tmp_path / "kustomization.yaml",
        "resources: [runtime.yaml, trainjob.yaml, cm.yaml]\n"
        "configMapGenerator: [{name: gen, files: [data.yaml], options: {disableNameSuffixHash: true}}]\n",
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["."], capsys, monkeypatch)
    assert code == 0, err
    objects = documents(out)
    assert not by_kind(objects, "ClusterTrainingRuntime"), "the local-config runtime is not printed"
    assert by_kind(objects, "TrainingRuntime"), "the TrainJob was materialized against it"
    data = {o["metadata"]["name"]: o["data"] for o in by_kind(objects, "ConfigMap")}
    assert data == {"notes": {"note": text}, "gen": {"data.yaml": text}}


def test_help_and_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        render_cli.main(["--help"])
    assert exit_info.value.code == 0
    assert "ARGOCD_ENV_" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        render_cli.main(["--bogus"])
    assert exit_info.value.code == 2


def test_the_entry_point_and_a_light_import() -> None:
    done = subprocess.run(
        [
            Path(sys.executable).parent / "trainjob-resources",
            "render",
            str(DATA_LOADER / "runtime.yaml"),
            str(DATA_LOADER / "trainjob.yaml"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert_rendered(documents(done.stdout))
    probe = "import sys, trainjob_resources.cli.render; print(sorted({'yaml', 'pydantic'} & set(sys.modules)))"
    imported = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert imported.strip() == "[]"


def test_namespace_default_reaches_limit_ranges(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An Argo CD app's objects often name no namespace: its LimitRange must still guard its TrainJobs."""
    limit_range = """\
apiVersion: v1
kind: LimitRange
metadata:
  name: caps
spec:
  limits:
  - type: Container
    max:
      memory: 32Gi
"""
    stdin = RUNTIME + "---\n" + TRAINJOB + "---\n" + limit_range
    code, _, err = run(["-", "--namespace", "ml-team"], capsys, monkeypatch, stdin=stdin)
    assert code == 1
    assert "LimitRange ml-team/caps" in err
    code, _, err = run(["-"], capsys, monkeypatch, stdin=stdin.replace("memory: 32Gi", "memory: 128Gi"))
    assert code == 0, err


@pytest.mark.parametrize(
    ("kustomization", "message"),
    [
        ("Resources: [../../../../tmp/victim]\n", "Resources: not a kustomization field"),
        ("<<: {resources: [../../../../tmp/victim]}\n", "a YAML merge key (<<)"),
        ("resources: [cm.yaml]\nresources: [../../../../tmp/victim]\n", "duplicate mapping key 'resources'"),
        ("configMapGenerator: [{name: a, files: [k=http://127.0.0.1:9/x]}]\n", "k=http://127.0.0.1:9/x: a URL"),
        ("secretGenerator: [{name: a, envs: [https://127.0.0.1:9/x]}]\n", "https://127.0.0.1:9/x: a URL"),
        ("patches: [{path: http://127.0.0.1:9/p.yaml}]\n", "http://127.0.0.1:9/p.yaml: a URL"),
        ("patchesStrategicMerge: [http://127.0.0.1:9/p.yaml]\n", "http://127.0.0.1:9/p.yaml: a URL"),
        ("openapi: {path: /etc/passwd}\n", "/etc/passwd: a URL or absolute path"),
        ("crds: [http://127.0.0.1:9/c.json]\n", "http://127.0.0.1:9/c.json: a URL"),
        ("configurations: [http://127.0.0.1:9/c.yaml]\n", "http://127.0.0.1:9/c.yaml: a URL"),
        ("replacements: [{path: http://127.0.0.1:9/r.yaml}]\n", "http://127.0.0.1:9/r.yaml: a URL"),
    ],
)
def test_a_kustomization_read_otherwise_by_kustomize_or_naming_urls_is_refused(
    kustomization: str,
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Go reads field names case-insensitively, merge keys and the last of duplicate keys; kustomize
    fetches URLs in every file field: render refuses each before kustomize runs."""
    write(tmp_path / "app" / "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    write(tmp_path / "app" / "kustomization.yaml", kustomization)
    monkeypatch.chdir(tmp_path / "app")
    code, out, err = run(["."], capsys, monkeypatch)
    assert (code, out) == (1, "")
    assert f"./kustomization.yaml: {message}" in err


def test_urls_in_annotations_and_literals_are_values_not_files(
    kubectl: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(Path(kubectl).parent))
    write(tmp_path / "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    write(
        tmp_path / "kustomization.yaml",
        "resources: [cm.yaml]\ncommonAnnotations: {path: 'https://example.com/docs'}\n"
        "configMapGenerator: [{name: b, literals: [path=https://example.com/x]}]\n",
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["."], capsys, monkeypatch)
    assert code == 0, err
    assert "https://example.com/docs" in out and "https://example.com/x" in out
