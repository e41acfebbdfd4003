#!/bin/sh
# Re-send the failing request. The key, if any, comes from $OPENAI_API_KEY.
curl -sS -X POST http://127.0.0.1:54281/v1/chat/completions \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @- <<'AGENTFUZZ_JSON'
{"model":"smollm2","messages":[{"role":"user","content":"Use Bash, then answer: lF中8UIKDοIE9C,οvC5"},{"role":"user","content":"Use Bash, then answer: lF中8UIKDοIE9C,οvC5"}],"tools":[{"type":"function","function":{"name":"Bash","description":"Call Bash when the user asks for it.","parameters":{"type":"object","properties":{"q\"uote":{"type":"string"},"back\\slash":{"type":"string"},"ünï":{"type":"integer"}},"additionalProperties":false,"required":["q\"uote"]}}}],"tool_choice":"auto","stream":false,"seed":0,"temperature":0.0,"max_tokens":16}
AGENTFUZZ_JSON
