"""Differential tests (issue 21): ``render`` decides as the programs that act on its decision decide.

* kustomize: a loopback HTTP server (127.0.0.1 only) records every connection while the real
  kustomize builds a generated kustomization (kubectl's, any ``kustomize`` on PATH, and the
  standalone builds that ``make cluster`` lists in paths.json); whenever kustomize fetches, render
  must refuse the kustomization, and must not fetch itself; what kustomize reads locally, render builds.
* kubectl: ``kubectl create --dry-run=client -o json`` reads render's inputs and outputs, with the
  same loopback server answering discovery (no cluster needed), so kubectl's own YAML reader (go-yaml
  v2 via sigs.k8s.io/yaml) and list expansion are the oracle: what kubectl would apply is what render
  checked, or render refuses.
"""

from __future__ import annotations

import glob
import http.server
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.examples import EXAMPLES
from tests.test_render_hostile import RUNTIME, TRAINJOB, render, write

_DISCOVERY: dict[str, Any] = {
    "/api": {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []},
    "/api/v1": {
        "kind": "APIResourceList",
        "groupVersion": "v1",
        "resources": [
            {"name": f"{plural}", "singularName": kind.lower(), "namespaced": True, "kind": kind, "verbs": ["create"]}
            for plural, kind in (
                ("configmaps", "ConfigMap"),
                ("limitranges", "LimitRange"),
                ("resourcequotas", "ResourceQuota"),
            )
        ],
    },
    "/apis": {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [
            {
                "name": "trainer.kubeflow.org",
                "versions": [{"groupVersion": "trainer.kubeflow.org/v1alpha1", "version": "v1alpha1"}],
                "preferredVersion": {"groupVersion": "trainer.kubeflow.org/v1alpha1", "version": "v1alpha1"},
            }
        ],
    },
    "/apis/trainer.kubeflow.org/v1alpha1": {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": "trainer.kubeflow.org/v1alpha1",
        "resources": [
            {"name": plural, "singularName": kind.lower(), "namespaced": namespaced, "kind": kind, "verbs": ["create"]}
            for plural, kind, namespaced in (
                ("trainjobs", "TrainJob", True),
                ("trainingruntimes", "TrainingRuntime", True),
                ("clustertrainingruntimes", "ClusterTrainingRuntime", False),
            )
        ],
    },
    "/version": {"major": "1", "minor": "32", "gitVersion": "v1.32.0"},
}
LEAKED = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: leaked-from-the-network\n"


class Loopback:
    """An HTTP server on 127.0.0.1 (an ephemeral port): kubectl's discovery, and a record of every
    other connection and request (what kustomize fetched). Sockets time out; at most 1,000 requests."""

    def __init__(self) -> None:
        self.connections = 0
        self.fetched: list[str] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            timeout = 5

            def setup(self) -> None:
                super().setup()
                owner.connections += 1

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                if path in _DISCOVERY:
                    owner.connections -= 1  # kubectl's discovery: not a fetch
                    body = json.dumps(_DISCOVERY[path]).encode()
                else:
                    owner.fetched.append(self.path)
                    body = LEAKED.encode() if path.endswith(".yaml") else b"leaked-from-the-network"
                if len(owner.fetched) > 1000:
                    body = b""
                code = 404 if path.startswith("/openapi") else 200
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: object) -> None:
                return None

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def reset(self) -> None:
        self.connections = 0
        self.fetched = []


@pytest.fixture(scope="module")
def loopback() -> Iterator[Loopback]:
    server = Loopback()
    server.thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()


STANDALONE = "kustomize-"  # the prefix of the names kustomizes() gives the standalone builds


def kustomizes() -> list[tuple[str, list[str]]]:
    """Every kustomize there is to compare with: kubectl's, PATH's, and the cluster build's standalone ones."""
    found: list[tuple[str, list[str]]] = []
    kubectl = shutil.which("kubectl")
    if kubectl:
        found.append(("kubectl-kustomize", [kubectl, "kustomize"]))
    on_path = shutil.which("kustomize")
    if on_path and "kustomize-stand-in" not in on_path:
        found.append(("kustomize", [on_path, "build"]))
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "trainjob-resources" / "cluster"
    for paths in sorted(glob.glob(str(cache / "current" / "paths.json"))):
        builds = json.loads(Path(paths).read_text()).get("kustomize", {})
        for version, binary in sorted(builds.items() if isinstance(builds, dict) else []):
            if os.access(binary, os.X_OK):
                found.append((f"{STANDALONE}{version}", [binary, "build"]))
    return found


