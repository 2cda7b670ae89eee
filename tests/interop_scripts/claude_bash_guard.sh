#!/usr/bin/env bash
# A Claude Code PreToolUse guard in the style of the hooks reference: exit 2 blocks the call and
# Claude shows stderr to the model.  Also usable as a PostToolUse hook (stderr is then feedback).
set -euo pipefail
input=$(cat)
command=$(printf '%s' "$input" | jq -r '.tool_input.command // empty')
case "$command" in
  *"rm -rf"*|*"git push --force"*)
    echo "Blocked by guard: destructive command (reason-marker-7f3a)" >&2
    exit 2
    ;;
  *"sudo "*)
    exit 2  # no reason on stderr: Claude still blocks, Codex treats this as a hook failure
    ;;
esac
exit 0
