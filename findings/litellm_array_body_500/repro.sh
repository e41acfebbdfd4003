#!/bin/sh
# Re-send the failing request. The key, if any, comes from $OPENAI_API_KEY.
printf %s '[{"model": "kimi-k2-reference", "messages": [{"role": "user", "content": ""}], "stream": false}]' | curl -sS -X POST http://127.0.0.1:35041/v1/chat/completions \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @-
