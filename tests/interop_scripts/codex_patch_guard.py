#!/usr/bin/env python3
"""A Codex PreToolUse guard for apply_patch: the patch text is tool_input.command."""
import json
import re
import sys

data = json.load(sys.stdin)
if data.get("tool_name") != "apply_patch":
    sys.exit(0)
patch = data.get("tool_input", {}).get("command", "")
files = re.findall(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", patch, re.M)
if any(name.endswith(".env") for name in files):
    print(json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "Patches may not touch .env files (reason-marker-7f3a)"}}))
elif any(name.startswith("vendor/") for name in files):
    print(json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny"}}))
