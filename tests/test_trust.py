"""The trust model (issue 30, cases 3 and 4; docs/hardening.md, "Trust model"): marks the function
writes itself, or kustomize writes while it builds, decide nothing when the input carries them.

Each class is a generated family (hypothesis), in the KRM function's input (as kpt and kustomize
give it), in plain files and in render's kustomize builds:

- ``internal.trainjob-resources.io/*`` on any object: refused, naming the object and the field;
- kustomize's previousNames leading a TrainJob to a runtime of another file or namespace: refused;
  in render, refused wherever the input carries it (render sets it from its own build only);
- a runtime saying it was derived (``derived-from``, the ``derived`` label) is still checked when a
  TrainJob names it: 512Gi against a 32Gi cap is refused, and the runtime is not dropped;
- render renames the local-config key only where it is an annotation's key or a patch's path to
  one: a ConfigMap value holding that text comes out byte for byte.
"""

from __future__ import annotations

import copy
import io
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trainjob_resources.cli import render as render_cli

from tests.examples import documents
from tests.support import render
from tests.test_stateless import LOCAL, runtime, trainjob

INTERNAL = "internal.trainjob-resources.io/"
PREVIOUS = ("internal.config.kubernetes.io/previousNames", "config.kubernetes.io/previousNames")
PATH = "internal.config.kubernetes.io/path"
PREFIXES = "internal.config.kubernetes.io/prefixes"
CAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "policy"},
    "data": {"maxPerContainer": "memory=32Gi"},
}
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

MARK_NAMES = st.sampled_from(["name", "local-config", "x", "name.0123456789abcdef", "local-config.deadbeef"])
VALUES = st.sampled_from(["true", "torch-streaming", "big-gpu", ""])


