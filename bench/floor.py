"""The floor a converter is measured against: Python started, the session read, and every
line parsed with ``orjson.loads`` and serialised again with ``orjson.dumps``.

    python bench/floor.py SESSION.jsonl
"""

import sys

import orjson


def main(path: str) -> None:
    loads, dumps = orjson.loads, orjson.dumps
    with open(path, "rb") as source, open("/dev/null", "wb") as sink:
        for line in source:
            if line.strip():
                try:  # noqa: SIM105  (a plain try is cheaper than contextlib.suppress per line)
                    sink.write(dumps(loads(line)))
                except orjson.JSONDecodeError:
                    pass


if __name__ == "__main__":
    main(sys.argv[1])
