"""Interop: `magihook adapt qwen` (Qwen Code: Claude Code's hook protocol, Qwen's tools).

Stdin documents are the ones Qwen Code 0.24.4 gave a capture hook (docs/interop.md); every hook
is a real process.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import EXAMPLES, run_cli
from test_interop import BLOCKED, SETTINGS_BROKEN, STOPPED, adapt, answer, captured, config, install


def qwen_stdin(project, tool, tool_input, event="PreToolUse", **extra):
    """What Qwen Code 0.24.4 hands a hook in yolo mode."""
    document = {"session_id": "09999b02-5c29-4e95-812e-f392dd88feef",
                "transcript_path": "/home/u/.qwen/projects/-p/chats/09999b02.jsonl",
                "cwd": str(project), "hook_event_name": event,
                "timestamp": "2026-12-03T15:15:09.993Z", "permission_mode": "yolo",
                "prompt_id": "09999b02########0", "tool_name": tool, "tool_input": tool_input,
                "tool_use_id": "toolu_1796310909991_8287mixj3", "tool_call_id": "call_mock_0"}
    document.update(extra)
    return document


def capture(project, phase="before_tool"):
    install(project, "capture.py")
    return config(project, **{phase: [{"label": "cap", "command": "./.hooks/capture.py",
                                       "payload": "full"}]})


@pytest.mark.parametrize("tool,tool_input,name,request_", [
    ("run_shell_command", {"command": "ls", "timeout": 120000, "is_background": False,
                           "description": "x", "directory": "/elsewhere"}, "bash",
     {"command": "ls", "timeout": 120, "run_in_background": False}),
    ("read_file", {"file_path": "{p}/src/a.py", "offset": 10, "limit": 5}, "read",
     {"path": "src/a.py", "offset": 10, "limit": 5}),
    ("write_file", {"file_path": "{p}/notes.txt", "content": "hi\n"}, "write",
     {"path": "notes.txt", "content": "hi\n"}),
    ("edit", {"file_path": "{p}/a.py", "old_string": "x = 1", "new_string": "x = 2",
              "replace_all": True}, "hash_edit",
     {"path": "a.py", "replace_all": True,
      "input": "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n*** End Patch"}),
    ("glob", {"pattern": "*.txt", "path": "{p}/docs"}, "ffgrep", {"glob": "*.txt", "path": "docs"}),
    ("grep_search", {"pattern": "bye", "glob": "*.py", "path": "{p}"}, "ffgrep",
     {"pattern": "bye", "glob": "*.py", "path": "."}),
    ("agent", {"description": "d", "prompt": "p", "subagent_type": "general"}, "parallel_subagents",
     {"tasks": [{"description": "d", "prompt": "p", "agent": "general"}]}),
])
def test_each_qwen_tool_reaches_hooks_in_magihooks_words(project, tool, tool_input, name, request_):
    settings = capture(project)
    tool_input = json.loads(json.dumps(tool_input).replace("{p}", str(project)))
    result = adapt("qwen", project, qwen_stdin(project, tool, tool_input), settings)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    got = captured(project)[0]["stdin"]
    assert got["tool"] == {"name": name, "call_id": "toolu_1796310909991_8287mixj3"}
    assert got["request"] == request_
    assert got["context"]["session_path"] == "/home/u/.qwen/projects/-p/chats/09999b02.jsonl"


@pytest.mark.parametrize("event,extra,success,content", [
    ("PostToolUse", {"tool_response": {"llmContent": "Command: ls\nOutput: a\nExit Code: 0\n"
                                                     "Signal: (none)", "returnDisplay": ""}},
     True, "Command: ls\nOutput: a\nExit Code: 0\nSignal: (none)"),
    ("PostToolUseFailure", {"error": "Command: ls\nExit Code: 3", "is_interrupt": False},
     False, "Command: ls\nExit Code: 3"),
    # Qwen 0.15 hands a failed command to PostToolUse: its closing lines say it failed.
    ("PostToolUse", {"tool_response": {"llmContent": "Command: x\nOutput: hi\nError: (none)\n"
                                                     "Exit Code: 3\nSignal: (none)\n"
                                                     "Process Group PGID: (none)"}},
     False, "Command: x\nOutput: hi\nError: (none)\nExit Code: 3\nSignal: (none)\n"
            "Process Group PGID: (none)"),
    ("PostToolUse", {"tool_response": {"llmContent": "Output: Exit Code: 0\nExit Code: (none)\n"
                                                     "Signal: 9\nProcess Group PGID: 12"}},
     False, "Output: Exit Code: 0\nExit Code: (none)\nSignal: 9\nProcess Group PGID: 12"),
    ("PostToolUse", {"tool_response": {"llmContent": "Output: hi\nError: (none)\nExit Code: 0\n"
                                                     "Signal: 0\nProcess Group PGID: 21515"}},
     True, "Output: hi\nError: (none)\nExit Code: 0\nSignal: 0\nProcess Group PGID: 21515"),
    # An output line that looks like Qwen's is not read: only the closing three lines are.
    ("PostToolUse", {"tool_response": {"llmContent": "Output: x\nExit Code: 1\nSignal: (none)\n"
                                                     "Process Group PGID: (none)\nError: (none)\n"
                                                     "Exit Code: 0\nSignal: (none)\n"
                                                     "Process Group PGID: (none)"}},
     True, "Output: x\nExit Code: 1\nSignal: (none)\nProcess Group PGID: (none)\nError: (none)\n"
           "Exit Code: 0\nSignal: (none)\nProcess Group PGID: (none)"),
])
def test_qwen_results_reach_after_hooks(project, event, extra, success, content):
    settings = capture(project, "after_tool")
    result = adapt("qwen", project, qwen_stdin(project, "run_shell_command", {"command": "ls"},
                                               event, **extra), settings)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    got = captured(project)[0]["stdin"]["result"]
    assert (got["success"], got["content"]) == (success, content)


def test_qwen_answers_deny_stop_and_context_as_claude_code_does(project):
    shutil.copy2(EXAMPLES / "hooks" / "block-dangerous-bash.sh", project / "gate.sh")
    (project / "fail.sh").write_text("#!/bin/sh\ncat >/dev/null\nexit 1\n")
    (project / "fail.sh").chmod(0o755)
    shutil.copy2(EXAMPLES / "hooks" / "memory-after.sh", project / "memory.sh")
    gate = config(project, before_tool=[{"label": "gate", "command": "./gate.sh", "payload": "full",
                                         "failure_policy": "block"}])
    blocked = adapt("qwen", project, qwen_stdin(project, "run_shell_command", {"command": "rm -rf /"}), gate)
    deny = {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": BLOCKED}
    assert answer(blocked) == {"hookSpecificOutput": deny}
    strict = {"label": "strict", "command": "./fail.sh", "failure_policy": "fail"}
    failing = config(project, before_tool=[strict], after_tool=[strict])
    before = adapt("qwen", project, qwen_stdin(project, "write_file", {"file_path": "x"}), failing)
    assert answer(before) == {"hookSpecificOutput": dict(deny), "continue": False,
                              "stopReason": STOPPED}
    after_stdin = qwen_stdin(project, "write_file", {"file_path": "x"}, "PostToolUse",
                             tool_response={"llmContent": "ok", "returnDisplay": ""})
    assert answer(adapt("qwen", project, after_stdin, failing)) == {"continue": False,
                                                                    "stopReason": STOPPED}
    memory = config(project, provider_context_injection=True,
                    after_tool=[{"label": "memory", "command": "./memory.sh"}])
    assert answer(adapt("qwen", project, after_stdin, memory)) == {"hookSpecificOutput": {
        "hookEventName": "PostToolUse",
        "additionalContext": "Relevant bounded memory for next provider call (after write)."}}


def test_a_broken_settings_file_denies_with_json_never_exit_1(project):
    settings = project / "broken.json"
    settings.write_text("{not json")
    result = adapt("qwen", project, qwen_stdin(project, "run_shell_command", {"command": "ls"}),
                   str(settings))
    assert result.returncode == 0  # exit 1 is fail-open in Qwen Code
    got = answer(result)
    assert got["hookSpecificOutput"]["permissionDecisionReason"] == SETTINGS_BROKEN
    assert got["continue"] is False and str(settings) in got["systemMessage"]


def test_print_settings_counts_milliseconds_and_names_qwens_tools(project):
    settings = config(project)
    result = run_cli("adapt", "qwen", "--print-settings", "--config", "settings.json", cwd=project)
    assert result.returncode == 0, result.stderr
    hooks = json.loads(result.stdout)["hooks"]
    assert sorted(hooks) == ["PostToolUse", "PostToolUseFailure", "PreToolUse", "Stop"]
    for event, groups in hooks.items():
        (group,) = groups
        assert group.get("matcher") == (None if event == "Stop" else (
            "run_shell_command|read_file|write_file|edit|grep_search|glob|agent"))
        (handler,) = group["hooks"]
        assert (handler["type"], handler["timeout"]) == ("command", 600000)
        assert handler["command"].endswith(" adapt qwen --config " + settings)


def test_a_qwen_dialect_hook_gets_qwens_stdin_and_project_folder(project):
    (project / "q.sh").write_text('#!/bin/sh\ncat > "$QWEN_PROJECT_DIR/seen.json"\n')
    (project / "q.sh").chmod(0o755)
    settings = config(project, after_tool=[{"label": "q", "command": "$QWEN_PROJECT_DIR/q.sh",
                                            "dialect": "qwen", "payload": "full"}])
    result = adapt("qwen", project, qwen_stdin(
        project, "run_shell_command", {"command": "ls", "timeout": 2000}, "PostToolUse",
        tool_response={"llmContent": "a", "returnDisplay": ""}), settings)
    assert (result.returncode, result.stdout) == (0, "")
    seen = json.loads((project / "seen.json").read_text())
    assert (seen["tool_name"], seen["tool_input"]) == ("run_shell_command",
                                                       {"command": "ls", "timeout": 2000})
    assert seen["tool_response"] == {"llmContent": "a", "returnDisplay": "a"}
    assert seen["permission_mode"] == "yolo"


def test_qwens_stop_runs_the_after_assistant_hooks_on_its_final_message(project):
    settings = capture(project, "after_assistant")
    stop = {"session_id": "s", "transcript_path": None, "cwd": str(project), "hook_event_name": "Stop",
            "timestamp": "2026-12-03T15:15:10.929Z", "permission_mode": "yolo", "prompt_id": "p",
            "stop_hook_active": False, "last_assistant_message": "All done.", "background_tasks": [],
            "crons": [], "context_usage": 0.00005, "context_limit": 200000, "input_tokens": 10}
    result = adapt("qwen", project, stop, settings)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert captured(project)[0]["stdin"]["payload"]["data"]["request"]["text"] == "All done."


@pytest.mark.parametrize("settings_text", ['{"hooks": {"enabled": true, "timeout": 5}}', None])
def test_a_fail_at_stop_says_nothing_to_qwen_which_would_read_a_stop_as_go_on(project, settings_text):
    (project / "fail.sh").write_text("#!/bin/sh\ncat >/dev/null\nexit 1\n")
    (project / "fail.sh").chmod(0o755)
    settings = project / "s.json"
    settings.write_text(settings_text or json.dumps({"hooks": {"enabled": True, "after_assistant": [
        {"label": "strict", "command": "./fail.sh", "failure_policy": "fail"}]}}))
    stop = {"session_id": "s", "cwd": str(project), "hook_event_name": "Stop",
            "permission_mode": "yolo", "stop_hook_active": False, "last_assistant_message": "Done."}
    result = adapt("qwen", project, stop, str(settings))
    assert result.returncode == 0
    got = json.loads(result.stdout) if result.stdout else {}
    assert "continue" not in got and "decision" not in got
    assert set(got) <= {"systemMessage"}
