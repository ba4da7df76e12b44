"""The ``compat`` switches of an OpenAI-compatible server, as combo boxes that default to "Automatic".

"Automatic" leaves the key out of models.json, so piwork's detection by endpoint applies (spec §4.1);
any other choice is written as the switch's value. Keys the page does not know are kept by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtWidgets import QComboBox, QFormLayout, QWidget

AUTOMATIC = "Automatic"


@dataclass(frozen=True)
class CompatSwitch:
    key: str
    label: str
    description: str
    choices: tuple[tuple[str, Any], ...] = (("Yes", True), ("No", False))


SWITCHES: tuple[CompatSwitch, ...] = (
    CompatSwitch(
        "supportsDeveloperRole",
        "Developer role",
        "Send the system prompt with the 'developer' role (OpenAI reasoning models) instead of 'system'.",
    ),
    CompatSwitch(
        "maxTokensField",
        "Output limit field",
        "Which request field carries the output token limit.",
        (("max_tokens", "max_tokens"), ("max_completion_tokens", "max_completion_tokens")),
    ),
    CompatSwitch(
        "supportsUsageInStreaming",
        "Token usage while streaming",
        "Ask for token counts in the stream (stream_options.include_usage).",
    ),
    CompatSwitch(
        "supportsStore",
        "Send store: false",
        "Tell the server not to keep the conversation (OpenAI's 'store').",
    ),
    CompatSwitch(
        "supportsStrictMode", "Strict tool schemas", "Mark tool schemas as strict (some servers reject it)."
    ),
    CompatSwitch(
        "supportsFinishReason",
        "Server sends finish_reason",
        "When No, a reply that ends without a finish_reason is not treated as broken.",
    ),
    CompatSwitch(
        "supportsReasoningEffort",
        "reasoning_effort parameter",
        "Send the thinking level as reasoning_effort.",
    ),
    CompatSwitch(
        "thinkingFormat",
        "Thinking request format",
        "How the thinking level is sent to this server's models.",
        (
            ("OpenAI (reasoning_effort)", "openai"),
            ("OpenRouter (reasoning.effort)", "openrouter"),
            ("DeepSeek (thinking)", "deepseek"),
            ("Qwen (enable_thinking)", "qwen"),
            ("Qwen chat template", "qwen-chat-template"),
            ("Chat template arguments", "chat-template"),
            ("Together (reasoning.enabled)", "together"),
            ("Z.ai (thinking)", "zai"),
            ("Thinking level as a string", "string-thinking"),
        ),
    ),
    CompatSwitch(
        "thinkingTokenBudgetField",
        "Thinking budget field",
        "Send a thinking token budget in this field (vLLM, llama.cpp, Qwen/SGLang).",
        (
            ("thinking_token_budget (vLLM)", "thinking_token_budget"),
            ("thinking_budget_tokens (llama.cpp)", "thinking_budget_tokens"),
            ("thinking_budget (Qwen, SGLang)", "thinking_budget"),
        ),
    ),
    CompatSwitch(
        "cacheControlFormat",
        "Prompt caching marks",
        "Add cache_control marks to the request (servers that route to Anthropic models).",
        (("Anthropic style (cache_control)", "anthropic"),),
    ),
    CompatSwitch(
        "promptCacheKey",
        "Send a prompt cache key",
        "Send the session id as prompt_cache_key (OpenAI); some proxies reject the field.",
    ),
    CompatSwitch(
        "requiresToolResultName",
        "Tool results carry the tool name",
        "Add the tool's name to each tool result message (some Mistral-style servers need it).",
    ),
    CompatSwitch(
        "requiresAssistantAfterToolResult",
        "Assistant turn after tool results",
        "Insert a short assistant message between tool results and the next user message.",
    ),
    CompatSwitch(
        "requiresThinkingAsText",
        "Send earlier thinking as text",
        "Replay the model's earlier thinking as plain text.",
    ),
)


class CompatForm(QWidget):
    """One combo per switch; ``values()`` has only the switches not left on Automatic."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.combos: dict[str, QComboBox] = {}
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        for switch in SWITCHES:
            combo = QComboBox(self)
            combo.setObjectName("compat_" + switch.key)
            combo.addItem(AUTOMATIC, None)
            for text, value in switch.choices:
                combo.addItem(text, value)
            combo.setToolTip(f"{switch.description} (models.json compat.{switch.key})")
            combo.setAccessibleName(switch.label)
            combo.setAccessibleDescription(switch.description)
            form.addRow(switch.label, combo)
            self.combos[switch.key] = combo

    def set_values(self, compat: dict[str, Any]) -> None:
        for key, combo in self.combos.items():
            value = compat.get(key)
            index = 0
            for i in range(1, combo.count()):
                if combo.itemData(i) == value and value is not None:
                    index = i
            combo.setCurrentIndex(index)

    def values(self) -> dict[str, Any]:
        return {key: combo.currentData() for key, combo in self.combos.items() if combo.currentIndex() > 0}

    def known_keys(self) -> set[str]:
        return set(self.combos)
