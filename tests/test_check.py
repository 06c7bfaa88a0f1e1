"""`trainjob-resources check` without a cluster: the kubernetes client stays out of every other command,
the exit status and the one line when the cluster cannot be reached or the arguments are wrong, the
report's formats and escaping, and the comparison of runtimes with their CRD's defaults.

What each finding says about a real cluster is tested on the control plane (tests/cluster/test_check.py).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
from trainjob_resources.kube import compare
from trainjob_resources.live.report import CODES, Finding, ordered, render_json, render_markdown, render_table

ROOT = Path(__file__).resolve().parents[1]
TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: plain, namespace: team}
spec:
  runtimeRef: {name: torch-distributed}
"""


def _run(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trainjob_resources", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_the_kubernetes_client_is_imported_by_check_only(tmp_path: Path) -> None:
    (tmp_path / "trainjob.yaml").write_text(TRAINJOB)
    probe = textwrap.dedent(
        """
        import sys
        import trainjob_resources.cli.main as main
        assert "kubernetes" not in sys.modules, "imported by cli.main"
        code = main.main(["render", "trainjob.yaml"])
        sys.stdout.flush()
        leaked = sorted(m for m in sys.modules if m == "kubernetes" or m.startswith("kubernetes."))
        print("LEAKED", leaked, "CODE", code, file=sys.stderr)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert "LEAKED [] CODE 0" in done.stderr, done.stderr
    assert "kind: TrainJob" in done.stdout
    # and the probe can fail: check does import it
    check = probe.replace('["render", "trainjob.yaml"]', '["check", "trainjob.yaml", "--kubeconfig", "absent"]')
    done = subprocess.run(
        [sys.executable, "-c", check], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert "LEAKED ['kubernetes'" in done.stderr and "CODE 2" in done.stderr, done.stderr


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def _kubeconfig(path: Path, server: str) -> Path:
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", "namespace": "team"}}],
                "current-context": "x",
            }
        )
    )
    return path


def test_a_cluster_that_cannot_be_reached_exits_2_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "trainjob.yaml").write_text(TRAINJOB)
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", f"https://127.0.0.1:{_closed_port()}")
    done = _run("check", "trainjob.yaml", "--kubeconfig", str(kubeconfig), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("trainjob-resources check: error: cannot reach the cluster at ")
    assert "Connection refused" in lines[0] and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--kubeconfig", "absent.yaml"], "no kubeconfig at absent.yaml"),
        (["--kubeconfig", "kubeconfig", "--context", "other"], "cannot load the cluster's configuration"),
        (["--kubeconfig", "kubeconfig", "--format", "xml"], "invalid choice: 'xml'"),
        (["--kubeconfig", "kubeconfig", "--no-such-option"], "unrecognized arguments"),
    ],
)
def test_wrong_arguments_exit_2_with_a_clear_line(tmp_path: Path, args: list[str], said: str) -> None:
    (tmp_path / "trainjob.yaml").write_text(TRAINJOB)
    _kubeconfig(tmp_path / "kubeconfig", f"https://127.0.0.1:{_closed_port()}")
    done = _run("check", "trainjob.yaml", *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr


def test_the_report_escapes_what_the_cluster_and_the_repository_wrote() -> None:
    hostile = Finding("forbidden", "error", "TrainJob/team/a|b\n\x1b[31mred", "may not *create* `x` <b>|</b>\r\n")
    table = render_table([hostile])
    assert "\x1b" not in table and "\r" not in table and table.count("\n") == 2
    assert "a|b\\n\\x1b[31mred" in table
    markdown = render_markdown([hostile])
    row = markdown.splitlines()[2]
    assert row.count(" | ") == 3, row  # the cells' own | are escaped
    assert "a\\|b\\\\n\\\\x1b\\[31mred" in row and "\\*create\\*" in row and "\\<b\\>" in row
    assert json.loads(render_json([hostile])) == {"findings": [hostile.as_dict()]}
    assert render_json([]) == '{\n  "findings": []\n}\n'


def test_findings_come_in_the_order_of_their_codes_each_once() -> None:
    found = [Finding(code, "warning", f"X/{i}", "m") for i, code in enumerate(reversed(CODES))]
    assert [f.code for f in ordered([*found, *found])] == list(CODES)


CRD_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "mlPolicy": {"type": "object", "properties": {"numNodes": {"type": "integer", "default": 1}}},
                "containers": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "ports": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "properties": {"protocol": {"type": "string", "default": "TCP"}},
                                },
                            },
                        },
                    },
                },
            },
        }
    },
}


def test_a_copy_gets_its_crds_defaults_before_it_is_compared() -> None:
    copy = {"spec": {"mlPolicy": {}, "containers": [{"name": "node", "ports": [{"containerPort": 1}]}]}}
    installed = {
        "spec": {
            "mlPolicy": {"numNodes": 1},
            "containers": [{"name": "node", "ports": [{"containerPort": 1, "protocol": "TCP"}]}],
        }
    }
    assert compare.differing(copy, installed) != []  # without the defaults they differ
    assert compare.differing(compare.defaulted(copy, CRD_SCHEMA), installed) == []
    assert copy["spec"]["mlPolicy"] == {}, "defaulted works on a copy"


def test_differing_names_fields_matches_named_lists_and_compares_quantities_by_value() -> None:
    new = {
        "containers": [
            {"name": "b", "image": "x:2", "resources": {"limits": {"memory": "1Gi"}}},
            {"name": "a", "image": "y", "env": []},
        ]
    }
    old = {
        "containers": [
            {"name": "a", "image": "y", "resources": {}},
            {"name": "b", "image": "x:1", "resources": {"limits": {"memory": "1024Mi"}}},
            {"name": "c"},
        ]
    }
    assert compare.differing(new, old, "spec") == ["spec.containers[b].image", "spec.containers[c]"]
    assert compare.listed([f"f{i}" for i in range(10)]).endswith("f7 and 2 more")


def test_the_kubectl_plugin_entry_point_is_the_command() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["kubectl-trainjob_resources"] == scripts["trainjob-resources"] == "trainjob_resources.cli.main:run"
