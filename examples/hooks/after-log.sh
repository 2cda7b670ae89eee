#!/usr/bin/env bash
# Spec "After log or notification". Configure as after_tool with failure_policy: "ignore".
set -euo pipefail
payload=$(cat)
mkdir -p .magi-hooks
tool=$(printf '%s' "$payload" | jq -r '.tool.name')
success=$(printf '%s' "$payload" | jq -r '.result.success // "n/a"')
printf '%s tool=%s success=%s\n' "$(date -u +%FT%TZ)" "$tool" "$success" >> .magi-hooks/after.log
