"""Writes core/redaction/gitleaks.json from core/redaction/gitleaks.toml (gitleaks'
config/gitleaks.toml, shipped as it is). Run after replacing the TOML with a newer one:

    python scripts/gen_gitleaks_rules.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HERE = Path(__file__).resolve().parent.parent / "core" / "redaction"


def main() -> None:
    data = tomllib.loads((HERE / "gitleaks.toml").read_text(encoding="utf-8"))
    (HERE / "gitleaks.json").write_text(
        json.dumps(data, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main()
