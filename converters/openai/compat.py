"""pi-ai's compat flags for the openai-completions API: ``detectCompat`` and ``getCompat``.

The flags a target gets are detected from its provider and base URL, then overridden by
the model's own ``compat`` entry in pi's registry, then by ``--compat KEY=VALUE``.
"""

from __future__ import annotations

from typing import Any

from piconv import UsageError

Compat = dict[str, Any]
Model = dict[str, Any]

# getCompat's keys, in its order: each is ``model.compat.KEY ?? detected.KEY``.
COMPAT_KEYS = (
    "supportsStore",
    "supportsDeveloperRole",
    "supportsReasoningEffort",
    "supportsUsageInStreaming",
    "supportsFinishReason",
    "maxTokensField",
    "requiresToolResultName",
    "requiresAssistantAfterToolResult",
    "requiresNonNullAssistantContent",
    "requiresToolsWithToolHistory",
    "requiresThinkingAsText",
    "requiresReasoningContentOnAssistantMessages",
    "thinkingFormat",
    "openRouterRouting",
    "vercelGatewayRouting",
    "chatTemplateKwargs",
    "chatTemplateArgs",
    "zaiToolStream",
    "supportsThinkingTokenBudget",
    "thinkingTokenBudgetField",
    "supportsStrictMode",
    "supportsOpenAIGrammarTools",
    "supportsMidConvoSystemMessages",
    "supportsMidConvoToolAdditions",
    "cacheControlFormat",
    "sendSessionAffinityHeaders",
    "sessionAffinityFormat",
    "supportsLongCacheRetention",
    "promptCacheKeyMode",
    "vllmPriority",
)
MODEL_KEYS = ("reasoning", "input", "baseUrl", "api")
"""Model properties ``--compat`` may also set (image support is ``input``)."""


def detect_compat(model: Model) -> Compat:
    """pi-ai's ``detectCompat``: flags from the provider name and base URL."""
    provider = model.get("provider") or ""
    base_url = model.get("baseUrl") or ""
    model_id = model.get("id") or ""
    is_zai = provider in ("zai", "zai-coding-cn") or "api.z.ai" in base_url or "open.bigmodel.cn" in base_url
    is_together = provider == "together" or "api.together.ai" in base_url or "api.together.xyz" in base_url
    is_moonshot = provider in ("moonshotai", "moonshotai-cn") or "api.moonshot." in base_url
    is_openrouter = provider == "openrouter" or "openrouter.ai" in base_url
    is_cf_workers = provider == "cloudflare-workers-ai" or "api.cloudflare.com" in base_url
    is_cf_gateway = provider == "cloudflare-ai-gateway" or "gateway.ai.cloudflare.com" in base_url
    is_nvidia = provider == "nvidia" or "integrate.api.nvidia.com" in base_url
    is_ant_ling = provider == "ant-ling" or "api.ant-ling.com" in base_url
    is_cerebras = provider == "cerebras" or "cerebras.ai" in base_url
    is_deepseek = provider == "deepseek" or "deepseek.com" in base_url.lower()
    is_grok = provider == "xai" or "api.x.ai" in base_url
    is_non_standard = (
        is_nvidia
        or is_cerebras
        or is_grok
        or is_together
        or "chutes.ai" in base_url
        or is_deepseek
        or is_zai
        or is_moonshot
        or provider == "opencode"
        or "opencode.ai" in base_url
        or is_cf_workers
        or is_cf_gateway
        or is_ant_ling
    )
    use_max_tokens = (
        "chutes.ai" in base_url
        or is_deepseek
        or is_moonshot
        or is_cf_gateway
        or is_together
        or is_nvidia
        or is_ant_ling
        or is_zai
    )
    # The developer role is OpenAI's own; other hosts' chat templates often reject it.
    is_openai = provider == "openai" or "api.openai.com" in base_url
    if is_deepseek:
        thinking = "deepseek"
    elif is_zai:
        thinking = "zai"
    elif is_together:
        thinking = "together"
    elif is_ant_ling:
        thinking = "ant-ling"
    elif is_openrouter:
        thinking = "openrouter"
    else:
        thinking = "openai"
    return {
        "supportsStore": not is_non_standard,
        "supportsDeveloperRole": is_openai,
        "supportsReasoningEffort": not (
            is_grok or is_zai or is_moonshot or is_together or is_cf_gateway or is_nvidia or is_ant_ling
        ),
        "supportsUsageInStreaming": True,
        "supportsFinishReason": True,
        "maxTokensField": "max_tokens" if use_max_tokens else "max_completion_tokens",
        "requiresToolResultName": False,
        "requiresAssistantAfterToolResult": False,
        "requiresNonNullAssistantContent": False,
        "requiresToolsWithToolHistory": False,
        "requiresThinkingAsText": False,
        "requiresReasoningContentOnAssistantMessages": is_deepseek,
        "thinkingFormat": thinking,
        "openRouterRouting": {},
        "vercelGatewayRouting": {},
        "chatTemplateKwargs": {},
        "chatTemplateArgs": {},
        "zaiToolStream": False,
        "supportsThinkingTokenBudget": False,
        "thinkingTokenBudgetField": None,
        "supportsStrictMode": False,
        "supportsOpenAIGrammarTools": False,
        "supportsMidConvoSystemMessages": False,
        "supportsMidConvoToolAdditions": False,
        "cacheControlFormat": (
            "anthropic" if provider == "openrouter" and model_id.startswith("anthropic/") else None
        ),
        "sendSessionAffinityHeaders": is_openrouter,
        "sessionAffinityFormat": "openrouter" if is_openrouter else "openai",
        "supportsLongCacheRetention": not (
            is_together or is_cf_workers or is_cf_gateway or is_nvidia or is_ant_ling
        ),
    }


def get_compat(model: Model) -> Compat:
    """pi-ai's ``getCompat``: detected flags, each overridden by ``model.compat`` when set."""
    detected = detect_compat(model)
    explicit = model.get("compat")
    if not explicit:
        return detected
    resolved: Compat = {}
    for key in COMPAT_KEYS:
        value = explicit.get(key)
        resolved[key] = value if value is not None else detected.get(key)
    if explicit.get("openRouterRouting") is None:
        resolved["openRouterRouting"] = {}  # pi: `model.compat.openRouterRouting ?? {}`
    return resolved


def parse_value(text: str) -> Any:
    """A ``--compat`` value: JSON when it parses (true, 3, "x", {...}), else the raw string."""
    import json

    try:
        return json.loads(text)
    except ValueError:
        return text


def apply_overrides(model: Model, pairs: list[str] | tuple[str, ...]) -> Model:
    """The model with ``--compat KEY=VALUE`` applied: compat keys go into ``model.compat``
    (so they win over detection, as a registry entry would), model keys onto the model."""
    if not pairs:
        return model
    model = dict(model)
    compat = dict(model.get("compat") or {})
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"--compat expects KEY=VALUE, got {pair!r}")
        value = parse_value(raw)
        if key in COMPAT_KEYS:
            compat[key] = value
        elif key == "input":
            value = (
                value if isinstance(value, list) else [v.strip() for v in str(raw).split(",") if v.strip()]
            )
            model["input"] = value
        elif key == "images":  # shorthand for input=text[,image]
            model["input"] = ["text", "image"] if value is True else ["text"]
        elif key in MODEL_KEYS:
            model[key] = value
        else:
            known = ", ".join((*COMPAT_KEYS, *MODEL_KEYS, "images"))
            raise UsageError(f"unknown --compat key {key!r} (known: {known})")
    model["compat"] = compat
    return model
