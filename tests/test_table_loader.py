"""The loaders built from pi's field tables (:func:`piconv.pi.tables.compile_loader`): a
member of the expected type fills its field; one null, of another type or unknown stays in
``extra``, in the order the source gave it."""

from __future__ import annotations

from typing import Any

import pytest
from piconv.ir import AssistantMessage, Cost, Usage, UserMessage
from piconv.pi import model as pimodel


@pytest.mark.parametrize(
    ("raw", "fields", "extra"),
    [
        ({"input": 1, "surprise": [1]}, {"input_tokens": 1}, {"surprise": [1]}),
        (
            {"surprise": 1, "input": 2, "output": 3, "later": {"x": None}},
            {"input_tokens": 2, "output_tokens": 3},
            {"surprise": 1, "later": {"x": None}},
        ),
        ({"input": None, "surprise": 1}, {}, {"input": None, "surprise": 1}),
        ({"input": 1.5, "output": "x", "surprise": 1}, {"input_tokens": 1.5}, {"output": "x", "surprise": 1}),
        ({"input": "one", "surprise": [1]}, {}, {"input": "one", "surprise": [1]}),
        (
            {"durationMs": 12, "input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3},
            {
                "input_tokens": 1,
                "output_tokens": 2,
                "cache_read_tokens": 0,
                "cache_write_tokens": 0,
                "total_tokens": 3,
            },
            {"durationMs": 12},
        ),
        (
            {"input": 1, "cost": {"input": 0.5, "odd": True}},
            {"input_tokens": 1, "cost": Cost(input=0.5, extra={"odd": True})},
            {},
        ),
    ],
)
def test_members_fill_fields_and_the_rest_stays_in_extra_in_order(
    raw: dict[str, Any], fields: dict[str, Any], extra: dict[str, Any]
) -> None:
    usage = pimodel.load_usage(dict(raw))
    assert usage == Usage(**fields, extra=extra)
    assert list(usage.extra) == list(extra)
    assert pimodel.dump_usage(usage) == raw


def test_fixed_fields_defaults_and_content() -> None:
    summary = pimodel._load_summary({"role": "branchSummary", "summary": "s"}, kind="branch")
    assert (summary.kind, summary.summary, summary.tokens_before) == ("branch", "s", None)
    assert pimodel._load_summary({"role": "compactionSummary"}).kind == "compaction"
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        pimodel._load_summary({}, colour="red")
    with pytest.raises(TypeError):
        pimodel.load_content(5)
    user = pimodel.load_message({"role": "user", "content": "hi"})
    assert user == UserMessage(content="hi")


def test_stop_reasons_are_renamed_and_unknown_ones_kept() -> None:
    for given, read in (("toolUse", "tool_use"), ("stop", "stop"), ("somethingNew", "somethingNew")):
        message = pimodel.load_message({"role": "assistant", "content": [], "stopReason": given})
        assert type(message) is AssistantMessage and message.stop_reason == read
        assert pimodel.dump_message(message)["stopReason"] == given
