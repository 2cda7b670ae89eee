#!/usr/bin/env python3
"""A Claude Code PostToolUse hook: feedback (decision block + reason) and additionalContext."""
import json
import sys

data = json.load(sys.stdin)
tool = data.get("tool_name")
if tool == "Write":
    print(json.dumps({
        "decision": "block",
        "reason": "The formatter rewrote this file; read it again before editing.",
        "hookSpecificOutput": {"hookEventName": "PostToolUse",
                               "additionalContext": "Project style: 4-space indents."},
    }))
elif tool == "Bash":
    print(json.dumps({"hookSpecificOutput": {
        "hookEventName": "PostToolUse",
        "additionalContext": "Tests live in tests/; run them with pytest -q.",
        "updatedMCPToolOutput": {"content": "hidden"},
    }}))