def annotated(obj: dict[str, Any], annotations: dict[str, str]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"].setdefault("annotations", {}).update(annotations)
    return out


def config_map(name: str = "settings", data: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data or {"k": "v"}}


def victim(ref: str = "big-gpu", memory: str | None = None, namespace: str = "team-b") -> dict[str, Any]:
    """Another team's TrainJob: its runtime is installed in the cluster, not in the bundle."""
    job = trainjob(memory or "16Gi", ref=ref, name="victim")
    job["metadata"]["namespace"] = namespace
    if memory is None:
        job["spec"].pop("runtimePatches")
    return job


# internal.trainjob-resources.io/* never comes from input


@SETTINGS
@given(mark=MARK_NAMES, value=VALUES, which=st.sampled_from(["runtime", "trainjob", "configmap"]))
def test_krm_input_carrying_a_mark_of_renders_is_refused_naming_the_object_and_field(
    mark: str, value: str, which: str
) -> None:
    objects = {"runtime": runtime(), "trainjob": trainjob(), "configmap": config_map()}
    objects[which] = annotated(objects[which], {INTERNAL + mark: value})
    rendered = render(list(objects.values()))
    assert rendered.code == 1
    errors = [e for e in rendered.errors() if INTERNAL in e["message"]]
    assert errors, rendered.results
    (error,) = errors
    forged = objects[which]
    assert error["resourceRef"]["name"] == forged["metadata"]["name"]
    assert error["resourceRef"]["kind"] == forged["kind"]
    assert error["field"]["path"] == f"metadata.annotations[{INTERNAL}{mark}]"
    assert forged in rendered.items, "passed through as written, never dropped"


# previousNames: kustomize's, within one build


@SETTINGS
@given(
    key=st.sampled_from(PREVIOUS),
    local=st.booleans(),
    memory=st.sampled_from([None, "16Gi"]),
    where=st.sampled_from(["file", "namespace", "stream"]),
)
def test_krm_previous_names_never_repoint_a_trainjob_of_another_file_or_namespace(
    key: str, local: bool, memory: str | None, where: str
) -> None:
    """kpt passes each file's objects with their path (and writes the output back into them): a team's
    runtime claiming another team's runtime name re-points nothing there, nor across namespaces, nor in
    kustomize's stream without files or namespaces (nothing ties the rename to the TrainJob)."""
    decoy = annotated(runtime(name="team-a-runtime", image="attacker:1"), {key: "big-gpu"})
    job = victim(memory=memory)
    if local:
        decoy = annotated(decoy, {LOCAL: "true"})
    if where == "file":
        decoy = annotated(decoy, {PATH: "team-a/runtime.yaml"})
        job = annotated(job, {PATH: "team-b/trainjob.yaml"})
    elif where == "namespace":
        decoy["metadata"]["namespace"] = "team-a"
    else:
        del job["metadata"]["namespace"]
    rendered = render([decoy, job])
    assert rendered.code == 1
    (error,) = rendered.errors()
    assert error["resourceRef"]["name"] == "victim"
    assert error["field"]["path"] == "spec.runtimeRef.name"
    assert "is not re-pointed" in error["message"]
    assert job in rendered.items, "returned exactly as written"
    assert [i["kind"] for i in rendered.items] == [decoy["kind"], "TrainJob"], "nothing derived from the decoy"


def test_krm_previous_names_within_one_file_are_followed() -> None:
    """kustomize's rename of both (one stream, no paths: the name prefix it records on both, as a
    kustomize build gives them, tests/test_kustomize_renames.py) and one file's objects are followed."""
    renamed = annotated(runtime(name="prod-torch-streaming"), {PREVIOUS[0]: "torch-streaming"})
    prefixed = {PREFIXES: "prod-"}
    for runtime_extra, trainjob_extra in (
        (prefixed, {PREVIOUS[0]: "nlp", **prefixed}),
        ({PATH: "all.yaml"}, {PATH: "all.yaml"}),
    ):
        rendered = render([annotated(renamed, runtime_extra), annotated(trainjob(), trainjob_extra)])
        assert rendered.code == 0, rendered.errors()
        (job,) = rendered.of_kind("TrainJob")
        assert job["spec"]["runtimeRef"]["name"].startswith("prod-torch-streaming")


AFFIXES = st.lists(st.sampled_from(["a-", "b-", "prod-"]), max_size=3)


@pytest.mark.slow
@SETTINGS
@given(
    runtime_prefixes=AFFIXES,
    runtime_suffixes=AFFIXES,
    trainjob_prefixes=AFFIXES,
    trainjob_suffixes=AFFIXES,
    spelling=st.sampled_from([0, 1]),
)
def test_krm_previous_names_without_files_are_followed_only_where_kustomize_ties_the_rename(
    runtime_prefixes: list[str],
    runtime_suffixes: list[str],
    trainjob_prefixes: list[str],
    trainjob_suffixes: list[str],
    spelling: int,
) -> None:
    """In a stream without files, a TrainJob follows a runtime's previousNames only where the name prefixes
    and suffixes kustomize records on both end the same way, and the runtime has some (kustomize's name
    reference fixer, prefixSuffixEquals): else refused, the TrainJob as written."""
    keys = (
        ("internal.config.kubernetes.io/prefixes", "internal.config.kubernetes.io/suffixes"),
        ("config.kubernetes.io/prefixes", "config.kubernetes.io/suffixes"),
    )[spelling]

    def affixes(prefixes: list[str], suffixes: list[str]) -> dict[str, str]:
        return {k: ",".join(v) for k, v in zip(keys, (prefixes, suffixes), strict=True) if v}

    renamed = annotated(
        runtime(name="renamed-torch-streaming"),
        {PREVIOUS[spelling]: "torch-streaming", **affixes(runtime_prefixes, runtime_suffixes)},
    )
    job = annotated(trainjob(), affixes(trainjob_prefixes, trainjob_suffixes))

    def same_ending(a: list[str], b: list[str]) -> bool:
        """kustomize's SameEndingSubSlice: an empty list matches only an empty one."""
        shorter, longer = sorted((a, b), key=len)
        return longer[len(longer) - len(shorter) :] == shorter if shorter else not longer

    tied = bool(runtime_prefixes or runtime_suffixes) and all(
        same_ending(a, b) for a, b in ((runtime_prefixes, trainjob_prefixes), (runtime_suffixes, trainjob_suffixes))
    )
    rendered = render([renamed, job])
    if tied:
        assert rendered.code == 0, rendered.errors()
        (out,) = rendered.of_kind("TrainJob")
        assert out["spec"]["runtimeRef"]["name"].startswith("renamed-torch-streaming")
        return
    assert rendered.code == 1
    (error,) = rendered.errors()
    assert error["field"]["path"] == "spec.runtimeRef.name"
    assert "nothing ties that rename to this TrainJob" in error["message"], error
    assert job in rendered.items, "returned exactly as written"


# derived-from and the derived label ask for more checking, never less


@SETTINGS
@given(
    marks=st.sampled_from(
        [
            {"annotations": {"fn.trainjob-resources.io/derived-from": "ClusterTrainingRuntime/torch-streaming"}},
            {"annotations": {"trainjob-resources.kubeflow.org/derived-from": "torch-streaming"}},
            {
                "annotations": {"fn.trainjob-resources.io/derived-from": "x"},
                "labels": {"fn.trainjob-resources.io/derived": "true"},
            },
        ]
    ),
    patched=st.booleans(),
)
def test_a_runtime_saying_it_was_derived_is_checked_when_a_trainjob_names_it(
    marks: dict[str, dict[str, str]], patched: bool
) -> None:
    forged = runtime(name="torch-streaming-0123456789", memory="512Gi")
    for field, values in marks.items():
        forged["metadata"].setdefault(field, {}).update(values)
    job = trainjob(ref="torch-streaming-0123456789", memory="600Gi")
    if not patched:
        job["spec"].pop("runtimePatches")
    rendered = render([forged, job], CAP)
    assert rendered.code == 1, rendered.results
    assert any("32Gi" in e["message"] and e["resourceRef"]["name"] == "nlp" for e in rendered.errors())
    assert forged in rendered.items, "the runtime a TrainJob names is never dropped"


RECORDS = st.fixed_dictionaries(
    {
        "prefix": st.sampled_from(["fn.trainjob-resources.io/", "trainjob-resources.kubeflow.org/"]),
        "ref": st.sampled_from([{"name": "absent"}, {"name": "tiny"}, {"name": "tiny", "kind": "TrainingRuntime"}]),
        "resources": st.sampled_from([None, "[]"]),
        "mode": st.sampled_from(["materialize", "native"]),
    }
)


@SETTINGS
@given(records=RECORDS)
def test_records_never_stand_in_for_checking_the_runtime_a_trainjob_names(records: dict[str, Any]) -> None:
    """A TrainJob's records (what an earlier render wrote on it) are undone before the checks; when the
    TrainJob then goes out as written, the runtime it names as written is checked too (a record naming
    an absent runtime let a TrainJob on a 512Gi runtime pass a 32Gi cap, exit 0)."""
    big, tiny = runtime(name="big", memory="512Gi"), runtime(name="tiny", memory="1Gi")
    job = trainjob(ref="big")
    job["spec"].pop("runtimePatches")
    annotations = {records["prefix"] + "runtime-ref": json.dumps(records["ref"])}
    if records["resources"] is not None:
        annotations[records["prefix"] + "resources"] = records["resources"]
    job["metadata"]["annotations"] = annotations
    config = copy.deepcopy(CAP)
    config["data"]["mode"] = records["mode"]
    rendered = render([big, tiny, job], config)
    (out,) = rendered.of_kind("TrainJob")
    if out["spec"]["runtimeRef"]["name"] == "big":
        assert rendered.code == 1, rendered.results
        assert any("32Gi" in e["message"] and e["resourceRef"]["name"] == "nlp" for e in rendered.errors())
    assert big in rendered.items


# render: only its own build's marks count

Render = Callable[[list[str], str | None], tuple[int, str, str]]


@pytest.fixture
def run_render(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Render:
    """``trainjob-resources render ARGS`` in-process, with ``stdin`` (None: empty): code, stdout, stderr."""

    def run(args: list[str], stdin: str | None = None) -> tuple[int, str, str]:
        for key in [k for k in os.environ if k.startswith("ARGOCD_")]:
            monkeypatch.delenv(key)
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((stdin or "").encode())))
        code = render_cli.main(args)
        out, err = capsys.readouterr()
        return code, out, err

    return run


