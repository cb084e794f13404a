"""``--detail LEVEL`` on the command line: the option and the filter step it asks for."""

from __future__ import annotations

import argparse
from typing import Any

from . import LEVELS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--detail",
        choices=LEVELS,
        default="full",
        metavar="LEVEL",
        help="how much of the session the output keeps: full (default), calls (tool calls without "
        "their output), conversation (prompts and replies only), prompts (the user's prompts); "
        "what is left out is absent from the output (docs/sharing.md)",
    )


def detail_steps(ns: argparse.Namespace) -> list[tuple[str, dict[str, Any]]]:
    """``[("detail", {"level": LEVEL})]``, or ``[]`` for ``full`` (nothing to leave out)."""
    level = getattr(ns, "detail", None) or "full"
    return [] if level == "full" else [("detail", {"level": level})]
