"""benchmarks/dask.py --quick completes on a one-worker LocalCluster and lazyarr's results match
dask with NumPy chunks. Runs the script in a subprocess and reads its JSON; timings are never asserted.
"""

import json
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("dask.array", reason="dask[array] is not installed (pip install 'lazyarr[dask]')")
pytest.importorskip("distributed", reason="distributed is not installed (pip install 'lazyarr[dask]')")

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_quick_dask_benchmark_runs_and_every_check_passes(tmp_path):
    output = tmp_path / "dask.json"
    completed = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "dask.py"), "--quick", "--workers", "1", "--output", str(output)],
        capture_output=True, text=True, timeout=180, cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    document = json.loads(output.read_text())
    rows = document["results"]
    assert {(row["workload"], row["impl"]) for row in rows} == {
        (workload, engine) for workload in ("W1", "W4", "W4-blocks") for engine in ("dask+numpy", "dask+lazyarr")}
    assert [row["check"] for row in rows if not row["passed"]] == []
    lazy = [row for row in rows if row["impl"] == "dask+lazyarr"]
    assert all(len(row["compiles_per_worker"]) == 1 and row["compiles_per_worker"][0][0] >= 1 for row in lazy)
    assert "| workload |" in completed.stdout  # the markdown table
