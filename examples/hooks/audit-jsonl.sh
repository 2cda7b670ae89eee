#!/usr/bin/env bash
# Spec "Audit every hook payload to local JSONL".
set -euo pipefail
mkdir -p .magi-hooks
cat >> .magi-hooks/tool-hooks.jsonl
printf '\n' >> .magi-hooks/tool-hooks.jsonl
