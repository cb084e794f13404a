"""The optional C accelerator: core/_speedups.c (the loaders). Everything else is in
pyproject.toml.

``optional=True``: where no C compiler is at hand the build goes on without it and piconv
runs on its pure-Python code (the same results, slower; see docs/performance.md).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("piconv._speedups", ["core/_speedups.c"], optional=True),
    ]
)