def tenant(root: Path, runtime_doc: dict[str, Any], extra: str = "", files: dict[str, str] | None = None) -> Path:
    folder = root / "team"
    folder.mkdir(parents=True)
    (folder / "runtime.yaml").write_text(yaml.safe_dump(runtime_doc, sort_keys=False))
    (folder / "trainjob.yaml").write_text(yaml.safe_dump(victim(ref="torch-streaming", namespace="team-a")))
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    (folder / "kustomization.yaml").write_text(f"resources: [runtime.yaml, trainjob.yaml]\n{extra}")
    return folder


FORGERIES = st.sampled_from(
    [
        # (annotation on the runtime in its file, kustomization text, extra files)
        ({INTERNAL + "name": "big-gpu"}, "", {}),
        ({INTERNAL + "local-config": "true"}, "", {}),
        ({PREVIOUS[1]: "big-gpu"}, "", {}),
        ({}, f"commonAnnotations:\n  {INTERNAL}local-config: 'true'\n", {}),
        ({}, f"commonAnnotations:\n  {INTERNAL}name: big-gpu\n", {}),
        (
            {},
            "patches:\n- path: p.yaml\n",
            {
                "p.yaml": "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n"
                f"metadata:\n  name: torch-streaming\n  annotations:\n    {INTERNAL}name: big-gpu\n"
            },
        ),
        (
            {},
            "patches:\n- target: {kind: ClusterTrainingRuntime}\n  patch: |\n"
            f"    - {{op: add, path: /metadata/annotations, value: {{{INTERNAL}local-config: 'true'}}}}\n",
            {},
        ),
        ({}, f"commonAnnotations:\n  {PREVIOUS[1]}: big-gpu\n", {}),
    ]
)


