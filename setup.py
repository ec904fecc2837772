"""The C extensions: element reads (lazyarr/frontend/_element_reads.c) and the compile driver's
graph walk (lazyarr/_graph_walk.c). Both optional: an install without a C compiler still works,
running the same code in Python (elements.py, compile.py). Everything else about the package is
in pyproject.toml."""

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("lazyarr.frontend._element_reads", ["lazyarr/frontend/_element_reads.c"], optional=True),
    Extension("lazyarr._graph_walk", ["lazyarr/_graph_walk.c"], optional=True),
])