KUSTOMIZES = kustomizes()
# Each kustomize as a parameter with the marker of the real program it is: kubectl's, or one on PATH
# (pyproject's kubectl marker covers both), or a standalone build of `make cluster`.
KUSTOMIZE_PARAMS = [
    pytest.param(tool, id=tool[0], marks=pytest.mark.cluster if tool[0].startswith(STANDALONE) else pytest.mark.kubectl)
    for tool in KUSTOMIZES
]


def build(argv: list[str], folder: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """The real kustomize on ``folder``, as a user would run it (no proxy; loopback is reachable)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "NO_PROXY": "*"}
    return subprocess.run(
        [*argv, str(folder)], capture_output=True, text=True, timeout=60, env=env, cwd=folder, check=False
    )


# Kustomizations whose files kustomize fetches (PORT: the loopback server). Each case's own spelling.
FETCHED = {
    "url-beside-a-decoy-folder": {
        "kustomization.yaml": "resources:\n- cm.yaml\n- http://127.0.0.1:PORT/leak.yaml\n",
        "http:/127.0.0.1:PORT/leak.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: decoy\n",
    },
    "upper-case-scheme-beside-a-decoy": {
        "kustomization.yaml": "resources:\n- cm.yaml\n- HTTP://127.0.0.1:PORT/upper.yaml\n",
        "HTTP:/127.0.0.1:PORT/upper.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: decoy\n",
    },
    "generator-files-long-s": {
        "kustomization.yaml": "resources:\n- cm.yaml\nconfigMapGenerator:\n- name: x\n  file\u017f:\n"
        "  - http://127.0.0.1:PORT/creds\n",
    },
    "generator-files-key-equals-url": {
        "kustomization.yaml": "resources:\n- cm.yaml\nsecretGenerator:\n- name: x\n  files:\n"
        "  - token=http://127.0.0.1:PORT/token\n",
    },
    "generator-envs-long-s": {
        "kustomization.yaml": "resources:\n- cm.yaml\nconfigMapGenerator:\n- name: x\n  env\u017f:\n"
        "  - http://127.0.0.1:PORT/env\n",
    },
    "patch-path-url": {
        "kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- path: http://127.0.0.1:PORT/patch.yaml\n",
    },
}
# What kustomize reads from the disk: render builds it, and neither fetches.
LOCAL = {
    "plain-files": {"kustomization.yaml": "resources:\n- cm.yaml\n"},
    "generator-files": {
        "kustomization.yaml": "resources:\n- cm.yaml\nconfigMapGenerator:\n- name: x\n  files:\n  - creds.txt\n",
        "creds.txt": "local\n",
    },
    "a-folder-named-like-a-host": {
        "kustomization.yaml": "resources:\n- cm.yaml\n- example.com/base\n",
        "example.com/base/kustomization.yaml": "resources:\n- other.yaml\n",
        "example.com/base/other.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n",
    },
}
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\ndata:\n  a: b\n"


def tree(root: Path, files: dict[str, str], port: int) -> Path:
    for name, text in {"cm.yaml": CM, **files}.items():
        target = root / name.replace("PORT", str(port))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text.replace("PORT", str(port)))
    return root


@pytest.mark.skipif(not KUSTOMIZES, reason="no kustomize (kubectl's or standalone) to compare with")
@pytest.mark.parametrize("tool", KUSTOMIZE_PARAMS)
@pytest.mark.parametrize("case", sorted(FETCHED))
def test_what_kustomize_fetches_render_refuses_and_never_fetches(
    case: str, tool: tuple[str, list[str]], loopback: Loopback, tmp_path: Path
) -> None:
    folder = tree(tmp_path / "repo", FETCHED[case], loopback.port)
    loopback.reset()
    build(tool[1], folder, tmp_path)
    assert loopback.connections > 0, f"{tool[0]} did not fetch in {case}: the case no longer shows what it claims"
    loopback.reset()
    out = render(folder)
    assert (out.code, out.stdout) == (1, ""), out
    assert "fetches nothing" in out.stderr or "non-ASCII letters" in out.stderr, out
    assert loopback.connections == 0 and loopback.fetched == [], "render (or its kustomize) reached the network"


@pytest.mark.skipif(not KUSTOMIZES, reason="no kustomize (kubectl's or standalone) to compare with")
@pytest.mark.parametrize("tool", KUSTOMIZE_PARAMS)
@pytest.mark.parametrize("case", sorted(LOCAL))
def test_what_kustomize_reads_locally_render_builds_the_same(
    case: str, tool: tuple[str, list[str]], loopback: Loopback, tmp_path: Path
) -> None:
    folder = tree(tmp_path / "repo", LOCAL[case], loopback.port)
    loopback.reset()
    built = build(tool[1], folder, tmp_path)
    assert built.returncode == 0 and loopback.connections == 0, built.stderr
    out = render(folder)
    assert out.code == 0 and loopback.connections == 0, out
    names = lambda text: sorted(d["metadata"]["name"] for d in yaml.safe_load_all(text) if d)  # noqa: E731
    assert names(out.stdout) == names(built.stdout)


# kubectl as the oracle for YAML


def kubectl_reads(text: str, loopback: Loopback, work: Path) -> list[dict[str, Any]]:
    """The objects kubectl would send for ``text``, as JSON (``create --dry-run=client``)."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not on PATH")
    source = work / f"kubectl-input-{len(list(work.glob('kubectl-input-*')))}.yaml"
    source.write_text(text)
    url = f"http://127.0.0.1:{loopback.port}"
    done = subprocess.run(
        [kubectl, "create", "--dry-run=client", "-o", "json", "--validate=false", "-s", url, "-f", str(source)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(work), "KUBECONFIG": os.devnull},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    decoder, out, at = json.JSONDecoder(), [], 0
    while at < len(done.stdout):
        if done.stdout[at].isspace():
            at += 1
            continue
        value, at = decoder.raw_decode(done.stdout, at)
        out.extend(value["items"] if value.get("kind") == "List" else [value])
    return out


@pytest.mark.kubectl
def test_json_strings_stay_strings_for_kubectl(loopback: Loopback, tmp_path: Path) -> None:
    corpus = ("y", "N", "on", "Off", "yES", "nULL", "1e3", "0o17", "0b101", "1_000", "-.5", "09", "0x1F", "~", "plain")
    corpus += ("+1", ".5", "1.", "0.", "1e", "e3", "0x", "0o8", "0b2", "-0b1", "1__0", "_1", "1:20", "+.inf", "-.Inf")
    corpus += (".NaN", "2001-12-14", "2001-12-14T21:59:43Z", "-", ".", "+", "<<", "=", "1e+3", "1E-3", "0777", "null")
    corpus += ("", "True", "FALSE", "~a", "1,000", "0x_1F", "١٢", "1e3e3", "Yes please", "00", "-0", "+0.0e0")
    data = {f"k{i}": value for i, value in enumerate(corpus)}
    labels = {"enabled": "y", "tier": "on"}
    source = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y", "labels": labels}, "data": data}
    write(tmp_path / "repo" / "cm.json", json.dumps(source))
    out = render(tmp_path / "repo")
    assert out.code == 0, out
    [read] = kubectl_reads(out.stdout, loopback, tmp_path)
    assert read["data"] == data and read["metadata"]["labels"] == labels and read["metadata"]["name"] == "y"


MERGED_LIMITS = "limits: {memory: 16Gi, <<: {memory: 512Gi}}"


@pytest.mark.kubectl
def test_a_merge_key_kubectl_resolves_otherwise_is_refused(loopback: Loopback, tmp_path: Path) -> None:
    # The oracle: kubectl (go-yaml) lets the later merge win over the explicit key; PyYAML does not.
    probe = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\nextra:\n  {MERGED_LIMITS}\n"
    [read] = kubectl_reads(probe, loopback, tmp_path)
    assert read["extra"]["limits"]["memory"] == "512Gi"
    assert yaml.safe_load(probe)["extra"]["limits"]["memory"] == "16Gi"
    trainjob = TRAINJOB.replace("limits:\n                                memory: 64Gi", MERGED_LIMITS)
    assert trainjob != TRAINJOB
    write(tmp_path / "repo" / "runtime.yaml", RUNTIME)
    write(tmp_path / "repo" / "trainjob.yaml", trainjob)
    out = render(tmp_path / "repo")
    assert (out.code, out.stdout) == (1, ""), out
    assert "TrainJob has a YAML merge key (<<) at spec.runtimePatches[0]" in out.stderr, out
    assert "write the fields out" in out.stderr


# Wrappers of a runtime and a TrainJob. kubectl maps the wrapper's own kind before it expands the
# items (so it refuses a kind the server does not serve), Argo CD's SplitYAML expands any: for those,
# Argo CD is the one that applies the items, and render must have checked them.
LIST_WRAPPERS = {
    "v1-list": ("v1", "List"),
    "any-list-kind": ("example.com/v1", "WidgetList"),
    "a-trainjob-kind": ("trainer.kubeflow.org/v1alpha1", "TrainJob"),
    "a-configmap": ("v1", "ConfigMap"),
}
KUBECTL_MAPS = {"v1-list", "a-trainjob-kind", "a-configmap"}


@pytest.mark.kubectl
@pytest.mark.parametrize("wrapper", sorted(LIST_WRAPPERS))
def test_objects_in_any_items_list_are_rendered_as_kubectl_expands_them(
    wrapper: str, loopback: Loopback, tmp_path: Path
) -> None:
    api_version, kind = LIST_WRAPPERS[wrapper]
    items = [yaml.safe_load(RUNTIME), yaml.safe_load(TRAINJOB)]
    wrapped = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "outer"}, "items": items}
    plain_text = f"{RUNTIME.rstrip()}\n---\n{TRAINJOB}"
    wrapped_text = yaml.safe_dump(wrapped, sort_keys=False)
    # kubectl applies the items, whatever the wrapper's kind.
    strip = lambda objs: [(o["kind"], o["metadata"]["name"]) for o in objs]  # noqa: E731
    if wrapper in KUBECTL_MAPS:
        assert strip(kubectl_reads(wrapped_text, loopback, tmp_path)) == strip(
            kubectl_reads(plain_text, loopback, tmp_path)
        )
    write(tmp_path / "plain" / "all.yaml", plain_text)
    write(tmp_path / "wrapped" / "all.yaml", wrapped_text)
    plain, listed = render(tmp_path / "plain"), render(tmp_path / "wrapped")
    assert plain.code == 0 and listed.code == 0, (plain, listed)
    assert strip(kubectl_reads(listed.stdout, loopback, tmp_path)) == strip(
        kubectl_reads(plain.stdout, loopback, tmp_path)
    )
    assert "outer" not in listed.stdout


