"""The loss codes of ``--to atif``: what an ATIF trajectory cannot hold, each stable and
documented in docs/formats/atif.md ("Losses")."""

from __future__ import annotations

SIGNATURE = "atif:signature-dropped"
"""A provider's replay signature on text, reasoning or a tool call (opaque, often large)."""
REASONING_REDACTED = "atif:reasoning-redacted"
"""Reasoning the provider returned encrypted, with no readable text."""
TOOL_DETAILS = "atif:tool-details-dropped"
"""A tool result's ``details``: the tool's own data, never shown to the model."""
TOOL_UNANSWERED = "atif:tool-result-synthesized"
"""A tool call whose result is not in the context (the turn was aborted, or the session
ended first): its observation is the one pi-ai sends the model in its place, ``No result
provided``, an error, marked ``extra.synthesized``."""
TOOL_ORPHAN = "atif:tool-result-orphaned"
"""A tool result whose call is not in the trajectory: a system step of its own."""
CALL_ID = "atif:call-id-synthesized"
"""A tool call without an id: ATIF requires one, so one is made up from the entry id."""
ARGUMENTS = "atif:arguments-wrapped"
"""Tool-call arguments that are not a JSON object, kept under ``{"_arguments": ...}``."""
IMAGE_TYPE = "atif:image-type-unsupported"
"""An image of a type ATIF does not list (PNG, JPEG, GIF, WebP): a text note stands for it."""
IMAGE_INVALID = "atif:image-invalid"
"""An image whose data is not base64: a text note stands for it."""
PART_AS_TEXT = "atif:part-as-text"
"""A content part of a kind the message cannot hold in ATIF (reasoning in a prompt, an
unknown part), written as text."""
UNKNOWN_MESSAGE = "atif:unknown-message"
"""A message of a role the IR does not know: a system step with its JSON as text."""
HIDDEN_SHELL = "atif:shell-command-excluded"
"""A shell command the user kept out of the model's context (pi's ``!!``): not a step."""
USAGE_OUTSIDE_STEPS = "atif:usage-outside-steps"
"""Usage of a model call that is no agent step (a summary, a tool's own call, a cache
refresh): in ``final_metrics`` and the step's ``extra``, not in any step's ``metrics``."""
FOLDED = "atif:history-folded"
"""Messages on the path that a compaction folded into its summary: the trajectory is the
model's context, so they are no steps (``final_metrics`` still counts their usage)."""
TIMESTAMP = "atif:timestamp-dropped"
"""A time stamp ATIF's ISO 8601 rule does not accept: the step has none."""
ENTRY_NOT_STEP = "atif:entry-not-step"
"""Entries along the path that are no message of the context (labels, model changes,
extension state...): the trajectory's ``extra`` carries labels and the session name."""
