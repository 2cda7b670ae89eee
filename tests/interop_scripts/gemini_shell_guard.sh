#!/usr/bin/env bash
# A Gemini CLI BeforeTool guard: JSON decision on stdout, logs on stderr, exit 0.
input=$(cat)
command=$(printf '%s' "$input" | jq -r '.tool_input.command // empty')
echo "gemini guard checked a command" >&2
if printf '%s' "$command" | grep -Eq 'rm -rf|mkfs'; then
  printf '{"decision": "deny", "reason": "Destructive command blocked (reason-marker-7f3a)"}\n'
  exit 0
fi
printf '{}\n'
