"""``trainjob-resources explain``: pods, effective resources and their sources, totals; goldens per format.

``make goldens`` rewrites the goldens of ``tests/testdata/explain/<case>/`` (tests/kit/golden.py); review
the diff.
"""

from __future__ import annotations

import io
import json
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from trainjob_resources.cli import explain as explain_cli
from trainjob_resources.krm.resource_list import Item, ResourceList
from trainjob_resources.kube.quantity import parse_quantity
from trainjob_resources.yamltext.yamlnodes import from_python

from tests.kit.golden import assert_golden

EXPLAIN = Path(__file__).parent / "testdata" / "explain"
CASES = sorted(p for p in EXPLAIN.iterdir() if (p / "input.yaml").is_file())
GOLDENS = {"table": "table.txt", "markdown": "markdown.md", "json": "explain.json"}
DATA_LOADER = EXPLAIN / "data-loader-sidecars" / "input.yaml"
SIDECAR_PATCH = (
    "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]"
    ".template.spec.template.spec.initContainers[0].resources"
)


def run(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, stdin: str = ""
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    code = explain_cli.main(args)
    out, err = capsys.readouterr()
    return code, out, err


def case_args(case: Path, output_format: str) -> list[str]:
    config = case / "config.yaml"
    return [
        str(case / "input.yaml"),
        "--format",
        output_format,
        *(["--config", str(config)] if config.is_file() else []),
    ]


def explain_documents(documents: list[dict[str, Any]], output_format: str = "json") -> explain_cli.Explained:
    """The pure entry point on plain objects (the last one may be a functionConfig, marked by its name)."""
    config = [d for d in documents if d["metadata"].get("name") == "fn-config"]
    items = [Item(from_python(d)) for d in documents if d not in config]
    return explain_cli.explain_resource_list(
        ResourceList(items=items, function_config=Item(from_python(config[0])) if config else None), output_format
    )


def data_loader(num_nodes: int = 4, extra: str = "") -> list[dict[str, Any]]:
    text = DATA_LOADER.read_text().replace("numNodes: 4", f"numNodes: {num_nodes}")
    return [d for d in yaml.safe_load_all(text + extra) if d]


def job_named(trainjob: dict[str, Any], name: str) -> dict[str, Any]:
    return next(j for j in trainjob["replicatedJobs"] if j["name"] == name)


# Goldens


@pytest.mark.parametrize("output_format", sorted(GOLDENS))
@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_golden(
    case: Path, output_format: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run(case_args(case, output_format), capsys, monkeypatch)
    assert (code, err) == (0, "")
    assert_golden(case / GOLDENS[output_format], out)


def _config(args: list[str]) -> str | None:
    return args[args.index("--config") + 1] if "--config" in args else None


# The Kubernetes formula, by hand


def test_pod_requests_equal_the_kubernetes_formula_computed_by_hand() -> None:
    explained = explain_documents(data_loader())
    assert not explained.failed, explained.messages
    (trainjob,) = json.loads(explained.output)["trainJobs"]
    node = job_named(trainjob, "node")
    gi, mi = Fraction(2**30), Fraction(2**20)
    # The node pod's containers, requests per resource (cpu in cores, memory in bytes, GPUs):
    loader = {"cpu": Fraction(4), "memory": 64 * gi}  # sidecar data-loader, sized by the patch
    warm_cache = {"cpu": Fraction(16), "memory": 2 * gi}  # regular init container
    metrics_agent = {"cpu": Fraction(1, 10), "memory": 128 * mi}  # sidecar
    trainer = {"cpu": Fraction(8), "memory": 32 * gi, "nvidia.com/gpu": Fraction(4)}  # resourcesPerNode
    tensorboard = {"cpu": Fraction(1, 4), "memory": 512 * mi}

    def r(container: dict[str, Fraction], name: str) -> Fraction:
        return container.get(name, Fraction(0))

    expected = {}
    for name in ("cpu", "memory", "nvidia.com/gpu"):
        # Init containers start in order: data-loader (keeps running), warm-cache (runs next to it, then
        # ends), metrics-agent (keeps running); then the containers run next to both sidecars.
        phases = [
            r(loader, name),
            r(loader, name) + r(warm_cache, name),
            r(loader, name) + r(metrics_agent, name),
            r(loader, name) + r(metrics_agent, name) + r(trainer, name) + r(tensorboard, name),
        ]
        expected[name] = max(phases)
    # cpu: max(4, 20, 4.1, 12.35) = 20 (warm-cache next to data-loader); memory: the containers' phase,
    # 64Gi + 128Mi + 32Gi + 512Mi = 98944Mi; nvidia.com/gpu: 4.
    assert expected == {"cpu": 20, "memory": 98944 * mi, "nvidia.com/gpu": 4}
    got = {name: _fraction(raw) for name, raw in node["podRequests"].items()}
    assert got == expected
    assert node["podRequests"] == {"cpu": "20", "memory": "98944Mi", "nvidia.com/gpu": "4"}
    assert node["pods"] == 4


def _fraction(raw: str) -> Fraction:
    quantity = parse_quantity(raw)
    return Fraction(quantity.coefficient) * Fraction(10) ** quantity.exponent


@pytest.mark.parametrize("num_nodes", [1, 2, 4, 16])
def test_totals_scale_with_num_nodes(num_nodes: int) -> None:
    (trainjob,) = json.loads(explain_documents(data_loader(num_nodes)).output)["trainJobs"]
    node, initializer = job_named(trainjob, "node"), job_named(trainjob, "dataset-initializer")
    assert (node["pods"], initializer["pods"]) == (num_nodes, 1)
    for total, per_pod in (("totalRequests", "podRequests"), ("totalLimits", "podLimits")):
        for name, raw in trainjob[total].items():
            expected = _fraction(node[per_pod].get(name, "0")) * num_nodes + _fraction(
                initializer[per_pod].get(name, "0")
            )
            assert _fraction(raw) == expected, (total, name)
    assert trainjob["totalRequests"]["nvidia.com/gpu"] == str(4 * num_nodes)


def test_json_shape_and_sources() -> None:
    (trainjob,) = json.loads(explain_documents(data_loader()).output)["trainJobs"]
    assert set(trainjob) == {
        "name",
        "namespace",
        "runtime",
        "replicatedJobs",
        "totalRequests",
        "totalLimits",
        "unboundedLimits",
    }
    assert trainjob["runtime"] == {"kind": "ClusterTrainingRuntime", "name": "torch-data-pipeline"}
    node = job_named(trainjob, "node")
    assert set(node) == {"name", "pods", "podRequests", "podLimits", "unboundedLimits", "containers"}
    containers = {c["name"]: c for c in node["containers"]}
    assert [(c["name"], c["role"]) for c in node["containers"]] == [
        ("data-loader", "sidecar"),
        ("warm-cache", "initContainer"),
        ("metrics-agent", "sidecar"),
        ("node", "container"),
        ("tensorboard", "container"),
    ]
    assert set(containers["data-loader"]) == {"name", "role", "requests", "limits", "sources"}
    assert containers["data-loader"]["sources"] == {
        "requests": {
            "cpu": "patch user-controller.example.com/manager",
            "memory": "patch user-controller.example.com/manager",
        },
        "limits": {"cpu": "LimitRange team-a/caps (max)", "memory": "patch user-controller.example.com/manager"},
    }
    assert containers["node"]["sources"]["requests"] == {
        "cpu": "resourcesPerNode",
        "memory": "resourcesPerNode",
        "nvidia.com/gpu": "resourcesPerNode",
    }
    assert containers["metrics-agent"]["sources"]["requests"] == {"cpu": "runtime", "memory": "runtime"}
    initializer = job_named(trainjob, "dataset-initializer")["containers"][0]
    assert initializer["requests"] == {"cpu": "2", "memory": "4Gi"}
    assert initializer["sources"]["requests"] == {"cpu": "defaulted from limits", "memory": "defaulted from limits"}


# Policy: exit codes and messages


def test_a_limit_range_max_exceeded_by_an_overridden_sidecar_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = DATA_LOADER.read_text().replace('max: {cpu: "32", memory: 128Gi}', "max: {memory: 32Gi}")
    text = text.replace('limits: {memory: 64Gi, nvidia.com/gpu: "4"}', 'limits: {memory: 32Gi, nvidia.com/gpu: "4"}')
    (tmp_path / "in.yaml").write_text(text)
    code, out, err = run([str(tmp_path / "in.yaml"), "--format", "json"], capsys, monkeypatch)
    assert code == 1
    (line,) = err.splitlines()
    # the line of the patch's limits.memory in the file: the data-loader's first "memory: 64Gi"
    at = text.index("memory: 64Gi", text.index("name: data-loader", text.index("kind: TrainJob")))
    number = text.count("\n", 0, at) + 1
    assert line == (
        f"error: {tmp_path / 'in.yaml'}:{number}: TrainJob team-a/large-dataset-training: "
        f"{SIDECAR_PATCH}.limits.memory: "
        "LimitRange team-a/caps: maximum memory usage per Container is 32Gi, but limit is 64Gi "
        "(sidecar 'data-loader' of replicated job 'node'; the limit is from patch user-controller.example.com/manager)"
    )
    assert len(json.loads(out)["trainJobs"]) == 1  # still explained: the numbers show what is too big


def test_a_resource_quota_a_single_trainjob_can_never_fit_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    quota = "---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: gpus, namespace: team-a}\n"
    quota += 'spec:\n  hard: {requests.nvidia.com/gpu: "12"}\n'
    (tmp_path / "in.yaml").write_text(DATA_LOADER.read_text() + quota)
    code, _, err = run([str(tmp_path / "in.yaml")], capsys, monkeypatch)
    assert code == 1
    assert "spec.trainer.resourcesPerNode.requests[nvidia.com/gpu]: ResourceQuota team-a/gpus: " in err
    assert "needs requests.nvidia.com/gpu 16 with all its pods running (4 x 4 (node))" in err
    # Three nodes fit.
    (tmp_path / "in.yaml").write_text(DATA_LOADER.read_text().replace("numNodes: 4", "numNodes: 3") + quota)
    assert run([str(tmp_path / "in.yaml")], capsys, monkeypatch)[0] == 0


def test_within_limits_exits_0_and_warnings_do_not_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run([str(DATA_LOADER)], capsys, monkeypatch)
    assert (code, err) == (0, "")
    assert out.startswith("TrainJob team-a/large-dataset-training (runtime ClusterTrainingRuntime torch-data-pipeline)")
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {namespacePolicy: warning}\n")
    text = DATA_LOADER.read_text().replace('max: {cpu: "32", memory: 128Gi}', "max: {memory: 32Gi}")
    (tmp_path / "in.yaml").write_text(text)
    code, _, err = run([str(tmp_path / "in.yaml"), "--config", str(config)], capsys, monkeypatch)
    assert code == 0
    assert err.startswith("warning: ") and "LimitRange team-a/caps: maximum memory usage per Container is 32Gi" in err


def test_a_trainjob_that_does_not_render_is_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "in.yaml").write_text(
        DATA_LOADER.read_text().replace(
            "- name: data-loader\n                      resources",
            "- name: data-lodaer\n                      resources",
        )
    )
    code, out, err = run([str(tmp_path / "in.yaml"), "--format", "json"], capsys, monkeypatch)
    assert code == 1
    assert json.loads(out) == {
        "trainJobs": [],
        "notExplained": [{"name": "large-dataset-training", "namespace": "team-a", "reason": "1 error (on stderr)"}],
    }
    assert "no container 'data-lodaer' among the initContainers" in err


def test_namespace_option_places_namespace_less_objects(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = DATA_LOADER.read_text().replace("  namespace: team-a\n", "")
    (tmp_path / "in.yaml").write_text(text.replace('max: {cpu: "32", memory: 128Gi}', "max: {memory: 32Gi}"))
    code, _, err = run([str(tmp_path / "in.yaml"), "--namespace", "team-b"], capsys, monkeypatch)
    assert code == 1
    assert "LimitRange team-b/caps" in err


# Bad input: a message and an exit code, never a traceback


def test_bad_input_is_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run([str(tmp_path / "missing.yaml")], capsys, monkeypatch)
    assert (code, out) == (1, "")
    assert err == f"trainjob-resources explain: error: {tmp_path / 'missing.yaml'}: no such file or folder\n"
    (tmp_path / "broken.yaml").write_text("kind: [\n")
    code, out, err = run([str(tmp_path / "broken.yaml")], capsys, monkeypatch)
    assert (code, out) == (1, "")
    assert "Traceback" not in err and "broken.yaml" in err
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {maxPerContainer: 'memory=lots'}\n")
    code, out, err = run([str(DATA_LOADER), "--config", str(config)], capsys, monkeypatch)
    assert code == 1
    assert "data.maxPerContainer.memory: functionConfig: 'lots' is not a quantity" in err
    with pytest.raises(SystemExit) as exit_info:
        explain_cli.main(["--format", "xml"])
    assert exit_info.value.code == 2


def test_stdin_and_no_trainjobs(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = run(
        ["-", "--format", "markdown"],
        capsys,
        monkeypatch,
        stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
    )
    assert (code, out, err) == (0, "No TrainJobs.\n", "")
    code, out, _ = run(["-", "--format", "json"], capsys, monkeypatch, stdin=DATA_LOADER.read_text())
    assert (code, len(json.loads(out)["trainJobs"])) == (0, 1)
