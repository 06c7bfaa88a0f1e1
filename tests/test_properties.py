"""Properties (issue 7, item 2), on generated runtimes, patches and bundles:

(a) merging is what ``kubectl patch --local --type strategic`` does;
(b) rendering twice is a fixed point;
(c) items the function does not change come back equal, node for node, styles included;
(d) a failing TrainJob comes back exactly as written, with its errors, and nothing is dropped;
(e) the output does not depend on PYTHONHASHSEED;
(f) writing changed items as edits of their text (textedit.py) says what serializing them says,
    whatever the layout and comments of the input.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from trainjob_resources import process
from trainjob_resources.derive.provenance import DERIVED_FROM
from trainjob_resources.krm import resource_list as krm
from trainjob_resources.kube.merge import compose_patches, merge_requirements
from trainjob_resources.yamltext import textedit
from trainjob_resources.yamltext import yamlnodes as yn

from tests.goldens import run_function
from tests.hostile import CONFIG_MAP, HEADER, RUNTIME, assert_sane, bundle, load, trainjob_value, trainjob_yaml
from tests.kit import build
from tests.support import GoSafeDumper, kubectl_patch, trainer_runtime

# Quantities in apimachinery's canonical form, so kubectl's output spells them as we wrote them.
QUANTITIES = st.one_of(
    st.integers(1, 999).map(lambda n: f"{n}m"),
    st.integers(1, 64).map(str),
    st.tuples(st.integers(1, 1023), st.sampled_from(["Ki", "Mi", "Gi"])).map(lambda t: f"{t[0]}{t[1]}"),
    st.tuples(st.integers(1, 999), st.sampled_from(["k", "M", "G"])).map(lambda t: f"{t[0]}{t[1]}"),
)
WORDS = st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6)
RESOURCE_NAMES = st.one_of(
    st.sampled_from(["cpu", "memory", "ephemeral-storage", "nvidia.com/gpu", "hugepages-2Mi"]),
    st.tuples(WORDS, WORDS).map(lambda t: f"{t[0]}.example.com/{t[1]}"),
)


def resource_map(values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(RESOURCE_NAMES, values, max_size=4)


RUNTIME_RESOURCES = st.fixed_dictionaries(
    {}, optional={"limits": resource_map(QUANTITIES), "requests": resource_map(QUANTITIES)}
)
PATCH_MAPS = st.one_of(st.none(), resource_map(st.one_of(QUANTITIES, st.none())))
PATCHES = st.fixed_dictionaries({}, optional={"limits": PATCH_MAPS, "requests": PATCH_MAPS})
PATCH_SEQUENCES = st.lists(PATCHES, min_size=1, max_size=3)
MERGE_EXAMPLES = st.lists(st.tuples(RUNTIME_RESOURCES, PATCH_SEQUENCES), min_size=1, max_size=30)


def kubectl_batch(kubectl: str, examples: list[tuple[dict[str, Any], list[dict[str, Any]]]], tmp: Path) -> list[Any]:
    """One Pod, one container per example; patch step i carries every example's i-th patch."""
    containers = [
        {"name": f"c{i}", "image": "busybox", **({"resources": runtime} if runtime else {})}
        for i, (runtime, _) in enumerate(examples)
    ]
    pod: Any = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": containers}}
    path = tmp / "pod.json"
    for step in range(max(len(patches) for _, patches in examples)):
        entries = [
            {"name": f"c{i}", "resources": patches[step]}
            for i, (_, patches) in enumerate(examples)
            if step < len(patches)
        ]
        pod = kubectl_patch(kubectl, pod, {"spec": {"containers": entries}}, path)
    by_name = {c["name"]: c.get("resources") or {} for c in pod["spec"]["containers"]}
    return [by_name[f"c{i}"] for i in range(len(examples))]


def without_empty(resources: dict[str, Any]) -> dict[str, Any]:
    """kubectl keeps ``requests: {}``; stored objects drop it (``omitempty``): both mean the same."""
    return {k: v for k, v in resources.items() if v not in ({}, None)}


