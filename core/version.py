"""piconv's version: one place that the package, the plugins' origin records and the
directory run's manifest read, without importing the public API."""

__version__ = "0.1.0"
