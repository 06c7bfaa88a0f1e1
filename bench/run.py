"""Issue 5's benchmark: the function against the interpreter floor and ``kubectl kustomize``, in one run.

Every measurement is a separate process, timed with ``time.perf_counter`` around spawn and reap
(``os.wait4``, which also gives the child's peak RSS). Runs are interleaved round by round (A B C
A B C ...) so that drift of the machine hits every command alike; each figure is a median.

    make bench            # or: .venv/bin/python bench/run.py
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import generate

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"
PYTHON = VENV_BIN / "python"
FUNCTION = VENV_BIN / "trainjob-resources"
RESULTS = Path(__file__).resolve().parent / "results"

SIZES = (3, 500, 5000)
PYYAML_PROBE = "import yaml; print(yaml.__version__, 'with libyaml' if yaml.__with_libyaml__ else 'pure Python')"
ONE = {"TRAINJOB_RESOURCES_WORKERS": "1"}
TARGETS = {"P1": 1.0, "P2": 0.5, "P2_cpu": 0.5, "P3": 12.0, "rss_mb": 150.0, "render_rss": 1.5}


@dataclass
class Bench:
    name: str
    argv: list[str]
    runs: int
    stdin: Path | None = None
    env: dict[str, str] | None = None  # added to the runner's environment
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    rss_kib: list[int] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "command": " ".join(f"{k}={v}" for k, v in (self.env or {}).items())
            + (" " if self.env else "")
            + shlex.join(self.argv)
            + (f" < {self.stdin.name}" if self.stdin else ""),
            "runs": len(self.walls),
            "median_s": statistics.median(self.walls),
            "min_s": min(self.walls),
            "max_s": max(self.walls),
            "walls_s": [round(w, 4) for w in self.walls],
            "cpu_median_s": statistics.median(self.cpus),
            "peak_rss_mb": max(self.rss_kib) * 1024 / 1e6,
        }


class BenchError(RuntimeError):
    pass


def measure(bench: Bench) -> tuple[float, float, int]:
    """One run: wall seconds, CPU seconds (user + system) and peak RSS in KiB of the child.

    Raises BenchError on a non-zero exit.
    """
    with tempfile.TemporaryFile() as err:
        stdin = bench.stdin.open("rb") if bench.stdin else subprocess.DEVNULL
        try:
            start = time.perf_counter()
            env = {**os.environ, **bench.env} if bench.env else None
            proc = subprocess.Popen(bench.argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=err, env=env)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
        finally:
            if not isinstance(stdin, int):
                stdin.close()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace")[-2000:]
            raise BenchError(f"{bench.name} exited {proc.returncode}:\n{tail}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def generate_in_child(n: int, out: Path) -> tuple[Path, Path]:
    """Generate in another process: Linux carries a parent's peak RSS over fork and exec into the
    child's ru_maxrss, so this process must stay small for the children's figures to be theirs."""
    subprocess.run([str(PYTHON), str(Path(generate.__file__)), "--n", str(n), "--out", str(out)], check=True)
    return out / "resourcelist.yaml", out / "kustomize"


def plain_folder(kustomize: Path, out: Path) -> Path:
    """The kustomize folder's files without the kustomization: what ``render`` reads as a plain folder."""
    shutil.copytree(kustomize, out, ignore=shutil.ignore_patterns("kustomization.yaml"))
    return out


def run_interleaved(benches: Sequence[Bench], warmup: Sequence[Bench]) -> None:
    for bench in warmup:
        measure(bench)
    rounds = max(b.runs for b in benches)
    for r in range(rounds):
        for bench in benches:
            if r < bench.runs:
                wall, cpu, rss = measure(bench)
                bench.walls.append(wall)
                bench.cpus.append(cpu)
                bench.rss_kib.append(rss)
        done = ", ".join(f"{b.name} {statistics.median(b.walls):.3f}s" for b in benches if b.walls)
        print(f"  round {r + 1}/{rounds}: {done}", file=sys.stderr, flush=True)


