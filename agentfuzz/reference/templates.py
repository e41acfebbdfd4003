"""Chat templates (Jinja2) that turn a message list into the prompt the scripted model reads.

The Kimi template keeps the two lines seed 000 is about: a call id rendered verbatim after
``<|tool_call_begin|>`` and as ``## Return of {id}``, with the function name nowhere else.
The harmony template (gpt-oss) addresses calls by recipient, ``to=functions.{name}``, so
ids never reach its prompt.
"""

from __future__ import annotations

import json
import re
from typing import Any

from jinja2.sandbox import ImmutableSandboxedEnvironment

from .intake import Message, ToolSpec
from .switches import Template

__all__ = ["render"]

KIMI_TEMPLATE = """\
{%- if tools -%}
<|im_system|>tool_declare<|im_middle|>{{ tools | tojson }}<|im_end|>
{%- endif -%}
{%- for message in messages -%}
{%- if message.role == 'system' -%}<|im_system|>system<|im_middle|>
{%- elif message.role == 'user' -%}<|im_user|>user<|im_middle|>
{%- elif message.role == 'assistant' -%}<|im_assistant|>assistant<|im_middle|>
{%- else -%}<|im_system|>tool<|im_middle|>
{%- endif -%}
{%- if message.role == 'assistant' -%}
{%- if message.reasoning_content -%}<think>{{ message.reasoning_content }}</think>{%- endif -%}
{{ message.content }}
{%- if message.tool_calls -%}
<|tool_calls_section_begin|>
{%- for tool_call in message.tool_calls -%}
{%- set formatted_id = tool_call.id -%}
<|tool_call_begin|>{{ formatted_id }}<|tool_call_argument_begin|>\
{{ tool_call.function.arguments }}<|tool_call_end|>
{%- endfor -%}
<|tool_calls_section_end|>
{%- endif -%}
{%- elif message.role == 'tool' -%}
{%- set tool_call_id = message.tool_call_id -%}
## Return of {{ tool_call_id }}
{{ message.content }}
{%- else -%}
{{ message.content }}
{%- endif -%}
<|im_end|>
{%- endfor -%}
{%- if add_generation_prompt -%}<|im_assistant|>assistant<|im_middle|>{%- endif -%}
"""

HARMONY_TEMPLATE = """\
<|start|>system<|message|>You are a reference assistant.
Reasoning: medium
# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|>
{%- if tools -%}
<|start|>developer<|message|># Tools

## functions

namespace functions {
{% for tool in tools -%}
{%- if tool.function.description -%}
// {{ tool.function.description | replace('\\n', '\\n// ') }}
{% endif -%}
type {{ tool.function.name }} = (_: {{ tool.function.parameters | tojson }}) => any;
{% endfor -%}
} // namespace functions<|end|>
{%- endif -%}
{%- for message in messages -%}
{%- if message.role == 'system' -%}
<|start|>developer<|message|># Instructions

{{ message.content }}<|end|>
{%- elif message.role == 'user' -%}
<|start|>user<|message|>{{ message.content }}<|end|>
{%- elif message.role == 'assistant' -%}
{%- if message.reasoning_content -%}
<|start|>assistant<|channel|>analysis<|message|>{{ message.reasoning_content }}<|end|>
{%- endif -%}
{%- for tool_call in message.tool_calls -%}
<|start|>assistant to=functions.{{ tool_call.function.name }}<|channel|>commentary json\
<|message|>{{ tool_call.function.arguments }}<|call|>
{%- endfor -%}
{%- if message.content -%}
<|start|>assistant<|channel|>final<|message|>{{ message.content }}<|end|>
{%- endif -%}
{%- else -%}
<|start|>functions.{{ message.name }} to=assistant<|channel|>commentary<|message|>\
{{ message.content }}<|end|>
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}<|start|>assistant{%- endif -%}
"""


def _tojson(value: Any) -> str:
    # HF templates use an unescaped tojson; Jinja's own escapes '<' and '&' for HTML.
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


_ENV = ImmutableSandboxedEnvironment(autoescape=False, keep_trailing_newline=True)
_ENV.filters["tojson"] = _tojson
_COMPILED = {
    "kimi": _ENV.from_string(KIMI_TEMPLATE),
    "harmony": _ENV.from_string(HARMONY_TEMPLATE),
}


# A careful server tokenizes message text as text: a special token's spelling inside it is
# never the token. Here a word joiner after the opening bracket keeps it from reading as one.
_SPECIAL = re.compile(r"<(?=[|｜])")


def _as_text(content: str) -> str:
    return _SPECIAL.sub("<\u2060", content)


def _as_dicts(messages: list[Message], escape: bool) -> list[dict[str, Any]]:
    """Chat-completions message dicts, plus the called name on each tool result (harmony)."""
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for msg in messages:
        content = _as_text(msg.content) if escape else msg.content
        item: dict[str, Any] = {"role": msg.role, "content": content}
        if msg.role == "assistant":
            item["reasoning_content"] = msg.reasoning
            item["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in msg.tool_calls
            ]
            names.update((c.id, c.name) for c in msg.tool_calls)
        elif msg.role == "tool":
            item["tool_call_id"] = msg.tool_call_id
            item["name"] = names.get(msg.tool_call_id or "", "unknown")
        out.append(item)
    return out


def render(
    template: Template,
    messages: list[Message],
    tools: list[ToolSpec] | None,
    escape: bool = True,
) -> str:
    """Render the prompt for the next assistant turn; ``escape`` keeps special-token spellings
    in message text from reading as special tokens (off only for a planted fault)."""
    tool_dicts = [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools or []
    ]
    return _COMPILED[template].render(
        messages=_as_dicts(messages, escape), tools=tool_dicts, add_generation_prompt=True
    )