@pytest.mark.kubectl
@settings(max_examples=8)
@given(examples=MERGE_EXAMPLES)
def test_merging_is_kubectl_strategic_merge(
    kubectl: str, tmp_path_factory: pytest.TempPathFactory, examples: list[tuple[dict[str, Any], list[Any]]]
) -> None:
    expected = kubectl_batch(kubectl, examples, tmp_path_factory.mktemp("merge"))
    for (runtime, patches), theirs in zip(examples, expected, strict=True):
        ours: dict[str, Any] = dict(runtime)
        for patch in patches:
            ours = merge_requirements(ours, patch)
        assert ours == without_empty(theirs), (runtime, patches)


def _deletes_then_sets(patches: list[dict[str, Any]]) -> bool:
    """A map deleted by ``null`` and set again later: one strategic merge patch cannot say that."""
    return any(
        earlier.get(key, 0) is None and isinstance(later.get(key), dict)
        for i, earlier in enumerate(patches)
        for later in patches[i + 1 :]
        for key in ("limits", "requests")
    )


@given(runtime=RUNTIME_RESOURCES, patches=PATCH_SEQUENCES)
def test_composed_patches_apply_like_the_sequence(runtime: dict[str, Any], patches: list[dict[str, Any]]) -> None:
    if _deletes_then_sets(patches):
        return
    applied: dict[str, Any] = dict(runtime)
    composed: dict[str, Any] = {}
    for patch in patches:
        applied = merge_requirements(applied, patch)
        composed = compose_patches(composed, patch)
    assert merge_requirements(runtime, composed) == applied


def test_composing_a_deletion_then_a_map() -> None:
    runtime = {"requests": {"cpu": "1"}}
    patches: list[dict[str, Any]] = [{"requests": None}, {"requests": {}}]
    composed: dict[str, Any] = {}
    for patch in patches:
        composed = compose_patches(composed, patch)
    assert merge_requirements(runtime, composed) == {}


# Bundles: one runtime with sidecars, TrainJobs patching them, and unrelated items in any style.

SIDECARS = ["loader", "metrics", "proxy"]
MEMORY = st.integers(1, 64).map(lambda n: f"{n}Gi")
CPU = st.sampled_from(["100m", "250m", "500m", "1", "2"])


@st.composite
def sidecar_resources(draw: st.DrawFn, big: bool) -> dict[str, Any]:
    """Requests never above limits, and patches ("big") above what the runtime asks."""
    out: dict[str, Any] = {}
    memory = draw(st.integers(8, 64) if big else st.integers(1, 4))
    if draw(st.booleans()):
        out["limits"] = {"memory": f"{memory}Gi"}
    if draw(st.booleans()):
        out["requests"] = {"cpu": draw(CPU), "memory": f"{draw(st.integers(1, memory))}Gi"}
    if big and draw(st.integers(0, 5)) == 0:
        out.setdefault("requests", {})["cpu"] = None
    return out


@st.composite
def runtimes(draw: st.DrawFn) -> dict[str, Any]:
    sidecars = [
        {"name": n, "image": "busybox", "restartPolicy": "Always", "resources": draw(sidecar_resources(big=False))}
        for n in SIDECARS
    ]
    return trainer_runtime(
        "torch", sidecars, image="pytorch/pytorch", labels={"trainer.kubeflow.org/framework": "torch"}
    )


@st.composite
def trainjobs(draw: st.DrawFn, name: str, failing: bool = False) -> dict[str, Any]:
    patches = []
    for m in range(draw(st.integers(0, 3))):
        containers = [
            {"name": n, "resources": draw(sidecar_resources(big=True))}
            for n in draw(st.lists(st.sampled_from(SIDECARS), min_size=1, max_size=3, unique=True))
        ]
        node = build.replicated_job("node", {"initContainers": containers})
        patches.append(build.runtime_patch(node, manager=f"team{m}.example.com/tuner"))
    if failing:
        bad = draw(st.sampled_from(["unknown container", "negative", "bad quantity", "unknown field"]))
        container: dict[str, Any] = {"name": "loader", "resources": {"limits": {"memory": "-1Gi"}}}
        if bad == "unknown container":
            container = {"name": "no-such-sidecar", "resources": {"limits": {"memory": "1Gi"}}}
        elif bad == "bad quantity":
            container["resources"] = {"limits": {"memory": "64 GiB"}}
        elif bad == "unknown field":
            container["resourcez"] = {}
        patches.append(build.container_patch("node", "initContainers", container, manager="broken.example.com/tuner"))
    namespace = draw(st.sampled_from(["team-a", "team-b"]))
    return build.trainjob(name, "torch", patches or None, namespace=namespace)


