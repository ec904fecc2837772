"""benchmarks/gpu.py --quick: without a GPU it exits 2 with one line saying why; with one (marked gpu),
it completes and every implementation's result check passes.

Runs the script in a subprocess, as a user does. Timings are never asserted: they depend on the machine.
"""

import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "gpu.py"


def gpu_missing_reason() -> str | None:
    """Why the GPU backend cannot load here (no CuPy, no CUDA device), or None when it can."""
    try:
        import lazyarr.backends.gpu  # noqa: F401
    except Exception as error:  # GpuUnavailable (a RuntimeError) or ImportError
        return f"{type(error).__name__}: {error}"
    return None


def run_quick(output: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--output", str(output)],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )


def test_without_a_gpu_the_benchmark_says_why_and_exits_2(tmp_path):
    if gpu_missing_reason() is None:
        pytest.skip("a GPU is available here; test_quick_gpu_benchmark_runs_and_every_check_passes covers it")
    output = tmp_path / "gpu-latest.json"
    completed = run_quick(output)
    assert completed.returncode == 2, completed.stdout + completed.stderr
    lines = (completed.stdout + completed.stderr).strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: no GPU to benchmark:")
    assert "CuPy" in lines[0] or "CUDA" in lines[0]
    assert not output.exists()


@pytest.mark.gpu
def test_quick_gpu_benchmark_runs_and_every_check_passes(tmp_path):
    reason = gpu_missing_reason()
    if reason is not None:
        pytest.skip(f"no GPU: {reason}")
    output = tmp_path / "gpu-latest.json"
    completed = run_quick(output)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "copy bandwidth:" in completed.stdout
    document = json.loads(output.read_text())
    rows = document["results"]
    assert {row["workload"] for row in rows} == {"W1", "W2", "W3", "W4", "W6"}
    failed = [(row["workload"], row["impl"], row["check"]) for row in rows if not row["passed"]]
    assert failed == []
    assert document["all_checks_passed"] is True
    assert document["machine"]["device"]["copy_gb_per_s"]["best"] > 0
    measured = [row for row in rows if row["impl"] in ("lazyarr", "lazyarr.jit", "cupy")]
    assert len(measured) == 15
    assert all(row["median_s"] > 0 and row["gb_per_s"] > 0 for row in measured)
    assert all("speedup_vs_cupy" in row for row in measured)