@pytest.mark.kubectl
def test_an_item_kubectl_gives_the_lists_kind_is_refused(loopback: Loopback, tmp_path: Path) -> None:
    trainjob = yaml.safe_load(TRAINJOB)
    bare = {k: v for k, v in trainjob.items() if k not in ("apiVersion", "kind")}
    wrapped = {"apiVersion": trainjob["apiVersion"], "kind": "TrainJobList", "items": [bare]}
    text = yaml.safe_dump(wrapped, sort_keys=False)
    [read] = kubectl_reads(text, loopback, tmp_path)
    assert read["kind"] == "TrainJob", "kubectl names the item after the list"
    write(tmp_path / "repo" / "runtime.yaml", RUNTIME)
    write(tmp_path / "repo" / "list.yaml", text)
    out = render(tmp_path / "repo")
    assert (out.code, out.stdout) == (1, ""), out
    assert "neither apiVersion nor kind: kubectl would apply it as a TrainJob" in out.stderr, out


@pytest.mark.kubectl
def test_kubectl_reads_every_example_render_prints(loopback: Loopback, tmp_path: Path) -> None:
    out = render(EXAMPLES / "exec-data-loader", "--root", str(EXAMPLES))
    assert out.code == 0, out
    read = kubectl_reads(out.stdout, loopback, tmp_path)
    assert [(o["kind"], o["metadata"]["name"]) for o in read] == [
        (d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(out.stdout) if d
    ]
