"""The optional C accelerators: core/_speedups.c (the loaders), converters/asf/_jcs.c (RFC 8785
canonical JSON for the ASF writer) and converters/asf/_checks.c (the ASF schema's common
shapes). Everything else is in pyproject.toml.

``optional=True``: where no C compiler is at hand the build goes on without them and piconv
runs on its pure-Python code (the same results, slower; see docs/performance.md).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("piconv._speedups", ["core/_speedups.c"], optional=True),
        Extension("piconv.converters.asf._jcs", ["converters/asf/_jcs.c"], depends=["converters/asf/sha256.h"], optional=True),
        Extension("piconv.converters.asf._checks", ["converters/asf/_checks.c"], optional=True),
    ]
)
