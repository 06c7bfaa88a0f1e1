"""How long `trainjob-resources check` takes on N TrainJobs on the control plane (docs/check.md).

Applies the benchmark bundle (bench/generate.py: N TrainJobs in 10 namespaces, their derived runtimes,
ConfigMaps) as Argo CD would, gives each namespace a ResourceQuota with live usage and a LimitRange,
waits for Trainer's runtime snapshots, then times `check` on the bundle's kustomization (render
included) a few times. A measurement, not a test: nothing is asserted about the seconds.

    .venv/bin/python -m tests.cluster.check_timing --n 500
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from bench.generate import NAMESPACES, write
from tests.cluster.controlplane import ControlPlane


def _apply(cp: ControlPlane, text: str, timeout: float = 600.0) -> None:
    started = time.monotonic()
    while True:
        done = cp.apply_server_side(text, check=False)
        if done.returncode == 0:
            return
        if "must be created before" not in done.stderr or time.monotonic() - started > timeout:
            raise RuntimeError(done.stderr[-2000:])
        time.sleep(0.5)


def _children_cpu() -> float:
    """CPU seconds (user and system) of the waited-for children so far: each run's is the difference."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _profile(out: str, args: list[str], cwd: str) -> None:
    import contextlib
    import cProfile
    import io
    import os
    import pstats

    from trainjob_resources.cli import main

    here = os.getcwd()
    os.chdir(cwd)
    profiler = cProfile.Profile()
    started = time.monotonic()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            profiler.runcall(main.main, ["check", *args])  # as the command runs: gc off, no pydantic plugins
    finally:
        os.chdir(here)
    print(f"profiled run: {time.monotonic() - started:.2f} s wall", flush=True)
    profiler.dump_stats(out)
    pstats.Stats(out).sort_stats("cumulative").print_stats(40)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", metavar="FILE", help="then run check once in this process under cProfile")
    parser.add_argument(
        "--hold",
        metavar="FILE",
        help="then print the bundle's and kubeconfig's paths and keep the control plane "
        "up while FILE exists (to time check by hand)",
    )
    options = parser.parse_args(argv)
    # As bench/run.py: an installed package's bytecode (under PYTHONDONTWRITEBYTECODE a checkout compiles
    # every module on every run).
    package = Path(__file__).resolve().parents[2] / "function" / "trainjob_resources"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)
    with tempfile.TemporaryDirectory() as tmp, ControlPlane() as cp:
        _, folder = write(options.n, Path(tmp) / "bundle")
        for ns in NAMESPACES:
            cp.kubectl("create", "namespace", ns)
        rendered = subprocess.run(
            [sys.executable, "-m", "trainjob_resources", "render", str(folder)],
            capture_output=True,
            text=True,
            check=True,
            cwd=tmp,
        ).stdout
        trainjobs = [d for d in yaml.safe_load_all(rendered) if d["kind"] == "TrainJob"]
        _apply(cp, rendered)  # as rendered (a YAML dump would unquote strings such as "3e-5")
        for ns in NAMESPACES:
            quota = {
                "apiVersion": "v1",
                "kind": "ResourceQuota",
                "metadata": {"name": "team", "namespace": ns},
                "spec": {"hard": {"requests.memory": "100Ti", "requests.cpu": "10k"}},
            }
            limits = {
                "apiVersion": "v1",
                "kind": "LimitRange",
                "metadata": {"name": "defaults", "namespace": ns},
                "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "100m"}}]},
            }
            _apply(cp, yaml.safe_dump_all([quota, limits]))
            used = {"status": {"hard": quota["spec"]["hard"], "used": {"requests.memory": "1Ti"}}}
            cp.kubectl(
                "patch",
                "resourcequota",
                "team",
                "-n",
                ns,
                "--subresource=status",
                "--type=merge",
                "-p",
                json.dumps(used),
            )
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            found = cp.kubectl("get", "configmaps", "-A", "-o", "name").stdout.count("-runtime-snapshot")
            if found >= len(trainjobs):
                break
            time.sleep(2)
        print(f"{len(trainjobs)} TrainJobs live, {found} runtime snapshots", flush=True)
        started, cpu = time.monotonic(), _children_cpu()
        subprocess.run(
            [sys.executable, "-m", "trainjob_resources", "render", str(folder)],
            capture_output=True,
            check=True,
            cwd=tmp,
        )
        seconds, cpu = time.monotonic() - started, _children_cpu() - cpu
        print(f"render alone (the same bundle): {seconds:.2f} s wall, {cpu:.2f} s CPU", flush=True)
        for run in range(options.runs):
            started, cpu = time.monotonic(), _children_cpu()
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "trainjob_resources",
                    "check",
                    str(folder),
                    "--kubeconfig",
                    cp.kubeconfig,
                    "--format",
                    "json",
                ],
                capture_output=True,
                text=True,
                cwd=tmp,
            )
            seconds, cpu = time.monotonic() - started, _children_cpu() - cpu
            codes = (
                [f["code"] for f in json.loads(done.stdout)["findings"]] if done.stdout.startswith("{") else done.stderr
            )
            load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
            print(
                f"run {run + 1}: check exited {done.returncode} in {seconds:.2f} s wall, {cpu:.2f} s CPU "
                f"(load {load}); findings: {codes}",
                flush=True,
            )
        if options.profile:
            _profile(options.profile, [str(folder), "--kubeconfig", cp.kubeconfig, "--format", "json"], tmp)
        if options.hold:
            Path(options.hold).touch()
            print(f"holding: bundle {folder}, --kubeconfig {cp.kubeconfig}, cwd {tmp}", flush=True)
            while Path(options.hold).exists():
                time.sleep(1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