@pytest.mark.slow
@SETTINGS
@given(forgery=FORGERIES)
def test_render_refuses_marks_its_build_did_not_get_from_render(
    forgery: tuple[dict[str, str], str, dict[str, str]], tmp_path_factory: pytest.TempPathFactory, run_render: Render
) -> None:
    annotations, extra, files = forgery
    root = tmp_path_factory.mktemp("repo")
    folder = tenant(root, annotated(runtime(), annotations), extra, files)
    code, out, err = run_render([str(folder), "--root", str(root)], None)
    assert (code, out) == (1, ""), err
    assert "ClusterTrainingRuntime torch-streaming: metadata.annotations[" in err
    assert "Traceback" not in err


@SETTINGS
@given(mark=st.sampled_from([INTERNAL + "name", INTERNAL + "local-config", *PREVIOUS]), stdin=st.booleans())
def test_render_refuses_a_mark_in_a_plain_file_or_on_stdin(
    mark: str, stdin: bool, tmp_path_factory: pytest.TempPathFactory, run_render: Render
) -> None:
    root = tmp_path_factory.mktemp("plain")
    text = yaml.safe_dump_all([annotated(runtime(), {mark: "big-gpu"}), victim(ref="big-gpu")], sort_keys=False)
    (root / "all.yaml").write_text(text)
    if stdin:
        code, out, err = run_render(["-"], text)
    else:
        code, out, err = run_render([str(root / "all.yaml"), "--root", str(root)], None)
    assert (code, out) == (1, ""), err
    assert f"ClusterTrainingRuntime torch-streaming: metadata.annotations[{mark}]" in err


def test_render_still_follows_its_own_rename_across_files(tmp_path: Path, run_render: Render) -> None:
    folder = tenant(tmp_path, runtime(), "namePrefix: prod-\n")
    code, out, err = run_render([str(folder), "--root", str(tmp_path)], None)
    assert code == 0 and "error" not in err, err
    (job,) = [d for d in documents(out) if d["kind"] == "TrainJob"]
    assert job["spec"]["runtimeRef"]["name"] == "prod-torch-streaming"
    assert INTERNAL not in out and "previousNames" not in out


# Only keys and paths are renamed, never data

