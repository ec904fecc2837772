"""Every script in examples/ runs to completion (each checks its own results against NumPy)."""

import pathlib
import runpy

import pytest

import lazyarr as la

EXAMPLES = sorted((pathlib.Path(__file__).resolve().parent.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[path.name for path in EXAMPLES])
def test_example_runs(path, capsys):
    backend = la.get_backend_name()
    try:
        runpy.run_path(str(path), run_name="__main__")
    finally:
        la.set_backend(backend)  # examples may choose a backend for the whole process
    assert capsys.readouterr().out.strip()