def _output(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as err:
        return f"unavailable ({err})"


def machine_info(kubectl: str) -> dict[str, Any]:
    cpu_model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        cpu_model = next(
            (ln.split(":", 1)[1].strip() for ln in cpuinfo.read_text().splitlines() if "model name" in ln), ""
        )
    kubectl_json = _output([kubectl, "version", "--client", "-o", "json"])
    try:
        versions = json.loads(kubectl_json)
        kubectl_version = f"{versions['clientVersion']['gitVersion']} (kustomize {versions['kustomizeVersion']})"
    except (ValueError, KeyError):
        kubectl_version = kubectl_json
    commit = _output(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
    dirty = _output(["git", "-C", str(ROOT), "status", "--porcelain", "--", "function"])
    return {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "nproc": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu_model": cpu_model,
        "platform": platform.platform(),
        "python": _output([str(PYTHON), "-c", "import sys; print(sys.version.split()[0])"]),
        "pydantic": _output([str(PYTHON), "-c", "import pydantic; print(pydantic.VERSION)"]),
        "pyyaml": _output([str(PYTHON), "-c", PYYAML_PROBE]),
        "kubectl": f"{shutil.which(kubectl) or kubectl} {kubectl_version}",
        "git_commit": commit + (" (function/ modified)" if dirty else ""),
    }


def verdict(value: float, target: float) -> str:
    return "ok" if value <= target else "MISSED"


def report(benches: dict[str, Bench], inputs: dict[str, Any], machine: dict[str, Any]) -> dict[str, Any]:
    raw = {name: b.summary() for name, b in benches.items()}
    med = {name: s["median_s"] for name, s in raw.items()}
    rss = raw["function_n5000"]["peak_rss_mb"]
    ratios = {
        "P1": {
            "value": med["function_n3"] / med["floor"],
            "definition": "function(N=3) / interpreter floor",
        },
        "P2": {
            "value": med["function_n500"] / med["kustomize_n500"],
            "definition": "function(N=500) / kubectl kustomize(N=500)",
        },
        "P2_cpu": {
            "value": raw["function_n500"]["cpu_median_s"] / raw["kustomize_n500"]["cpu_median_s"],
            "definition": "P2 on CPU time (user + system)",
        },
        "P3": {
            "value": med["function_n5000"] / med["function_n500"],
            "definition": "function(N=5000) / function(N=500)",
        },
        "rss_mb": {"value": rss, "definition": "peak RSS of the function at N=5000, MB (10^6 bytes)"},
        "render_rss": {
            "value": raw["render_n5000"]["peak_rss_mb"] / rss,
            "definition": "peak RSS of render on a folder of the N=5000 objects / the function's",
        },
    }
    for key, entry in ratios.items():
        entry["target"] = TARGETS[key]
        entry["met"] = entry["value"] <= TARGETS[key]
    cpu = {name: s["cpu_median_s"] for name, s in raw.items()}
    cpu_ratios = {
        "P1": cpu["function_n3"] / cpu["floor"],
        "P2": cpu["function_n500"] / cpu["kustomize_n500"],
        "P3": cpu["function_n5000"] / cpu["function_n500"],
    }
    one_process = {
        "P2": med["function_n500_one_process"] / med["kustomize_n500"],
        "P2_cpu": cpu["function_n500_one_process"] / cpu["kustomize_n500"],
        "rss_mb": raw["function_n5000_one_process"]["peak_rss_mb"],
    }
    return {
        "targets": ratios,
        "cpu_time_ratios": cpu_ratios,
        "one_process": one_process,
        "raw": raw,
        "inputs": inputs,
        "machine": machine,
    }


def markdown(result: dict[str, Any]) -> str:
    lines = ["# Benchmark results (`make bench`)", ""]
    m = result["machine"]
    lines += [
        f"{m['date']}, commit {m['git_commit']}; {m['nproc']} CPUs ({m['cpu_model']}); Python {m['python']}, "
        f"pydantic {m['pydantic']}, PyYAML {m['pyyaml']}; {m['kubectl']}; load average (1, 5, 15 min) "
        f"{_loads(m['load_average_before'])} before, {_loads(m['load_average_after'])} after. "
        f"Peak RSS figures cannot be below the runner's own ({m['runner_peak_rss_mb']:.1f} MB).",
        "",
        "| target | definition | value | limit | |",
        "|---|---|---:|---:|---|",
    ]
    for key, t in result["targets"].items():
        value = f"{t['value']:.1f}" if key == "rss_mb" else f"{t['value']:.2f}"
        lines.append(f"| {key} | {t['definition']} | {value} | {t['target']} | {verdict(t['value'], t['target'])} |")
    cpu_ratios = ", ".join(f"{k} {v:.2f}" for k, v in result["cpu_time_ratios"].items())
    lines += ["", f"Same ratios on CPU time (user + system, less sensitive to other load): {cpu_ratios}."]
    one = result["one_process"]
    lines += [
        "",
        f"The function kept to one process (TRAINJOB_RESOURCES_WORKERS=1): P2 {one['P2']:.2f} wall, "
        f"{one['P2_cpu']:.2f} CPU; peak RSS at N=5000 {one['rss_mb']:.1f} MB. With the fork, peak RSS is the "
        "larger of the two processes' (os.wait4), CPU time both processes' together.",
    ]
    lines += [
        "",
        "| measurement | runs | median s | min s | max s | CPU median s | peak RSS MB |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in result["raw"].items():
        lines.append(
            f"| {name} | {s['runs']} | {s['median_s']:.3f} | {s['min_s']:.3f} | {s['max_s']:.3f} | "
            f"{s['cpu_median_s']:.3f} | {s['peak_rss_mb']:.1f} |"
        )
    lines += ["", "Commands:", ""]
    lines += [f"- {name}: `{s['command']}`" for name, s in result["raw"].items()]
    lines += ["", "Inputs:", ""]
    lines += [
        f"- N={n}: {i['items']} items, ResourceList {i['resourcelist_bytes']} bytes"
        for n, i in result["inputs"].items()
    ]
    return "\n".join(lines) + "\n"


def _loads(values: Sequence[float]) -> str:
    return " ".join(f"{x:.2f}" for x in values)


def write_atomically(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kubectl", default="kubectl", help="kubectl binary (default: kubectl on PATH)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="directory for latest.json and latest.md")
    parser.add_argument("--runs", type=int, nargs=3, default=(11, 7, 3), metavar=("SMALL", "N500", "N5000"))
    parser.add_argument("--check", action="store_true", help="exit 3 when a target is missed")
    args = parser.parse_args(argv)
    small, mid, large = args.runs
    if shutil.which(args.kubectl) is None:
        print(f"bench: {args.kubectl} is not on PATH (needed for the kustomize baseline)", file=sys.stderr)
        return 2
    # An installed package (the image's pip install) has its bytecode; a checkout run with
    # PYTHONDONTWRITEBYTECODE set would compile the package on every run instead.
    subprocess.run([str(PYTHON), "-m", "compileall", "-q", str(ROOT / "function" / "trainjob_resources")], check=True)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="trainjob-bench-") as tmp:
        files = {n: generate_in_child(n, Path(tmp) / f"n{n}") for n in SIZES}
        inputs = {
            str(n): {"items": generate.item_count(n), "resourcelist_bytes": files[n][0].stat().st_size} for n in SIZES
        }
        function = [str(FUNCTION)]
        benches = {
            "floor": Bench("floor", [str(PYTHON), "-c", "from pydantic import BaseModel; import yaml"], small),
            "function_n3": Bench("function_n3", function, small, files[3][0]),
            "function_n500": Bench("function_n500", function, mid, files[500][0]),
            "kustomize_n500": Bench("kustomize_n500", [args.kubectl, "kustomize", str(files[500][1])], mid),
            # For comparison: the function kept to one process (cli/fan_out.py forks from 100 TrainJobs).
            "function_n500_one_process": Bench("function_n500_one_process", function, mid, files[500][0], ONE),
            "function_n5000": Bench("function_n5000", function, large, files[5000][0]),
            "function_n5000_one_process": Bench("function_n5000_one_process", function, large, files[5000][0], ONE),
            "render_n5000": Bench(
                "render_n5000", [*function, "render", str(plain_folder(files[5000][1], Path(tmp) / "plain"))], large
            ),
        }
        print(f"bench: {len(benches)} measurements, interleaved; inputs in {tmp}", file=sys.stderr)
        try:
            warmup = [b for k, b in benches.items() if not k.endswith("_n5000")]
            run_interleaved(list(benches.values()), warmup)
        except BenchError as err:
            print(f"bench: {err}", file=sys.stderr)
            return 1
    machine = machine_info(args.kubectl) | {
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "runner_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6,
    }
    result = report(benches, inputs, machine)
    args.out.mkdir(parents=True, exist_ok=True)
    write_atomically(args.out / "latest.json", json.dumps(result, indent=2) + "\n")
    text = markdown(result)
    write_atomically(args.out / "latest.md", text)
    print(text)
    missed = [key for key, t in result["targets"].items() if not t["met"]]
    return 3 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
