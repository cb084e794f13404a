"""The sessions of a directory, found and counted: ``piconv list``, ``piconv stats`` and
sessions named by id (``piconv 01a22b31 --to md``).

Directory-level, beside the directory runs (:mod:`piconv.bulk`): sessions are found as a
run finds them (:mod:`piconv.bulk.discover`, :mod:`piconv.bulk.sniff`), linked as a run
links them (:mod:`piconv.bulk.lineage`) and counted as every total of piconv counts
(:func:`piconv.facts.counted`), each entry a fork copied from its parent once. The public
face is :func:`piconv.sessions` and :func:`piconv.usage`.
"""
