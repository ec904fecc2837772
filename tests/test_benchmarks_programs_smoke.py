"""benchmarks/programs.py --quick completes on tiny sizes and every program's check passes.

Runs the script in a subprocess (it clears lazyarr's process-wide compile cache) and reads its
JSON. Timings are never asserted: they depend on the machine.
"""

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROGRAMS = {"k-means", "heat", "mandelbrot", "logistic", "moving-average", "n-body", "black-scholes", "relaxation",
            "life", "least-squares", "mlp", "mlp-jit"}


def test_quick_programs_run_and_every_check_passes(tmp_path):
    output = tmp_path / "programs.json"
    completed = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "programs.py"), "--quick", "--output", str(output)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    document = json.loads(output.read_text())
    rows = document["results"]
    assert {row["program"] for row in rows} == PROGRAMS
    assert {row["program"] for row in rows if row["impl"] == "lazyarr"} == PROGRAMS
    failed = [(row["program"], row["impl"], row["check"]) for row in rows if not row["passed"]]
    assert failed == []
    assert document["all_checks_passed"] is True
    assert all(row["steady_s"] > 0 for row in rows if row["impl"] in ("numpy", "lazyarr"))
    assert "| program |" in completed.stdout  # the markdown table


def test_no_jax_leaves_jax_unimported(tmp_path):
    # --no-jax measures NumPy and lazyarr as a process without jax has them (importing jax
    # changes glibc's malloc thresholds), so jax must not even be imported.
    script = (
        "import sys; sys.path.insert(0, 'benchmarks'); import programs; "
        "status = programs.main(['--quick', '--no-jax', '--programs', 'heat', '--output', "
        f"{str(tmp_path / 'p.json')!r}]); "
        "print('JAX LOADED' if 'jax' in sys.modules else 'NO JAX'); sys.exit(status)"
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "NO JAX" in completed.stdout and "n/a: --no-jax" in completed.stdout
