#!/usr/bin/env bash
# Spec "memory-after": a provider context injection hook. Configure as after_tool (or
# after_assistant / after_reasoning) with provider_context_injection: true. It prints the
# spec's context_items shape; memory lines come from .magi-hooks/memory.txt when it exists.
set -euo pipefail
payload=$(cat)
tool=$(printf '%s' "$payload" | jq -r '.tool.name')
if [ -f .magi-hooks/memory.txt ]; then
  note=$(head -c 2000 .magi-hooks/memory.txt)
else
  note="Relevant bounded memory for next provider call (after ${tool})."
fi
jq -cn --arg content "$note" '{context_items: [{role: "user", content: $content}]}'
