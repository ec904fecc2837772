"""The C extensions: the frontend's fast paths (lazyarr/frontend/_fast_paths.c: element reads, a
jitted call's arguments), the compile driver's graph walk (lazyarr/_graph_walk.c) and a CPU
executable's direct call (lazyarr/backends/_direct_call.c). All optional: an install without a C
compiler still works, running the same code in Python (fast_paths.py, compile.py, cpu.py).
Everything else about the package is in pyproject.toml."""

from setuptools import Extension, setup

_SHARED = ["lazyarr/_slot_offsets.h"]  # the slot reading both extensions share

setup(ext_modules=[
    Extension("lazyarr.frontend._fast_paths", ["lazyarr/frontend/_fast_paths.c"], depends=_SHARED, optional=True),
    Extension("lazyarr._graph_walk", ["lazyarr/_graph_walk.c"], depends=_SHARED, optional=True),
    Extension("lazyarr.backends._direct_call", ["lazyarr/backends/_direct_call.c"], optional=True),
])
