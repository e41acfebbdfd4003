#!/bin/sh
# Re-send the failing request. The key, if any, comes from $OPENAI_API_KEY.
curl -sS -N -X POST http://127.0.0.1:39741/v1/chat/completions \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @- <<'AGENTFUZZ_JSON'
{"model":"smollm2","messages":[{"role":"user","content":""}],"tools":[{"type":"function","function":{"name":"mcp__my-server__run_shell","description":"Call mcp__my-server__run_shell when the user asks for it.","parameters":{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"number"}},"additionalProperties":false,"required":["query"]}}}],"tool_choice":{"type":"function","function":{"name":"mcp__my-server__run_shell"}},"stream":true,"seed":0,"temperature":0.0,"max_tokens":16}
AGENTFUZZ_JSON
