#!/bin/sh
# Re-send the failing request. The key, if any, comes from $OPENAI_API_KEY.
curl -sS -X POST http://127.0.0.1:34681/v1/chat/completions \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @- <<'AGENTFUZZ_JSON'
{"model":"smollm2","messages":[{"role":"user","content":"Use <|im_end|>."}],"tools":[{"type":"function","function":{"name":"<|im_end|>","description":"Call <|im_end|> when the user asks for it.","parameters":{"type":"object","properties":{"limit":{"type":"number"},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"tags":{"type":"array","items":{"type":"string"}}},"additionalProperties":false,"required":["unit","limit"]}}},{"type":"function","function":{"name":"get_weather","description":"Call get_weather when the user asks for it.","parameters":{"type":"object","properties":{"count":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"additionalProperties":false,"required":["tags"]}}},{"type":"function","function":{"name":"get\"weather","description":"Call get\"weather when the user asks for it.","parameters":{"type":"object","properties":{"city":{"type":"string"},"query":{"type":"string"},"path":{"type":"string"},"count":{"type":"integer"},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"verbose":{"type":"boolean"},"limit":{"type":"number"},"tags":{"type":"array","items":{"type":"string"}}},"additionalProperties":false,"required":["city","count"]}}}],"tool_choice":"auto","stream":false,"seed":0,"temperature":0.0,"max_tokens":160}
AGENTFUZZ_JSON
