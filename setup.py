"""The one C extension (element reads, lazyarr/frontend/_element_reads.c): optional, so an
install without a C compiler still works, running the same code in Python (elements.py).
Everything else about the package is in pyproject.toml."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("lazyarr.frontend._element_reads", ["lazyarr/frontend/_element_reads.c"],
                             optional=True)])
