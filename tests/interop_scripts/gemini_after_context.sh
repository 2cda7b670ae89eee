#!/usr/bin/env bash
# A Gemini CLI AfterTool hook: additionalContext for reads, a deny (hide the result) for secrets.
input=$(cat)
path=$(printf '%s' "$input" | jq -r '.tool_input.file_path // empty')
case "$path" in
  *secrets*)
    printf '{"decision": "deny", "reason": "That file holds secrets; do not repeat its content."}\n'
    ;;
  *)
    printf '{"hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "Read files are UTF-8."}}\n'
    ;;
esac
