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


# --- import qwen: .qwen/settings.json, Claude Code's shape, Qwen's tools and timeouts ----------

QWEN_SETTINGS = {"hooks": {
    "PreToolUse": [
        {"matcher": "run_shell_command", "hooks": [
            {"type": "command", "command": '"$QWEN_PROJECT_DIR"/.qwen/hooks/guard.sh',
             "timeout": 30000}]},
        # Qwen tests a matcher anywhere in the tool id: `file` is read_file, write_file and
        # read_many_files (which magihook does not wrap).
        {"matcher": "file", "hooks": [{"type": "command", "command": "./files.sh",
                                       "timeout": 120000, "name": "files"}]},
        {"matcher": "shell", "hooks": [{"type": "command", "command": "./a.sh", "args": ["x"],
                                        "timeout": 5}]},
        {"matcher": "web_fetch", "hooks": [{"type": "command", "command": "./web.sh"}]},
        {"matcher": "^glob$", "hooks": [{"type": "command", "command": "./glob.sh"}]},
    ],
    "PostToolUse": [{"hooks": [{"type": "command", "command": "jq . >> ~/log.jsonl",
                                "timeout": 1500}]}],
    "PostToolUseFailure": [{"hooks": [{"type": "command", "command": "./failed.sh"}]}],
}}

QWEN_GUARD_REPORT = [
    "$.hooks.PreToolUse: each guard has failure_policy block: it blocks the call when it fails "
    "(not found, timeout, output cap, any exit status other than 0 and 2, and a call whose hook "
    "stdin would pass 1048576 bytes, which a dialect hook cannot be given); Qwen Code lets the "
    "call through on exit 1 and any other status but 0 and 2, and on stdout that is not JSON",
    "$.hooks.PreToolUse: a guard still lets a call through when: you change its failure_policy "
    "to warn or ignore; it exits 0 without a deny decision (its own logic); hooks.enabled is not "
    "true; these settings are not in force (put them in ~/.magi-code/settings.json, a trusted "
    "project file, or name them with --config); the call is to a tool magihook does not wrap",
]


def test_import_qwen_settings(project):
    (project / ".qwen").mkdir()
    source = project / ".qwen" / "settings.json"
    source.write_text(json.dumps(QWEN_SETTINGS))
    result = run_cli("import", "qwen", str(source), cwd=project)
    assert result.returncode == 0, result.stderr
    script = project / ".magi-code" / "imported-hooks" / "qwen-PostToolUse-0.0.sh"
    assert script.read_text() == (
        "#!/usr/bin/env bash\n# Generated by `magihook import qwen` from "
        "$.hooks.PostToolUse[0].hooks[0].command.\n# Qwen Code runs that command with "
        "/usr/bin/env bash -c; this script runs the same text.\njq . >> ~/log.jsonl\n")
    common = {"dialect": "qwen", "payload": "full", "failure_policy": "warn"}
    guard = dict(common, failure_policy="block", stdout_max_bytes=65536, stderr_max_bytes=65536)
    assert json.loads(result.stdout) == {"hooks": {
        "enabled": True,
        "before_tool": [
            dict(guard, label="qwen PreToolUse 0.0", timeout_seconds=30, include_tools=["bash"],
                 command='"$QWEN_PROJECT_DIR"/.qwen/hooks/guard.sh'),
            dict(guard, label="qwen PreToolUse 1.0", timeout_seconds=60, command="./files.sh",
                 include_tools=["read", "write"]),
            # Qwen runs `command` with bash -c and reads no `args`: neither does the import.
            dict(guard, label="qwen PreToolUse 2.0", timeout_seconds=5, command="./a.sh",
                 include_tools=["bash"]),
            dict(guard, label="qwen PreToolUse 4.0", timeout_seconds=60, command="./glob.sh",
                 include_tools=["ffgrep"]),
        ],
        "after_tool": [dict(common, label="qwen PostToolUse 0.0", timeout_seconds=2,
                            command=str(script), provider_context_injection=True)],
    }}
    assert result.stderr.splitlines() == ["magihook import: " + line for line in [
        "$.hooks.PreToolUse[1].matcher: also matches read_many_files, which magihook does not wrap",
        "$.hooks.PreToolUse[1].hooks[0].timeout: 120000 ms became 60 s (magihook allows 1 to 60); "
        "a guard stopped by it blocks the call",
        "$.hooks.PreToolUse[1].hooks[0].name: not carried over",
        "$.hooks.PreToolUse[2].hooks[0].args: not carried over; the agent runs the command "
        "without them",
        "$.hooks.PreToolUse[3].matcher: matches no tool magihook wraps; not carried over",
        "$.hooks.PreToolUse[4].hooks[0].timeout: none, so 60 s (Qwen Code waits 60 s); a guard "
        "stopped by it blocks the call",
        "$.hooks.PostToolUse[0].hooks[0].timeout: 1500 ms became 2 s (magihook allows 1 to 60)",
        "$.hooks.PostToolUse[0].hooks[0].command: preflight would reject it (command contains "
        "'~'), so it runs from the generated script %s" % script,
        "$.hooks.PostToolUseFailure: event 'PostToolUseFailure' has no magihook phase; not "
        "carried over",
    ]] + ["magihook import: " + line for line in QWEN_GUARD_REPORT]
    converted = project / "magihook.json"
    converted.write_text(result.stdout)
    checked = run_cli("validate", "--config", str(converted))
    assert (checked.returncode, checked.stderr) == (0, "")