SCALARS = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["true", "no", "0755", "1e3", "null", "~", "2024-01-01", "0x1F", "1:30", "- x", "a: b", "#c"]),
    st.integers(-(2**63), 2**63 - 1),  # past 64 bits go-yaml reads a float: refused (test_yaml_oracle.py)
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
)
DATA = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(min_size=1, max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def other_items(draw: st.DrawFn, index: int) -> str:
    """An unrelated item as users write it: any mix of block and flow, plain and quoted."""
    item = {
        "apiVersion": draw(st.sampled_from(["v1", "apps/v1", "example.com/v1", "trainer.kubeflow.org/v2"])),
        "kind": draw(st.sampled_from(["ConfigMap", "Secret", "Widget", "TrainJob"])),
        "metadata": {"name": f"other-{index}"},
        "data": draw(DATA),
    }
    style = draw(st.sampled_from([None, '"', "'"]))
    flow = draw(st.sampled_from([False, True, None]))
    # Written as a go-yaml-aware writer writes it (support.GoSafeDumper): PyYAML's own writer leaves a
    # string like 1e3 plain, which go-yaml reads as a number and the function refuses (issue 30).
    text = yaml.dump(
        [item], Dumper=GoSafeDumper, default_style=style, default_flow_style=flow, allow_unicode=draw(st.booleans())
    )
    return text if text.startswith("- ") else "- " + text.lstrip("[").rstrip("]\n") + "\n"


@st.composite
def bundles(draw: st.DrawFn, failing: int = 0) -> bytes:
    parts = [yaml.safe_dump([draw(runtimes())], sort_keys=False)]
    count = draw(st.integers(1, 4))
    for i in range(count):
        parts.append(yaml.safe_dump([draw(trainjobs(f"job-{i}"))], sort_keys=False))
    for i in range(failing):
        parts.append(yaml.safe_dump([draw(trainjobs(f"broken-{i}", failing=True))], sort_keys=False))
    parts += [draw(other_items(i)) for i in range(draw(st.integers(0, 3)))]
    order = draw(st.permutations(range(len(parts))))
    return HEADER + b"items:\n" + "".join(parts[i] for i in order).encode()


def item_nodes(document: bytes) -> list[Any]:
    root = yn.compose(document.decode())
    items = yn.get(root, "items")
    return list(items.value) if items is not None else []


def node_text(node: Any) -> str:
    """An item's node tree written out: equal text means equal content and scalar styles."""
    return yn.serialize(node)


def items_section(output: bytes) -> bytes:
    return output.split(b"\nresults:\n", 1)[0]


@pytest.mark.slow
@given(data=bundles())
def test_rendering_twice_is_a_fixed_point(data: bytes) -> None:
    """Resource names are generated in sorted order: see test_rerendering_keeps_the_order_of_resource_names."""
    code, first, stderr = run_function(data)
    assert_sane(code, first, stderr)
    again, second, stderr = run_function(first)
    assert_sane(again, second, stderr)
    assert again == code
    assert items_section(second) == items_section(first)


def test_rerendering_keeps_the_order_of_resource_names() -> None:
    job = trainjob_value("t", "64Gi")
    container = job["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
    container["template"]["spec"]["template"]["spec"]["initContainers"][0]["resources"] = {
        "requests": {"memory": "1Gi", "cpu": "100m"}
    }
    runtime = RUNTIME.replace("resources: {limits: {memory: 8Gi}, requests: {memory: 8Gi}}", "resources: {}")
    first = run_function(bundle(runtime, trainjob_yaml(job)))[1]
    assert items_section(run_function(first)[1]) == items_section(first)


@pytest.mark.slow
@given(data=bundles())
def test_items_the_function_does_not_change_come_back_node_for_node(data: bytes) -> None:
    code, out, stderr = run_function(data)
    assert_sane(code, out, stderr)
    written = [node_text(n) for n in item_nodes(out)]
    for node in item_nodes(data):
        kind = yn.scalar(yn.get(node, "kind"))
        api = yn.scalar(yn.get(node, "apiVersion")) or ""
        if kind == "TrainJob" and api.startswith("trainer.kubeflow.org/v1"):
            continue
        assert node_text(node) in written, node_text(node)


@pytest.mark.slow
@given(data=bundles(failing=2))
def test_a_failing_trainjob_comes_back_as_written_and_nothing_is_dropped(data: bytes) -> None:
    code, out, stderr = run_function(data)
    output = assert_sane(code, out, stderr)
    assert code == 1
    errors = [r for r in output["results"] if r["severity"] == "error"]
    written = {node_text(n) for n in item_nodes(out)}
    inputs = item_nodes(data)
    for node in inputs:
        name = yn.scalar(yn.get_path(node, "metadata", "name")) or ""
        if yn.scalar(yn.get(node, "kind")) == "TrainJob" and name.startswith("broken-"):
            assert any(r.get("resourceRef", {}).get("name") == name for r in errors), name
            assert node_text(node) in written, name

    def identity(item: dict[str, Any]) -> tuple[str, str, str]:
        return (item["kind"], item["metadata"].get("namespace", ""), item["metadata"]["name"])

    after = [identity(i) for i in output["items"]]
    before = [identity(i) for i in load(data)["items"]]
    assert set(before) <= set(after)
    derived = [i for i in output["items"] if DERIVED_FROM in (i["metadata"].get("annotations") or {})]
    assert len(after) == len(before) + len(derived)


def hash_seed_bundle() -> bytes:
    """Several TrainJobs in two namespaces (shared and distinct overrides), a failing one, unrelated items."""
    runtime = RUNTIME
    jobs = []
    for i, (namespace, memory) in enumerate(
        [("team-a", "64Gi"), ("team-b", "64Gi"), ("team-a", "64Gi"), ("team-b", "32Gi"), ("team-a", "16Gi")]
    ):
        job = trainjob_value(f"job-{i}", memory)
        job["metadata"]["namespace"] = namespace
        jobs.append(trainjob_yaml(job))
    jobs.append(trainjob_yaml(trainjob_value("broken", "-1Gi")))
    return bundle(
        runtime, *jobs, CONFIG_MAP, "- {apiVersion: v1, kind: Widget, metadata: {name: w}, set: {b: 1, a: 2, c: 3}}\n"
    )


@pytest.mark.slow
def test_output_does_not_depend_on_the_hash_seed() -> None:
    first = hash_seed_bundle()
    rerender = run_function(first)[1]
    for data in (first, rerender):
        outputs = set()
        for seed in ("0", "1", "42", "4294967295"):
            env = {**os.environ, "PYTHONHASHSEED": seed}
            done = subprocess.run(
                [sys.executable, "-m", "trainjob_resources"], input=data, capture_output=True, env=env, check=False
            )
            assert done.returncode == 1, done.stderr[-2000:]
            outputs.add((done.stdout, done.stderr))
        assert len(outputs) == 1


@st.composite
def restyled(draw: st.DrawFn, value: dict[str, Any]) -> str:
    """One item as users lay it out: key order, indentation, flow leaves, comment lines and
    end-of-line comments anywhere."""
    text = yaml.safe_dump(
        [value],
        sort_keys=draw(st.booleans()),
        default_flow_style=draw(st.sampled_from([False, None])),
        indent=draw(st.sampled_from([2, 3, 4])),
        width=1 << 20,
    )
    out = []
    for line in text.splitlines():
        if draw(st.integers(0, 5)) == 0:
            out.append(" " * draw(st.integers(0, 10)) + "# a note")
        out.append(line + ("  # why" if draw(st.integers(0, 5)) == 0 else ""))
    return "\n".join(out) + "\n"


@st.composite
def restyled_bundles(draw: st.DrawFn) -> bytes:
    parts = [draw(restyled(draw(runtimes())))]
    for i in range(draw(st.integers(1, 4))):
        parts.append(draw(restyled(draw(trainjobs(f"job-{i}")))))
    parts.append(draw(restyled(draw(trainjobs("broken", failing=True)))))
    return HEADER + b"items:\n" + "".join(parts).encode()


def render_in_process(data: bytes) -> Any:
    return yn.to_python(yn.compose(krm.write(process.process(krm.read(data))).decode()))


@pytest.mark.slow
@given(data=restyled_bundles())
def test_edited_text_says_what_serializing_says(data: bytes) -> None:
    edited = render_in_process(data)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(textedit, "render", lambda text, root, another=False: None)
        serialized = render_in_process(data)
    assert edited == serialized
    again = krm.write(process.process(krm.read(krm.write(process.process(krm.read(data))))))
    assert yn.to_python(yn.compose(again.decode()))["items"] == edited["items"]