DATA = [
    LOCAL,
    f"{LOCAL}: 'true'",
    LOCAL.replace("/", "~1"),
    f"/metadata/annotations/{LOCAL.replace('/', '~1')}",
    f"a {LOCAL} b\n{LOCAL}\n",
]


@pytest.mark.slow
@SETTINGS
@given(value=st.sampled_from(DATA), how=st.sampled_from(["file", "inline", "json6902", "resource"]))
def test_a_configmap_value_holding_the_local_config_text_survives_byte_for_byte(
    value: str, how: str, tmp_path_factory: pytest.TempPathFactory, run_render: Render
) -> None:
    root = tmp_path_factory.mktemp("data")
    folder = root / "team"
    folder.mkdir()
    base = config_map("notes", {"seed": "x"})
    patch_obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "notes"}, "data": {"text": value}}
    # a local-config object marked by the same patch: renamed as a key, so still read and not printed
    patch_obj["metadata"]["annotations"] = {"note": value}
    smp = yaml.safe_dump(patch_obj, sort_keys=False)
    ops = [{"op": "add", "path": "/data/text", "value": value}, {"op": "add", "path": "/data/copy", "value": value}]
    kustomization = "resources: [notes.yaml, local.yaml]\n"
    if how == "file":
        (folder / "p.yaml").write_text(smp)
        kustomization += "patches:\n- path: p.yaml\n"
    elif how == "inline":
        kustomization += "patches:\n- patch: " + json.dumps(smp) + "\n"
    elif how == "json6902":
        (folder / "p.yaml").write_text(yaml.safe_dump(ops))
        kustomization += "patches:\n- path: p.yaml\n  target: {kind: ConfigMap, name: notes}\n"
    else:
        base = {**patch_obj, "metadata": {"name": "notes", "annotations": {"note": value}}}
    (folder / "notes.yaml").write_text(yaml.safe_dump(base, sort_keys=False))
    (folder / "local.yaml").write_text(yaml.safe_dump(annotated(config_map("ref"), {LOCAL: "true"})))
    (folder / "kustomization.yaml").write_text(kustomization)
    code, out, err = run_render([str(folder), "--root", str(root)], None)
    assert code == 0, err
    (notes,) = [d for d in documents(out) if d["metadata"]["name"] == "notes"]
    assert notes["data"]["text"] == value
    if how == "json6902":
        assert notes["data"]["copy"] == value
    else:
        assert notes["metadata"]["annotations"]["note"] == value
    assert [d["metadata"]["name"] for d in documents(out)] == ["notes"], "the local-config one is read, not printed"
    assert INTERNAL not in out


@pytest.mark.parametrize(
    "patch",
    [
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\n  annotations:\n    "
        + LOCAL
        + ": 'true'\ndata:\n  text: "
        + LOCAL
        + "\n",
        "- {op: add, path: /metadata/annotations, value: {'" + LOCAL + "': 'true'}}\n",
        "- {op: add, path: /metadata/annotations/" + LOCAL.replace("/", "~1") + ", value: 'true'}\n",
    ],
    ids=["strategic-merge", "json6902-value", "json6902-path"],
)
def test_a_patch_that_marks_an_object_local_config_still_marks_it(
    patch: str, tmp_path: Path, run_render: Render
) -> None:
    """The rename keeps working where the key is an annotation's: the object is read, never printed."""
    folder = tmp_path / "team"
    folder.mkdir()
    notes = config_map("notes")
    notes["metadata"]["annotations"] = {"a": "b"}
    (folder / "notes.yaml").write_text(yaml.safe_dump(notes))
    (folder / "other.yaml").write_text(yaml.safe_dump(config_map("other")))
    (folder / "p.yaml").write_text(patch)
    target = "\n  target: {kind: ConfigMap, name: notes}" if patch.startswith("-") else ""
    (folder / "kustomization.yaml").write_text(
        f"resources: [notes.yaml, other.yaml]\npatches:\n- path: p.yaml{target}\n"
    )
    code, out, err = run_render([str(folder), "--root", str(tmp_path)], None)
    assert code == 0, err
    assert [d["metadata"]["name"] for d in documents(out)] == ["other"]
