"""Run a suite with the test device as the default device, as `--backend=gpu` makes the GPU the
default, on a machine without a GPU:

    python -m pytest -p tests.on_test_device tests/frontend

The device is tests/frontend/test_devices.py's: buffers that are not host arrays, computed by the
interpreter, whose executable refuses host arrays of rank 1 or more. What mixes host and device
data in one computation fails here as it would on the GPU. Tests that look inside host buffers
(NumPy views of an evaluated array, elements read in C) fail here by design.
"""

import sys
from pathlib import Path

from lazyarr import _flags, backends
from lazyarr import compile as compile_driver


def pytest_configure(config):
    # Imported under the name pytest gives the file when it collects it (its folder on sys.path,
    # no package), so the suite and this plugin share one module: one DeviceBuffer class.
    sys.path.insert(0, str(Path(__file__).parent / "frontend"))
    import test_devices

    backends.register_device(test_devices.DEVICE, test_devices.TRANSFERS)
    backends.register_backend(test_devices.BACKEND, test_devices.DEVICE_BACKEND)
    compile_driver.register_device_backend(test_devices.DEVICE, test_devices.BACKEND)
    _flags.with_overrides(backend=test_devices.BACKEND)