def imported_qwen_guard(project, body, timeout=10000):
    """A Qwen project whose PreToolUse guard on run_shell_command is .qwen/hooks/guard.sh, imported."""
    (project / ".qwen" / "hooks").mkdir(parents=True)
    guard = project / ".qwen" / "hooks" / "guard.sh"
    guard.write_text("#!/bin/sh\ninput=$(cat)\n%s\n" % body)
    guard.chmod(0o755)
    source = project / ".qwen" / "settings.json"
    source.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "run_shell_command", "hooks": [
        {"type": "command", "command": '"$QWEN_PROJECT_DIR"/.qwen/hooks/guard.sh',
         "timeout": timeout}]}]}}))
    result = run_cli("import", "qwen", str(source), cwd=project)
    assert result.returncode == 0, result.stderr
    converted = project / "magihook.json"
    converted.write_text(result.stdout)
    return str(converted)


def test_an_imported_qwen_guard_blocks_a_shell_call_under_adapt(project):
    converted = imported_qwen_guard(
        project, 'case "$input" in *"rm -rf"*) echo "no rm" >&2; exit 2;; esac')
    denied = adapt("qwen", project, qwen_stdin(project, "run_shell_command",
                                               {"command": "rm -rf build"}), converted)
    assert answer(denied)["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": BLOCKED}
    assert "no rm" not in denied.stdout
    allowed = adapt("qwen", project, qwen_stdin(project, "run_shell_command", {"command": "ls"}),
                    converted)
    assert (allowed.returncode, allowed.stdout, allowed.stderr) == (0, "", "")
    # The guard is on run_shell_command only, as in Qwen.
    other = adapt("qwen", project, qwen_stdin(project, "read_file", {"file_path": "rm -rf"}),
                  converted)
    assert (other.returncode, other.stdout, other.stderr) == (0, "", "")


# Qwen lets the call through on these; the imported guard blocks it (and 1 is a timeout of 1 s).
@pytest.mark.parametrize("body,timeout", [("exit 1", 10000), ("exit 127", 10000), ("sleep 30", 1)],
                         ids=["exit-1", "not-found", "timeout"])
def test_an_imported_qwen_guard_that_fails_blocks(project, body, timeout):
    converted = imported_qwen_guard(project, body, timeout)
    result = adapt("qwen", project, qwen_stdin(project, "run_shell_command", {"command": "ls"}),
                   converted)
    assert answer(result)["hookSpecificOutput"]["permissionDecision"] == "deny"
