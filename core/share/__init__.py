"""``piconv share SESSION``: one self-contained page of a session, redacted by default,
uploaded as a secret GitHub gist through the GitHub CLI (``gh``) when it is installed and
logged in. The command line's own: the library neither prints nor uploads. See
docs/sharing.md.

- :mod:`.cli`: the command (what is made, what is said, the confirmation).
- :mod:`.gist`: the GitHub CLI (found on ``PATH``, asked whether it is logged in, run).
"""
