"""A Dask cluster for a directory run: connected and checked before any task is sent.

The workers run the same per-file task as the local pool, reading the sessions and
writing the outputs themselves, so a worker must have the same piconv and the same
plugins as the client, and must see the input and output directories at the same paths.
:func:`connected` checks each of those once, on every worker, before anything is written:
a cluster that fails gets one clear error, not one failed file per session. A worker
that joins later is checked by its first task (:func:`run_checked`).

The scheduler is ``--scheduler`` or, as in Dask itself, ``DASK_SCHEDULER_ADDRESS`` (Dask's
``scheduler-address`` setting).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Any

from ..errors import InputError, OutputError, PluginError, UsageError
from .worker import Task, run_task

WORKER_WAIT_S = 30.0
"""How long a scheduler with no worker yet is given for one to join."""


def describe(conv: Any) -> str:
    """A format's provider as compared across the cluster: plugin, distribution, version."""
    return f"{conv.plugin} from {conv.distribution} {conv.version}"


def facts(formats: Sequence[str], registry: Any = None) -> dict[str, Any]:
    """What must be equal on the client and every worker: piconv's version and, for each
    format of the run, the plugin, distribution and version that provide it (in
    ``registry``, the run's own; by default this process's)."""
    from ..errors import PiconvError
    from ..registry import get_registry
    from ..version import __version__

    registry = registry or get_registry()
    found: dict[str, str] = {}
    for name in formats:
        try:
            found[name] = describe(registry.get(name))
        except PiconvError as exc:
            found[name] = f"no such format ({exc})"
    return {"piconv": __version__, "formats": found}


def _probe(formats: tuple[str, ...], input_dir: str, output_dir: str) -> dict[str, Any]:
    """Runs on each worker: its facts, and whether it can read the input and write the output."""
    found = facts(formats)
    found["input"] = found["output"] = None
    try:
        os.listdir(input_dir)
    except OSError as exc:
        found["input"] = exc.strerror or str(exc)
    # OUTDIR may not exist yet: the nearest directory that does must be writable.
    target = output_dir
    while not os.path.isdir(target) and os.path.dirname(target) != target:
        target = os.path.dirname(target)
    if not os.access(target, os.W_OK | os.X_OK):
        found["output"] = f"{target}: not writable"
    return found


@functools.lru_cache(maxsize=8)
def _cached_facts(formats: tuple[str, ...]) -> dict[str, Any]:
    return facts(formats)


def run_checked(task: Task, expected: dict[str, Any]) -> dict[str, Any]:
    """The per-file task on a Dask worker, refused (``bulk:worker-mismatch``) where the
    worker's piconv or plugins differ from the client's: a worker that joined after the
    check converts nothing with other code."""
    mine = _cached_facts(tuple(spec.name for spec in task.formats))
    differs = _differences(mine, expected, [spec.name for spec in task.formats])
    if differs:
        return {
            "input": task.rel,
            "outputs": {},
            "errors": {
                "*": {"code": "bulk:worker-mismatch", "message": "this Dask worker has " + "; ".join(differs)}
            },
            "problems": {},
            "status": "failed",
        }
    return run_task(task)


def _differences(worker: dict[str, Any], client: dict[str, Any], formats: Sequence[str]) -> list[str]:
    out = []
    if worker["piconv"] != client["piconv"]:
        out.append(f"piconv {worker['piconv']}, the client {client['piconv']}")
    for name in formats:
        theirs, ours = worker["formats"].get(name), client["formats"].get(name)
        if theirs != ours:
            out.append(f"format {name!r}: {theirs}, the client {ours}")
    return out


def scheduler_address(scheduler: str | None) -> str | None:
    """``scheduler``, else Dask's own setting (``DASK_SCHEDULER_ADDRESS``)."""
    if scheduler:
        return scheduler
    import dask.config

    address = dask.config.get("scheduler-address", None) or os.environ.get("DASK_SCHEDULER_ADDRESS")
    return str(address) if address else None


def import_distributed() -> Any:
    try:
        import dask.distributed
    except ImportError:
        raise UsageError("--executor dask needs Dask: pip install 'piconv[dask]'") from None
    return dask.distributed


class Cluster:
    """A client whose workers passed the check, with the client's facts they were checked
    against (for :func:`run_checked`). ``close()`` closes the client if it was made here."""

    def __init__(self, client: Any, expected: dict[str, Any], own: bool) -> None:
        self.client = client
        self.expected = expected
        self.own = own

    def close(self) -> None:
        if self.own:
            self.client.close()


def connect(
    client: Any, scheduler: str | None, expected: dict[str, Any], input_dir: str, output_dir: str
) -> Cluster:
    """``client``, or a new client of the scheduler, once every worker passed the check
    against ``expected`` (the client's :func:`facts`, from the run's own registry). A
    client made here is closed again when the check fails."""
    distributed = import_distributed()
    own = client is None
    if own:
        address = scheduler_address(scheduler)
        if not address:
            raise UsageError(
                "--executor dask needs --scheduler ADDRESS or DASK_SCHEDULER_ADDRESS "
                "(or a Client passed to the library)"
            )
        try:
            client = distributed.Client(address)
        except (OSError, TimeoutError) as exc:
            raise UsageError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    cluster = Cluster(client, expected, own)
    try:
        check(client, expected, input_dir, output_dir)
    except BaseException:
        cluster.close()
        raise
    return cluster


def check(client: Any, expected: dict[str, Any], input_dir: str, output_dir: str) -> None:
    """Every worker's piconv, plugins and view of the directories against ``expected``;
    raises the first kind of difference found, naming each worker that has it."""
    names = tuple(expected["formats"])
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT_S)
    except (OSError, TimeoutError):
        raise UsageError(
            f"the Dask scheduler has no worker (none joined within {WORKER_WAIT_S:g} s)"
        ) from None
    try:
        probes: dict[str, dict[str, Any]] = client.run(_probe, names, input_dir, output_dir)
    except Exception as exc:  # piconv missing on a worker: its pickled function cannot load
        raise PluginError(
            f"cannot run piconv's check on the Dask workers ({type(exc).__name__}: {exc}); "
            "install piconv and the same plugins on every worker"
        ) from None
    mismatched = {w: d for w, p in sorted(probes.items()) if (d := _differences(p, expected, names))}
    if mismatched:
        lines = "; ".join(f"{w} has {', '.join(d)}" for w, d in mismatched.items())
        raise PluginError(
            f"Dask workers differ from this client: {lines}; install the same versions everywhere"
        )
    unreadable = {w: p["input"] for w, p in sorted(probes.items()) if p["input"]}
    if unreadable:
        lines = "; ".join(f"{w}: {why}" for w, why in unreadable.items())
        raise InputError(
            f"not readable from Dask workers ({lines}); the workers must see it at the same path",
            path=input_dir,
        )
    unwritable = {w: p["output"] for w, p in sorted(probes.items()) if p["output"]}
    if unwritable:
        lines = "; ".join(f"{w}: {why}" for w, why in unwritable.items())
        raise OutputError(
            f"not writable from Dask workers ({lines}); the workers must see it at the same path",
            path=output_dir,
        )
