"""benchmarks/run.py --quick completes on tiny sizes and every implementation's result check passes.

Runs the script in a subprocess (it selects a backend, which is process-wide state) and reads its
JSON. Timings are never asserted: they depend on the machine.
"""

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_quick_benchmark_runs_and_every_check_passes(tmp_path):
    output = tmp_path / "latest.json"
    completed = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--output", str(output)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    document = json.loads(output.read_text())
    rows = document["results"]
    assert {row["workload"] for row in rows} >= {"W1", "W2", "W3", "W4", "W5", "W6", "W7a", "W7b", "W8:W2", "T1"}
    failed = [(row["workload"], row["impl"], row["check"]) for row in rows if not row["passed"]]
    assert failed == []
    assert document["all_checks_passed"] is True
    timed = ("numpy", "lazyarr")
    measured = [row for row in rows if row["impl"] in timed and not row["workload"].startswith("W8")]
    assert all(row["median_s"] > 0 for row in measured)
