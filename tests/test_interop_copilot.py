"""Interop: `magihook adapt copilot` (GitHub Copilot CLI's PascalCase hook events).

Stdin documents are the ones Copilot 1.0.102 gave a capture hook (docs/interop.md); every hook
is a real process.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import EXAMPLES, run_cli
from test_interop import BLOCKED, SETTINGS_BROKEN, STOPPED, adapt, answer, captured, config, install

SECRET = "sk-" + "unitA1b2C3d4E5f6G7h8"


def copilot_stdin(project, tool, tool_input, event="PreToolUse", **extra):
    """What Copilot 1.0.102 hands a PascalCase hook: no tool_use_id, no permission mode."""
    document = {"hook_event_name": event, "session_id": "51e8104c-e242-40cc-8810-f992cb1afb2f",
                "timestamp": "2026-12-03T15:10:44.814Z", "cwd": str(project),
                "tool_name": tool, "tool_input": tool_input}
    document.update(extra)
    return document


def capture(project, phase="before_tool"):
    install(project, "capture.py")
    return config(project, **{phase: [{"label": "cap", "command": "./.hooks/capture.py",
                                       "payload": "full"}]})


def gate(project):
    shutil.copy2(EXAMPLES / "hooks" / "block-dangerous-bash.sh", project / "gate.sh")
    return config(project, before_tool=[{"label": "gate", "command": "./gate.sh", "payload": "full",
                                         "failure_policy": "block"}])


# --- the tools, as magihook events ----------------------------------------------------------------

@pytest.mark.parametrize("tool,tool_input,name,request_", [
    ("Bash", {"command": "ls", "description": "x"}, "bash", {"command": "ls"}),
    ("Read", {"path": "{p}/src/a.py", "view_range": [1, 5]}, "read", {"path": "src/a.py"}),
    ("Write", {"path": "{p}/notes.txt", "file_text": "hi\n"}, "write",
     {"path": "notes.txt", "content": "hi\n"}),
    ("Edit", {"path": "{p}/a.py", "old_str": "x = 1", "new_str": "x = 2"}, "hash_edit",
     {"path": "a.py", "input": "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n*** End Patch"}),
    ("Glob", {"pattern": "*.txt"}, "ffgrep", {"glob": "*.txt"}),
    ("Grep", {"pattern": "bye", "glob": "*.py", "paths": ["src"]}, "ffgrep",
     {"pattern": "bye", "glob": "*.py"}),
])
def test_each_copilot_tool_reaches_hooks_in_magihooks_words(project, tool, tool_input, name, request_):
    settings = capture(project)
    tool_input = json.loads(json.dumps(tool_input).replace("{p}", str(project)))
    result = adapt("copilot", project, copilot_stdin(project, tool, tool_input), settings)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    got = captured(project)[0]["stdin"]
    assert (got["tool"], got["request"]) == ({"name": name, "call_id": None}, request_)
    assert got["context"]["session_id"] == "51e8104c-e242-40cc-8810-f992cb1afb2f"


@pytest.mark.parametrize("event,tool,extra,success,content", [
    ("PostToolUse", "Bash", {"tool_result": {"result_type": "success", "text_result_for_llm":
                                             "hi\n<shellId: 0 completed with exit code 0>"}},
     True, "hi\n<shellId: 0 completed with exit code 0>"),
    # Copilot calls a non-zero exit a success; its own closing line says otherwise.
    ("PostToolUse", "Bash", {"tool_result": {"result_type": "success", "text_result_for_llm":
                                             "hi\n<shellId: 0 completed with exit code 3>"}},
     False, "hi\n<shellId: 0 completed with exit code 3>"),
    # A command that prints such a line itself is read by Copilot's last line only.
    ("PostToolUse", "Bash", {"tool_result": {"result_type": "success", "text_result_for_llm":
                                             "<shellId: 0 completed with exit code 0>\n"
                                             "<shellId: 0 completed with exit code 1>"}},
     False, "<shellId: 0 completed with exit code 0>\n<shellId: 0 completed with exit code 1>"),
    ("PostToolUse", "Write", {"tool_result": {"result_type": "failure", "text_result_for_llm": "no"}},
     False, "no"),
    ("PostToolUseFailure", "Read", {"error": "Path does not exist"}, False, "Path does not exist"),
])
def test_copilot_results_reach_after_hooks(project, event, tool, extra, success, content):
    settings = capture(project, "after_tool")
    result = adapt("copilot", project, copilot_stdin(project, tool, {"command": "ls", "path": "a"},
                                                     event, **extra), settings)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    got = captured(project)[0]["stdin"]["result"]
    assert (got["success"], got["content"]) == (success, content)


def test_a_tool_magihook_does_not_wrap_runs_no_hook(project):
    settings = capture(project)
    for tool in ("fetch_copilot_cli_documentation", "read_bash", "view"):
        result = adapt("copilot", project, copilot_stdin(project, tool, {}), settings)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert not (project / "captured.jsonl").exists()


# --- the answers --------------------------------------------------------------------------------

def test_block_is_a_top_level_deny_with_the_fixed_sentence(project):
    result = adapt("copilot", project, copilot_stdin(project, "Bash", {"command": "rm -rf /"}),
                   gate(project))
    assert answer(result) == {"permissionDecision": "deny", "permissionDecisionReason": BLOCKED}
    assert result.stderr == ""


def test_fail_before_a_tool_denies_and_after_a_tool_withholds_the_output(project):
    (project / "fail.sh").write_text("#!/bin/sh\ncat >/dev/null\necho secret >&2\nexit 1\n")
    (project / "fail.sh").chmod(0o755)
    hook = {"label": "strict", "command": "./fail.sh", "failure_policy": "fail"}
    settings = config(project, before_tool=[hook], after_tool=[hook])
    before = adapt("copilot", project, copilot_stdin(project, "Bash", {"command": "ls"}), settings)
    assert answer(before) == {"permissionDecision": "deny", "permissionDecisionReason": BLOCKED}
    after = adapt("copilot", project, copilot_stdin(
        project, "Bash", {"command": "ls"}, "PostToolUse",
        tool_result={"result_type": "success", "text_result_for_llm": "out"}), settings)
    assert answer(after) == {"modifiedResult": {"resultType": "failure", "textResultForLlm": STOPPED}}


def test_context_is_top_level_additional_context(project):
    shutil.copy2(EXAMPLES / "hooks" / "memory-after.sh", project / "memory.sh")
    settings = config(project, provider_context_injection=True,
                      after_tool=[{"label": "memory", "command": "./memory.sh"}])
    result = adapt("copilot", project, copilot_stdin(
        project, "Bash", {"command": "ls"}, "PostToolUse",
        tool_result={"result_type": "success", "text_result_for_llm": "out"}), settings)
    assert answer(result) == {
        "additionalContext": "Relevant bounded memory for next provider call (after bash)."}


@pytest.mark.parametrize("event,expected", [
    ("PreToolUse", {"permissionDecision": "deny", "permissionDecisionReason": SETTINGS_BROKEN}),
    ("PostToolUse", {"modifiedResult": {"resultType": "failure", "textResultForLlm": STOPPED}}),
])
def test_a_broken_settings_file_fails_closed_and_names_the_file_to_the_user_only(project, event,
                                                                                   expected):
    settings = project / "broken.json"
    settings.write_text('{"hooks": {"enabled": true, "timeout": 5}}')
    result = adapt("copilot", project, copilot_stdin(
        project, "Bash", {"command": "ls"}, event,
        tool_result={"result_type": "success", "text_result_for_llm": "out"}), str(settings))
    got = answer(result)
    assert got.pop("systemMessage").startswith("magihook: %s: $.hooks.timeout" % settings)
    assert got == expected


def test_print_settings_is_a_copilot_hooks_file_with_absolute_paths(project):
    settings = config(project)
    result = run_cli("adapt", "copilot", "--print-settings", "--config", "settings.json", cwd=project)
    assert result.returncode == 0, result.stderr
    snippet = json.loads(result.stdout)
    assert snippet["version"] == 1
    assert sorted(snippet["hooks"]) == ["PostToolUse", "PostToolUseFailure", "PreToolUse"]
    for handlers in snippet["hooks"].values():
        (handler,) = handlers
        assert sorted(handler) == ["bash", "timeoutSec", "type"]
        assert (handler["type"], handler["timeoutSec"]) == ("command", 600)
        assert handler["bash"].endswith(" adapt copilot --config " + settings)
        assert handler["bash"].split()[0].startswith("/")


# --- a script written for Copilot, inside magihook -----------------------------------------------

COPILOT_GUARD = """#!/bin/sh
stdin=$(cat)
printf '%s' "$stdin" > seen.json
case "$stdin" in
*'rm -rf'*) printf '{"permissionDecision":"deny","permissionDecisionReason":"no reason-marker-7f3a"}' ;;
esac
"""


def test_a_copilot_dialect_hook_gets_copilots_stdin_and_its_top_level_deny_blocks(project):
    (project / "guard.sh").write_text(COPILOT_GUARD)
    (project / "guard.sh").chmod(0o755)
    settings = config(project, before_tool=[{"label": "g", "command": "./guard.sh",
                                             "dialect": "copilot", "payload": "full"}])
    denied = adapt("claude-code", project, {
        "session_id": "s", "transcript_path": None, "cwd": str(project), "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf x"},
        "tool_use_id": "t"}, settings)
    assert answer(denied)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "reason-marker-7f3a" not in denied.stdout
    seen = json.loads((project / "seen.json").read_text())
    assert (seen["hook_event_name"], seen["tool_name"], seen["tool_input"]) == (
        "PreToolUse", "Bash", {"command": "rm -rf x"})


def test_a_copilot_dialect_after_hook_gets_tool_result(project):
    (project / "after.sh").write_text("#!/bin/sh\ncat > seen.json\n")
    (project / "after.sh").chmod(0o755)
    settings = config(project, after_tool=[{"label": "a", "command": "./after.sh",
                                            "dialect": "copilot", "payload": "full"}])
    result = adapt("copilot", project, copilot_stdin(
        project, "Write", {"path": str(project / "n.txt"), "file_text": "x"}, "PostToolUse",
        tool_result={"result_type": "success", "text_result_for_llm": "Created"}), settings)
    assert (result.returncode, result.stdout) == (0, "")
    seen = json.loads((project / "seen.json").read_text())
    assert seen["tool_input"] == {"path": str(project / "n.txt"), "file_text": "x"}
    assert seen["tool_result"] == {"result_type": "success", "text_result_for_llm": "Created"}
    assert "tool_response" not in seen


def test_a_camelcase_event_wired_by_hand_fails_closed_and_stop_runs_nothing(project):
    """Copilot's camelCase events carry no event name: adapt cannot tell them apart, so it exits 2,
    which Copilot reads as a deny (measured), never 1 or an empty answer that lets the tool run."""
    settings = capture(project)
    camel = {"sessionId": "s", "timestamp": 1796310620889, "cwd": str(project),
             "toolName": "bash", "toolArgs": {"command": "rm -rf /"}}
    result = adapt("copilot", project, camel, settings)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "magihook: $.hook_event_name: missing (expected a string)\n"
    stop = {"hook_event_name": "Stop", "session_id": "s", "cwd": str(project),
            "transcript_path": "/home/u/.copilot/session-state/s/events.jsonl",
            "stop_reason": "end_turn", "stop_hook_active": False}
    stopped = adapt("copilot", project, stop, settings)
    assert (stopped.returncode, stopped.stdout, stopped.stderr) == (0, "", "")
    assert not (project / "captured.jsonl").exists()
