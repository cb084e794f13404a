"""``python -m piconv``."""

from .cli import run

run()
