"""A shell command the user ran (``!cmd``) as the text a model reads: pi's
``bashExecutionToText``, shared by the formats that show the model's context (the OpenAI
request, ATIF)."""

from __future__ import annotations

from typing import Any

from piconv.ir import ShellCommand

from .jsnumber import js_number_text


def js_text(value: Any) -> str:
    """A value interpolated into a JavaScript template string (absent → ``undefined``)."""
    if value is None:
        return "undefined"
    if type(value) is int or type(value) is float:
        text = js_number_text(value)
        return "null" if text is None else text
    return str(value)


def shell_command_text(msg: ShellCommand) -> str:
    """pi's ``bashExecutionToText``."""
    text = f"Ran `{js_text(msg.command)}`\n"
    if msg.output:
        text += f"```\n{msg.output}\n```"
    else:
        text += "(no output)"
    if msg.cancelled:
        text += "\n\n(command cancelled)"
    elif msg.exit_code is not None and msg.exit_code != 0:
        text += f"\n\nCommand exited with code {js_text(msg.exit_code)}"
    if msg.truncated and msg.full_output_path:
        text += f"\n\n[Output truncated. Full output: {msg.full_output_path}]"
    return text
