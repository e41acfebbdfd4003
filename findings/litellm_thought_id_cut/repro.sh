#!/bin/sh
# Re-send the failing request. The key, if any, comes from $OPENAI_API_KEY.
curl -sS -X POST http://127.0.0.1:47707/v1/chat/completions \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @- <<'AGENTFUZZ_JSON'
{"model":"kimi-k2-reference","messages":[{"role":"user","content":""},{"role":"tool","tool_call_id":"call_onRK4yKcn4m6lSmlllqCMTZ__thought__OF20HKzct+oH7j5CuA/hqWdHzHBBO0ZLMI9d","content":""}],"stream":false}
AGENTFUZZ_JSON
