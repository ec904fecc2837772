"""Every script in examples/ runs to completion (each checks its own results: against NumPy,
and train_digits.py its test accuracy, on the digits or on its generated stand-in).

Scripts run as `python examples/NAME.py` would, with no arguments, and once more with each
command line listed for them in EXTRA_RUNS.
"""

import pathlib
import runpy
import sys

import pytest

import lazyarr as la

EXAMPLES = sorted((pathlib.Path(__file__).resolve().parent.parent / "examples").glob("*.py"))

# Besides the default run: train_digits.py on the generated blobs it falls back to without
# scikit-learn (so that dataset's accuracy is checked here too), eagerly on the interpreter;
# 5 epochs (they reach ~96 %) keep the eager run to a few seconds.
EXTRA_RUNS = {"train_digits.py": [("--dataset", "blobs", "--no-compile", "--epochs", "5")]}

RUNS = [(path, ()) for path in EXAMPLES] + [
    (path, arguments) for path in EXAMPLES for arguments in EXTRA_RUNS.get(path.name, ())
]


@pytest.mark.parametrize("path, arguments", RUNS, ids=[" ".join((path.name, *arguments)) for path, arguments in RUNS])
def test_example_runs(path, arguments, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(path), *arguments])  # the script's command line, not pytest's
    backend = la.get_backend_name()
    try:
        runpy.run_path(str(path), run_name="__main__")
    finally:
        la.set_backend(backend)  # examples may choose a backend for the whole process
    assert capsys.readouterr().out.strip()
