"""Interop: `magihook adapt` for Claude Code, Codex and Gemini CLI, dialect hooks, `import`.

The agent-side scripts in tests/interop_scripts/ are written to each agent's protocol; stdin
documents follow each agent's documented examples.  Every hook is a real process.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, WENT_ON, after_event, bash_event, fresh_python, run_cli, write_script, write_settings

import magihook

SCRIPTS = Path(__file__).resolve().parent / "interop_scripts"
MARKER = "reason-marker-7f3a"  # every deny reason in the scripts holds it; it must never leak
BLOCKED = "This tool call was blocked by local hook policy."
STOPPED = "This turn was stopped by local hook policy."
SETTINGS_BROKEN = "This tool call was blocked because the local hook settings could not be loaded."
LIFECYCLE_KEYS = magihook.LIFECYCLE_KEYS


# --- helpers ------------------------------------------------------------------------------------

def install(project, *names):
    """Copy agent scripts into the project, as a user would keep them under .hooks/."""
    folder = project / ".hooks"
    folder.mkdir(exist_ok=True)
    for name in names:
        shutil.copy2(SCRIPTS / name, folder / name)


def dialect_hook(agent, script, **fields):
    variable = {"claude-code": '"$CLAUDE_PROJECT_DIR"/', "gemini": "$GEMINI_PROJECT_DIR/",
                "codex": "./", "copilot": "./"}[agent]
    return dict({"label": "h", "command": variable + ".hooks/" + script, "dialect": agent,
                 "payload": "full"}, **fields)


def config(project, **hooks):
    return str(write_settings(project, dict({"enabled": True}, **hooks)))


def claude_stdin(project, tool, tool_input, event="PreToolUse", **extra):
    """The shape of the Claude Code hooks reference's PreToolUse/PostToolUse input example."""
    document = {"session_id": "abc123",
                "transcript_path": "/home/user/.claude/projects/p/abc123.jsonl",
                "cwd": str(project), "permission_mode": "default", "hook_event_name": event,
                "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_01ABC123"}
    document.update(extra)
    return document


def codex_stdin(project, tool, tool_input, event="PreToolUse", **extra):
    """Codex's pre-tool-use / post-tool-use command input schema."""
    document = {"session_id": "0199a213-81c0-7800-8aa1-bbab2a035a53",
                "transcript_path": None, "cwd": str(project), "hook_event_name": event,
                "model": "gpt-5-codex", "permission_mode": "default", "turn_id": "turn-7",
                "tool_name": tool, "tool_input": tool_input, "tool_use_id": "call_5hV"}
    document.update(extra)
    return document


def gemini_stdin(project, tool, tool_input, event="BeforeTool", **extra):
    """Gemini CLI's base input plus BeforeTool/AfterTool fields (no tool_use_id)."""
    document = {"session_id": "gem-1", "transcript_path": "/home/user/.gemini/tmp/chat.json",
                "cwd": str(project), "hook_event_name": event,
                "timestamp": "2026-01-28T10:30:00Z", "tool_name": tool, "tool_input": tool_input}
    document.update(extra)
    return document


def adapt(agent, project, document, settings=None, *extra):
    args = ["adapt", agent] + (["--config", settings] if settings else []) + list(extra)
    return run_cli(*args, event=document, cwd=project)


def answer(result):
    assert result.returncode == 0, result.stderr
    return result.json


def capture_settings(project, phase="before_tool"):
    """A magihook-dialect hook that records the full magihook envelope it gets."""
    install(project, "capture.py")
    return config(project, **{phase: [{"label": "cap", "command": "./.hooks/capture.py",
                                       "payload": "full"}]})


def captured(project):
    lines = (project / "captured.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def statuses(result):
    return [(e["type"], e["payload"].get("status")) for e in result.events()]


# --- adapt: answers -----------------------------------------------------------------------------

def spec_gate(project):
    """The spec's block-dangerous-bash gate (magihook's own dialect), as shipped in examples/."""
    shutil.copy2(EXAMPLES / "hooks" / "block-dangerous-bash.sh", project / "gate.sh")
    return config(project, before_tool=[{"label": "gate", "command": "./gate.sh",
                                         "payload": "full", "failure_policy": "block",
                                         "include_tools": ["bash"]}])


@pytest.mark.parametrize("agent,stdin,expected", [
    ("claude-code", claude_stdin, {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": BLOCKED}}),
    ("codex", codex_stdin, {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": BLOCKED}}),
    ("gemini", gemini_stdin, {"decision": "deny", "reason": BLOCKED}),
])
def test_adapt_block_is_the_agents_deny_with_the_sanitized_text(project, agent, stdin, expected):
    settings = spec_gate(project)
    tool = {"claude-code": "Bash", "codex": "Bash", "gemini": "run_shell_command"}[agent]
    session = project / "session.jsonl"
    result = adapt(agent, project, stdin(project, tool, {"command": "rm -rf build"}), settings,
                   "--session", str(session))
    assert (result.returncode, result.stderr) == (0, "")
    assert result.json == expected
    recorded = [json.loads(line) for line in session.read_text().splitlines()]
    assert [(e["type"], e["payload"]["status"], e["payload"]["policy"]) for e in recorded] == [
        ("hook_lifecycle", "started", "block"), ("hook_lifecycle", "failed", "block"),
        ("hook_diagnostic", "failed", "block")]
    assert recorded[1]["payload"]["tool_call_id"] == {
        "claude-code": "toolu_01ABC123", "codex": "call_5hV", "gemini": None}[agent]


@pytest.mark.parametrize("agent,stdin,tool", [
    ("claude-code", claude_stdin, "Bash"), ("codex", codex_stdin, "Bash"),
    ("gemini", gemini_stdin, "run_shell_command")])
def test_adapt_continue_prints_nothing_never_allow(project, agent, stdin, tool):
    result = adapt(agent, project, stdin(project, tool, {"command": "ls -la"}), spec_gate(project))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


@pytest.mark.parametrize("agent,document", [
    ("claude-code", lambda p: claude_stdin(p, "WebFetch", {"url": "https://example.com"})),
    ("claude-code", lambda p: claude_stdin(p, "mcp__github__create_issue", {"title": "x"})),
    ("claude-code", lambda p: {"session_id": "s", "cwd": str(p), "hook_event_name": "SessionStart",
                               "source": "startup"}),
    ("claude-code", lambda p: claude_stdin(p, "Bash", {"command": "ls"}, "PostToolUseFailure")),
    ("codex", lambda p: codex_stdin(p, "mcp__fs__read", {"path": "x"})),
    ("gemini", lambda p: gemini_stdin(p, "web_fetch", {"prompt": "x"})),
    ("gemini", lambda p: gemini_stdin(p, "run_shell_command", {"command": "ls"}, "BeforeModel")),
])
def test_adapt_does_not_wrap_other_tools_or_events(project, agent, document):
    settings = capture_settings(project)
    result = adapt(agent, project, document(project), settings)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert not (project / "captured.jsonl").exists()


FAILING = "#!/bin/sh\ncat >/dev/null\necho oops >&2\nexit 1\n"


@pytest.mark.parametrize("agent,stdin,tool,phase,event_name,expected", [
    # Before a tool, a fail is also the agent's deny: Claude Code runs the tool on
    # continue:false alone.
    ("claude-code", claude_stdin, "Bash", "before_tool", "PreToolUse", {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                               "permissionDecisionReason": BLOCKED},
        "continue": False, "stopReason": STOPPED}),
    ("claude-code", claude_stdin, "Bash", "after_tool", "PostToolUse",
     {"continue": False, "stopReason": STOPPED}),
    ("gemini", gemini_stdin, "run_shell_command", "before_tool", "BeforeTool",
     {"decision": "deny", "reason": BLOCKED, "continue": False, "stopReason": STOPPED}),
    ("gemini", gemini_stdin, "run_shell_command", "after_tool", "AfterTool",
     {"continue": False, "stopReason": STOPPED}),
    # Codex ignores continue:false in PreToolUse, so the call is denied instead.
    ("codex", codex_stdin, "Bash", "before_tool", "PreToolUse", {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": BLOCKED}}),
    ("codex", codex_stdin, "Bash", "after_tool", "PostToolUse",
     {"continue": False, "stopReason": STOPPED}),
])
def test_adapt_fail_stops_the_turn(project, agent, stdin, tool, phase, event_name, expected):
    write_script(project, "fail.sh", FAILING)
    settings = config(project, **{phase: [{"label": "f", "command": "./fail.sh",
                                           "failure_policy": "fail"}]})
    extra = {"tool_response": "done"} if phase == "after_tool" else {}
    result = adapt(agent, project, stdin(project, tool, {"command": "ls"}, event_name, **extra),
                   settings)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.json == expected


@pytest.mark.parametrize("agent,stdin,tool,event_name", [
    ("claude-code", claude_stdin, "Bash", "PreToolUse"),
    ("codex", codex_stdin, "Bash", "PreToolUse"),
    ("gemini", gemini_stdin, "run_shell_command", "BeforeTool"),
])
def test_adapt_warnings_reach_the_user_field_only(project, agent, stdin, tool, event_name):
    # Never stderr: Gemini parses stderr as the answer when stdout is empty, Claude Code hands
    # a hook's stderr to the model on some exits.
    write_script(project, "fail.sh", FAILING)
    settings = config(project, before_tool=[{"label": "flaky", "command": "./fail.sh"}])
    result = adapt(agent, project, stdin(project, tool, {"command": "ls"}, event_name), settings)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.json == {"systemMessage": (
        "magihook: hook flaky (before_tool #0, bash) failed: exit: hook exited with status 1"
        + WENT_ON)}


@pytest.mark.parametrize("agent,stdin,tool,event_name,response", [
    ("claude-code", claude_stdin, "Bash", "PostToolUse",
     {"stdout": "ok", "stderr": "", "interrupted": False, "isImage": False}),
    ("codex", codex_stdin, "Bash", "PostToolUse", "ok"),
    ("gemini", gemini_stdin, "run_shell_command", "AfterTool",
     {"llmContent": "ok", "returnDisplay": "ok", "error": None}),
])
def test_adapt_context_items_become_additional_context(project, agent, stdin, tool, event_name,
                                                      response):
    shutil.copy2(EXAMPLES / "hooks" / "memory-after.sh", project / "memory.sh")
    write_script(project, "more.sh", "#!/bin/sh\ncat >/dev/null\nprintf '%s' "
                 "'{\"context_items\": [{\"role\": \"user\", \"content\": \"second\"}]}'\n")
    settings = config(project, provider_context_injection=True, after_tool=[
        {"label": "m", "command": "./memory.sh"}, {"label": "n", "command": "./more.sh"}])
    result = adapt(agent, project, stdin(project, tool, {"command": "ls"}, event_name,
                                         tool_response=response), settings)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.json == {"hookSpecificOutput": {
        "hookEventName": event_name,
        "additionalContext": "Relevant bounded memory for next provider call (after bash).\n\nsecond"}}


@pytest.mark.parametrize("agent,stdin,tool,event_name,expected", [
    ("claude-code", claude_stdin, "Bash", "PreToolUse", {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                               "permissionDecisionReason": SETTINGS_BROKEN},
        "continue": False, "stopReason": STOPPED}),
    ("claude-code", claude_stdin, "Bash", "PostToolUse", {"continue": False, "stopReason": STOPPED}),
    ("claude-code", claude_stdin, "Bash", "PostToolUseFailure",
     {"continue": False, "stopReason": STOPPED}),
    ("codex", codex_stdin, "Bash", "PreToolUse", {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": SETTINGS_BROKEN}}),
    ("codex", codex_stdin, "Bash", "PostToolUse", {"continue": False, "stopReason": STOPPED}),
    ("gemini", gemini_stdin, "run_shell_command", "BeforeTool", {
        "decision": "deny", "reason": SETTINGS_BROKEN, "continue": False, "stopReason": STOPPED}),
    ("gemini", gemini_stdin, "run_shell_command", "AfterTool",
     {"continue": False, "stopReason": STOPPED}),
])
def test_adapt_broken_settings_fail_closed_and_name_no_path(project, agent, stdin, tool,
                                                            event_name, expected):
    # The model sees one fixed sentence; the file and the error are in the user's field only.
    settings = project / "broken.json"
    settings.write_text('{"hooks": {"enabled": true, "timeout": 5}}')
    result = adapt(agent, project, stdin(project, tool, {"command": "ls"}, event_name,
                                         tool_response="out", error="boom"), str(settings))
    assert (result.returncode, result.stderr) == (0, "")
    answer = result.json
    message = answer.pop("systemMessage")
    assert answer == expected
    assert message == ("magihook: %s: $.hooks.timeout: unknown key 'timeout' (did you mean "
                       "'timeout_seconds'?)" % settings)
    assert str(project) not in json.dumps(answer)


def test_adapt_missing_settings_file_fails_closed(project):
    result = adapt("claude-code", project, claude_stdin(project, "Bash", {"command": "ls"}),
                   str(project / "gone.json"))
    assert (result.returncode, result.stderr) == (0, "")
    assert result.json["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert result.json["systemMessage"] == "magihook: %s: settings file not found" % (
        project / "gone.json")


def test_post_tool_use_failure_runs_after_hooks_with_success_false(project):
    settings = capture_settings(project, "after_tool")
    write_script(project, "ctx.sh", "#!/bin/sh\ncat >/dev/null\nprintf '%s' "
                 "'{\"context_items\": [{\"role\": \"user\", \"content\": \"noted\"}]}'\n")
    document = json.loads(Path(settings).read_text())
    document["hooks"]["provider_context_injection"] = True
    document["hooks"]["after_tool"].append({"label": "ctx", "command": "./ctx.sh"})
    Path(settings).write_text(json.dumps(document))
    result = adapt("claude-code", project, claude_stdin(
        project, "Bash", {"command": "false"}, "PostToolUseFailure",
        error="Exit code 1\nboom", is_interrupt=False, duration_ms=12), settings)
    assert (result.returncode, result.stderr) == (0, "")
    (record,) = captured(project)
    assert record["stdin"]["result"] == {"tool_name": "bash", "success": False,
                                         "content": "Exit code 1\nboom", "metadata": {}}
    assert result.json == {"hookSpecificOutput": {"hookEventName": "PostToolUseFailure",
                                                  "additionalContext": "noted"}}


@pytest.mark.parametrize("agent,stdin,tool", [
    ("claude-code", claude_stdin, "Write"),
    ("gemini", gemini_stdin, "write_file"),
])
def test_dialect_hooks_get_the_agents_dot_dot_as_sent(project, agent, stdin, tool):
    # A path-traversal guard must see the `..` the agent sent; normalizing would also change
    # which file `link/../x` names.  `.` and doubled separators name the same file either way.
    install(project, "capture.py")
    settings = config(project, before_tool=[dialect_hook(agent, "capture.py")])
    for sent in ("%s/sub/../x.txt" % project, "%s/./a//b.txt" % project, "%s/in.txt" % project,
                 "/elsewhere/../etc/passwd"):
        result = adapt(agent, project, stdin(project, tool, {"file_path": sent, "content": "x"}),
                       settings)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert [record["stdin"]["tool_input"]["file_path"] for record in captured(project)] == [
        "%s/sub/../x.txt" % project, "%s/a/b.txt" % project, "%s/in.txt" % project,
        "/elsewhere/../etc/passwd"]


def test_adapt_paths_are_cwd_relative_only_without_dot_dot(project):
    settings = capture_settings(project)
    for sent in ("%s/in.txt" % project, "%s/sub/../x.txt" % project, str(project)):
        adapt("claude-code", project, claude_stdin(project, "Read", {"file_path": sent}), settings)
    assert [record["stdin"]["request"]["path"] for record in captured(project)] == [
        "in.txt", "%s/sub/../x.txt" % project, "."]


@pytest.mark.parametrize("agent,stdin,tool,sent,expected", [
    # `<cwd>//src/prod/db.yml` once reached hooks as `/src/prod/db.yml`, another file, with no
    # affected_paths: a write guard on src/prod/* let it through.
    ("claude-code", claude_stdin, "Write", "{cwd}//src/prod/db.yml", "src/prod/db.yml"),
    ("claude-code", claude_stdin, "Write", "{cwd}/./src/prod/db.yml", "src/prod/db.yml"),
    ("claude-code", claude_stdin, "Write", "{cwd}/src//prod/./db.yml", "src/prod/db.yml"),
    ("gemini", gemini_stdin, "write_file", "./src//prod/db.yml", "src/prod/db.yml"),
    ("gemini", gemini_stdin, "write_file", "{cwd}//src/prod/db.yml", "src/prod/db.yml"),
])
def test_adapt_paths_reach_hooks_as_the_file_they_name(project, agent, stdin, tool, sent,
                                                      expected):
    settings = capture_settings(project)
    path = sent.format(cwd=project)
    result = adapt(agent, project, stdin(project, tool, {"file_path": path, "content": "x"}),
                   settings)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    (record,) = captured(project)
    assert record["stdin"]["request"]["path"] == expected
    assert record["stdin"]["affected_paths"] == [
        {"path": expected, "kind": "write_target", "source": "request.path"}]


def test_adapt_patch_files_reach_affected_paths_as_the_files_they_name(project):
    settings = capture_settings(project)
    patch = ("*** Begin Patch\n*** Update File: %s//src/prod/a.yml\n@@\n-a\n+b\n"
             "*** Add File: ./src//prod/b.yml\n+c\n*** End Patch\n" % project)
    result = adapt("codex", project, codex_stdin(project, "apply_patch", {"command": patch}),
                   settings)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    (record,) = captured(project)
    assert record["stdin"]["affected_paths"] == [
        {"path": "src/prod/a.yml", "kind": "write_target", "source": "request.input"},
        {"path": "src/prod/b.yml", "kind": "write_target", "source": "request.input"}]


def test_adapt_paths_keep_dot_dot_unresolved_and_only_drop_dots(project):
    settings = capture_settings(project)
    for sent in ("%s//sub/../x.txt" % project, "/etc//./passwd", ".//"):
        adapt("claude-code", project, claude_stdin(project, "Read", {"file_path": sent}), settings)
    assert [record["stdin"]["request"]["path"] for record in captured(project)] == [
        "%s/sub/../x.txt" % project, "/etc/passwd", "."]


def test_print_settings_for_each_agent(tmp_path):
    # Absolute paths only: the agent's PATH may lack magihook's venv (exit 127 fails open in
    # Claude Code), and the agent runs hooks in folders of its own.
    folder = tmp_path / "my settings"
    folder.mkdir()
    (folder / "s.json").write_text('{"hooks": {"enabled": true}}')
    # Not the console script: this interpreter importing magihook.py from its folder (test_cli).
    start = "%s -I -c %s" % (shlex.quote(sys.executable), shlex.quote(
        "import sys; sys.path.insert(0, %s); from magihook import console_main; console_main()"
        % json.dumps(os.path.dirname(magihook.__file__))))
    config_arg = " --config '%s'" % (folder / "s.json")
    claude = run_cli("adapt", "claude-code", "--print-settings", "--config", "s.json", cwd=folder)
    handler = {"type": "command", "command": start + " adapt claude-code" + config_arg,
               "timeout": 600}
    group = {"matcher": "Bash|Read|Write|Edit|MultiEdit|Grep|Glob|WebSearch|Task|Agent",
             "hooks": [handler]}
    # Monitor only before the tool: its output streams past the event after it.
    before = dict(group, matcher=group["matcher"] + "|Monitor")
    assert (claude.returncode, claude.stderr) == (0, "")
    # The message events have no tool to match.
    assert json.loads(claude.stdout) == {"hooks": {
        "PreToolUse": [before], "PostToolUse": [group], "PostToolUseFailure": [group],
        "Stop": [{"hooks": [handler]}], "SubagentStop": [{"hooks": [handler]}]}}
    codex = json.loads(run_cli("adapt", "codex", "--print-settings", "--config",
                               str(folder / "s.json")).stdout)
    group = {"matcher": "Bash|shell|exec_command|local_shell|shell_command|apply_patch|spawn_agent",
             "hooks": [{"type": "command", "command": start + " adapt codex" + config_arg,
                        "timeout": 600}]}
    assert codex == {"hooks": {"PreToolUse": [group], "PostToolUse": [group],
                               "Stop": [{"hooks": group["hooks"]}]}}
    gemini = json.loads(run_cli("adapt", "gemini", "--print-settings", "--config",
                                str(folder / "s.json")).stdout)
    group = {"matcher": "run_shell_command|read_file|write_file|replace|grep_search|"
                        "search_file_content|glob|google_web_search",
             "hooks": [{"name": "magihook", "type": "command",
                        "command": start + " adapt gemini" + config_arg, "timeout": 600000}]}
    # After a tool, also the tool that reads a background command's output back (redact_tool_output).
    after = dict(group, matcher=group["matcher"] + "|read_background_output")
    assert gemini == {"hooks": {"BeforeTool": [group], "AfterTool": [after],
                                "AfterAgent": [{"hooks": group["hooks"]}]},
                      "hooksConfig": {"enabled": True}}


def test_print_settings_names_the_console_script_and_the_found_file(tmp_path):
    # Run as the installed console script, the snippet names that script; without --config it
    # pins no file, so each call layers the home file and the project file from the agent's cwd.
    script = Path(sys.executable).parent / "magihook"
    if not script.exists():
        pytest.skip("magihook console script not installed next to this python")
    (tmp_path / ".magi-code").mkdir()
    (tmp_path / ".magi-code" / "settings.json").write_text('{"hooks": {"enabled": true}}')
    env = dict(os.environ, HOME=str(tmp_path / "home"))
    env.pop("MAGIHOOK_CONFIG", None)
    # An untrusted project file is not pinned: the snippet's --config would skip the trust check.
    untrusted = subprocess.run([str(script), "adapt", "claude-code", "--print-settings"], cwd=tmp_path,
                               env=env, capture_output=True, text=True, timeout=60)
    assert (untrusted.returncode, untrusted.stdout) == (2, "")
    assert untrusted.stderr == (
        "magihook: ./.magi-code/settings.json is not trusted: review it and run `magihook trust`, "
        "or name it with --config (see magihook --help)\n")
    subprocess.run([str(script), "trust", ".magi-code/settings.json"], cwd=tmp_path, env=env,
                   capture_output=True, check=True, timeout=60)
    done = subprocess.run([str(script), "adapt", "claude-code", "--print-settings"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    command = json.loads(done.stdout)["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert command == "%s adapt claude-code" % script


def test_print_settings_needs_an_existing_settings_file(tmp_path):
    missing = run_cli("adapt", "codex", "--print-settings", "--config", "nope.json", cwd=tmp_path)
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr == ("magihook: nope.json: settings file not found (see magihook --help)\n")
    env = {"HOME": str(tmp_path / "home"), "MAGIHOOK_CONFIG": ""}
    none = run_cli("adapt", "gemini", "--print-settings", cwd=tmp_path, env=env)
    assert (none.returncode, none.stdout) == (2, "")
    assert none.stderr == ("magihook: no settings file found here; pass --config PATH (magihook "
                           "init makes one) (see magihook --help)\n")


def test_adapt_bad_input_and_usage_are_exit_2(project):
    bad = run_cli("adapt", "claude-code", stdin=b"{not json", cwd=project)
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr == (
        "magihook: input is not valid JSON: Expecting property name enclosed in double quotes "
        "at line 1, column 2\n")
    missing = adapt("claude-code", project, {"tool_name": "Bash"})
    assert missing.stderr == "magihook: $.hook_event_name: missing (expected a string)\n"
    agent = run_cli("adapt", "cursor", stdin=b"{}")
    assert (agent.returncode, agent.stderr) == (2, (
        "magihook: unknown agent 'cursor': expected one of claude-code, codex, gemini, copilot, qwen "
        "(see magihook --help)\n"))
    both = run_cli("adapt", "gemini", "--print-settings", "--session", "s.jsonl")
    assert both.stderr == "magihook: --print-settings takes no --session (see magihook --help)\n"


# --- adapt: the tool mapping --------------------------------------------------------------------

def P(project, *parts):
    return str(Path(project, *parts))


EDIT_PATCH = "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n-\n+x = 2\n+\n*** End Patch"
CODEX_PATCH = ("*** Begin Patch\n*** Update File: src/lib.rs\n@@ fn main\n ctx\n-old\n+new\n"
               "*** End Patch\n")

MAPPING = [
    ("claude-code", claude_stdin, "Bash",
     lambda p: {"command": "npm test", "description": "Run tests", "timeout": 120000,
                "run_in_background": False},
     "bash", {"command": "npm test", "timeout": 120, "run_in_background": False}),
    ("claude-code", claude_stdin, "Bash", lambda p: {"command": "make", "timeout": 1500},
     "bash", {"command": "make", "timeout": 1.5}),
    ("claude-code", claude_stdin, "Read",
     lambda p: {"file_path": P(p, "src", "app.py"), "offset": 10, "limit": 5},
     "read", {"path": "src/app.py", "offset": 10, "limit": 5}),
    ("claude-code", claude_stdin, "Read", lambda p: {"file_path": "/etc/hosts"},
     "read", {"path": "/etc/hosts"}),
    ("claude-code", claude_stdin, "Write",
     lambda p: {"file_path": P(p, "notes.txt"), "content": "hi"},
     "write", {"path": "notes.txt", "content": "hi"}),
    ("claude-code", claude_stdin, "Edit",
     lambda p: {"file_path": P(p, "a.py"), "old_string": "x = 1\n", "new_string": "x = 2\n",
                "replace_all": False},
     "hash_edit", {"path": "a.py", "replace_all": False, "input": EDIT_PATCH}),
    ("claude-code", claude_stdin, "MultiEdit",
     lambda p: {"file_path": P(p, "b.py"), "edits": [
         {"old_string": "a", "new_string": "b"}, {"old_string": "c\nd", "new_string": ""}]},
     "hash_edit", {"path": "b.py", "input": "*** Begin Patch\n*** Update File: b.py\n@@\n-a\n+b"
                   "\n@@\n-c\n-d\n+\n*** End Patch"}),
    ("claude-code", claude_stdin, "Grep",
     lambda p: {"pattern": "TODO", "path": P(p, "src"), "glob": "*.py", "output_mode": "content"},
     "ffgrep", {"pattern": "TODO", "path": "src", "glob": "*.py"}),
    ("claude-code", claude_stdin, "Glob", lambda p: {"pattern": "**/*.ts", "path": str(p)},
     "ffgrep", {"glob": "**/*.ts", "path": "."}),
    ("claude-code", claude_stdin, "WebSearch",
     lambda p: {"query": "python 3.13", "allowed_domains": ["python.org"]},
     "web_search", {"query": "python 3.13", "allowed_domains": ["python.org"]}),
    ("claude-code", claude_stdin, "Task",
     lambda p: {"description": "Find bugs", "prompt": "Look for bugs",
                "subagent_type": "general-purpose"},
     "parallel_subagents", {"tasks": [{"description": "Find bugs", "prompt": "Look for bugs",
                                       "agent": "general-purpose"}]}),
    ("codex", codex_stdin, "Bash", lambda p: {"command": "cargo test"},
     "bash", {"command": "cargo test"}),
    ("codex", codex_stdin, "apply_patch", lambda p: {"command": CODEX_PATCH},
     "hash_edit", {"input": CODEX_PATCH, "path": "src/lib.rs"}),
    ("gemini", gemini_stdin, "run_shell_command",
     lambda p: {"command": "ls", "description": "list", "dir_path": "src"},
     "bash", {"command": "ls"}),
    ("gemini", gemini_stdin, "read_file", lambda p: {"file_path": P(p, "README.md")},
     "read", {"path": "README.md"}),
    ("gemini", gemini_stdin, "write_file", lambda p: {"file_path": P(p, "x.txt"), "content": "c"},
     "write", {"path": "x.txt", "content": "c"}),
    ("gemini", gemini_stdin, "replace",
     lambda p: {"file_path": P(p, "a.py"), "old_string": "x = 1\n", "new_string": "x = 2\n",
                "expected_replacements": 2},
     "hash_edit", {"path": "a.py", "expected_replacements": 2, "input": EDIT_PATCH}),
    ("gemini", gemini_stdin, "grep_search",
     lambda p: {"pattern": "foo", "dir_path": P(p, "lib"), "include": "*.js"},
     "ffgrep", {"pattern": "foo", "path": "lib", "glob": "*.js"}),
    ("gemini", gemini_stdin, "glob", lambda p: {"pattern": "*.md"}, "ffgrep", {"glob": "*.md"}),
    ("gemini", gemini_stdin, "google_web_search", lambda p: {"query": "x"},
     "web_search", {"query": "x"}),
]


@pytest.mark.parametrize("agent,stdin,tool,tool_input,expected_tool,expected_request", MAPPING)
def test_adapt_maps_tool_calls(project, agent, stdin, tool, tool_input, expected_tool,
                               expected_request):
    settings = capture_settings(project)
    result = adapt(agent, project, stdin(project, tool, tool_input(project)), settings)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    (envelope,) = [record["stdin"] for record in captured(project)]
    assert envelope["tool"]["name"] == expected_tool
    assert envelope["request"] == expected_request


def test_adapt_fills_call_id_and_context(project):
    settings = capture_settings(project)
    adapt("claude-code", project, claude_stdin(project, "Bash", {"command": "ls"},
                                               agent_id="agent-9"), settings)
    adapt("codex", project, codex_stdin(project, "Bash", {"command": "ls"}), settings)
    adapt("gemini", project, gemini_stdin(project, "run_shell_command", {"command": "ls"}), settings)
    contexts = [(r["stdin"]["tool"]["call_id"], r["stdin"]["context"]) for r in captured(project)]
    for _, context in contexts:
        del context["timestamp"]
    base = dict.fromkeys(magihook.CONTEXT_KEYS, None)
    assert contexts == [
        ("toolu_01ABC123", dict(base, cwd=str(project), session_id="abc123", subagent=True,
                                session_path="/home/user/.claude/projects/p/abc123.jsonl",
                                agent_id="agent-9")),
        ("call_5hV", dict(base, cwd=str(project), session_id="0199a213-81c0-7800-8aa1-bbab2a035a53",
                          model_id="gpt-5-codex", turn_id="turn-7", subagent=False)),
        (None, dict(base, cwd=str(project), session_id="gem-1", subagent=False,
                    session_path="/home/user/.gemini/tmp/chat.json")),
    ]


@pytest.mark.parametrize("agent,stdin,tool,event_name,response,expected", [
    ("claude-code", claude_stdin, "Bash", "PostToolUse",
     {"stdout": "ok\n", "stderr": "warn", "interrupted": False, "isImage": False},
     {"tool_name": "bash", "success": True, "content": "ok\n\nwarn", "metadata": {}}),
    ("claude-code", claude_stdin, "Bash", "PostToolUse",
     {"stdout": "", "stderr": "", "interrupted": True, "isImage": False},
     {"tool_name": "bash", "success": False, "content": "", "metadata": {}}),
    ("codex", codex_stdin, "Bash", "PostToolUse", "total 0\n",  # no exit status: unknown
     {"tool_name": "bash", "success": None, "content": "total 0\n", "metadata": {}}),
    ("gemini", gemini_stdin, "run_shell_command", "AfterTool",
     {"llmContent": "file text", "returnDisplay": "shown", "error": None},
     {"tool_name": "bash", "success": True, "content": "file text", "metadata": {}}),
    ("gemini", gemini_stdin, "run_shell_command", "AfterTool",
     {"llmContent": "boom", "returnDisplay": "boom", "error": {"message": "boom"}},
     {"tool_name": "bash", "success": False, "content": "boom", "metadata": {}}),
])
def test_adapt_maps_tool_responses(project, agent, stdin, tool, event_name, response, expected):
    settings = capture_settings(project, "after_tool")
    result = adapt(agent, project, stdin(project, tool, {"command": "ls"}, event_name,
                                         tool_response=response), settings)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert captured(project)[0]["stdin"]["result"] == expected


def test_adapt_runs_redacted_magihook_hooks_redacted(project):
    install(project, "capture.py")
    settings = config(project, before_tool=[{"label": "cap", "command": "./.hooks/capture.py"}])
    adapt("claude-code", project, claude_stdin(project, "Write", {
        "file_path": P(project, "n.txt"), "content": "secret body"}), settings)
    envelope = captured(project)[0]["stdin"]
    assert envelope["request"] == {"path": "n.txt", "content": {
        "redacted": True, "kind": "content", "bytes": 11}}
    assert envelope["affected_paths"] == [
        {"path": "n.txt", "kind": "write_target", "source": "request.path"}]


# --- dialect hooks: the stdin each agent's script gets ------------------------------------------

def run_phase_cli(project, phase, settings, event):
    return run_cli("run", "--phase", phase, "--config", settings, event=event, cwd=project)


CONTEXT = {"session_id": "sess-1", "session_path": "/s/sess-1.jsonl", "model_id": "gpt-5",
           "turn_id": "turn-3"}


@pytest.mark.parametrize("agent,expected_stdin,expected_env", [
    ("claude-code",
     lambda p: {"session_id": "sess-1", "transcript_path": "/s/sess-1.jsonl", "cwd": str(p),
                "hook_event_name": "PreToolUse", "permission_mode": "default",
                "tool_name": "Bash", "tool_input": {"command": "ls -la", "timeout": 30000},
                "tool_use_id": "call_1"},
     lambda p: {"CLAUDE_PROJECT_DIR": str(p), "GEMINI_PROJECT_DIR": None,
                "GEMINI_SESSION_ID": None}),
    ("codex",
     lambda p: {"session_id": "sess-1", "transcript_path": "/s/sess-1.jsonl", "cwd": str(p),
                "hook_event_name": "PreToolUse", "permission_mode": "default", "model": "gpt-5",
                "turn_id": "turn-3", "tool_name": "Bash", "tool_input": {"command": "ls -la"},
                "tool_use_id": "call_1"},
     lambda p: {"CLAUDE_PROJECT_DIR": None, "GEMINI_PROJECT_DIR": None,
                "GEMINI_SESSION_ID": None}),
    ("gemini",
     lambda p: {"session_id": "sess-1", "transcript_path": "/s/sess-1.jsonl", "cwd": str(p),
                "hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
                "tool_input": {"command": "ls -la"}, "tool_use_id": "call_1"},
     lambda p: {"CLAUDE_PROJECT_DIR": str(p), "GEMINI_PROJECT_DIR": str(p),
                "GEMINI_SESSION_ID": "sess-1"}),
])
def test_dialect_hook_gets_the_agents_stdin_and_variables(project, agent, expected_stdin,
                                                          expected_env, monkeypatch):
    for name in ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "GEMINI_SESSION_ID"):
        monkeypatch.delenv(name, raising=False)
    install(project, "capture.py")
    settings = config(project, before_tool=[dialect_hook(agent, "capture.py")])
    result = run_phase_cli(project, "before_tool", settings, bash_event(context=CONTEXT))
    assert statuses(result) == [("hook_lifecycle", "started"), ("hook_lifecycle", "success")]
    (record,) = captured(project)
    if agent == "gemini":
        assert record["stdin"].pop("timestamp").endswith("Z")
    assert record["stdin"] == expected_stdin(project)
    assert record["env"] == expected_env(project)


def test_dialect_stdin_round_trips_through_adapt(project):
    """An agent's call, through adapt, reaches a hook of the same dialect as that agent sent it."""
    install(project, "capture.py")
    calls = [
        ("claude-code", claude_stdin, "Edit", {"file_path": P(project, "a.py"),
                                               "old_string": "x = 1\n", "new_string": "x = 2\n",
                                               "replace_all": True}),
        ("claude-code", claude_stdin, "MultiEdit", {"file_path": P(project, "b.py"), "edits": [
            {"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]}),
        ("claude-code", claude_stdin, "Read", {"file_path": P(project, "r.txt"), "offset": 2}),
        ("claude-code", claude_stdin, "Glob", {"pattern": "*.md", "path": P(project, "docs")}),
        ("claude-code", claude_stdin, "Task", {"description": "d", "prompt": "p",
                                               "subagent_type": "t"}),
        ("codex", codex_stdin, "apply_patch", {"command": CODEX_PATCH}),
        ("gemini", gemini_stdin, "replace", {"file_path": P(project, "a.py"), "old_string": "o",
                                             "new_string": "n", "expected_replacements": 1}),
        ("gemini", gemini_stdin, "grep_search", {"pattern": "p", "dir_path": P(project, "src"),
                                                 "include_pattern": "*.c"}),
        ("gemini", gemini_stdin, "read_file", {"file_path": P(project, "README.md")}),
    ]
    for agent, stdin, tool, tool_input in calls:
        settings = config(project, before_tool=[dialect_hook(agent, "capture.py")])
        result = adapt(agent, project, stdin(project, tool, tool_input), settings)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    got = [(r["stdin"]["tool_name"], r["stdin"]["tool_input"]) for r in captured(project)]
    assert got == [(tool, tool_input) for _, _, tool, tool_input in calls]


def test_dialect_after_and_message_stdin(project):
    install(project, "capture.py")
    settings = config(project, after_tool=[dialect_hook(agent, "capture.py")
                                           for agent in ("claude-code", "codex", "gemini")],
                      after_assistant=[dialect_hook("claude-code", "capture.py"),
                                       dialect_hook("gemini", "capture.py")])
    write = after_event("write", {"path": "n.txt", "content": "c"}, content="wrote n.txt")
    run_phase_cli(project, "after_tool", settings, write)
    run_phase_cli(project, "after_assistant", settings, {"text": "All done."})
    records = [r["stdin"] for r in captured(project)]
    for record in records:
        record.pop("timestamp", None)
    assert [r["tool_response"] for r in records[:3]] == [
        {"success": True, "content": "wrote n.txt", "filePath": P(project, "n.txt")},
        "wrote n.txt",
        {"llmContent": "wrote n.txt", "returnDisplay": "wrote n.txt", "error": None}]
    assert [r["tool_name"] for r in records[:3]] == ["Write", "write", "write_file"]
    assert records[3] == {"session_id": "", "transcript_path": None, "cwd": str(project),
                          "hook_event_name": "Stop", "permission_mode": "default",
                          "last_assistant_message": "All done.", "stop_hook_active": False}
    assert records[4] == {"session_id": "", "transcript_path": None, "cwd": str(project),
                          "hook_event_name": "AfterAgent", "prompt": "",
                          "prompt_response": "All done.", "stop_hook_active": False}


# --- dialect hooks: reading their answers -------------------------------------------------------

def lifecycle_tail(result):
    """The terminal lifecycle payload and any hook_diagnostic payloads."""
    events = result.events()
    terminal = [e["payload"] for e in events if e["type"] == "hook_lifecycle"][-1]
    return terminal, [e["payload"] for e in events if e["type"] == "hook_diagnostic"]


@pytest.mark.parametrize("policy", ["ignore", "warn", "fail"])
def test_claude_exit_2_denies_whatever_the_policy(project, policy):
    install(project, "claude_bash_guard.sh")
    settings = config(project, before_tool=[dialect_hook("claude-code", "claude_bash_guard.sh",
                                                         failure_policy=policy)])
    result = run_phase_cli(project, "before_tool", settings, bash_event("rm -rf build"))
    assert result.returncode == 3
    assert result.json["verdict"] == "block"
    assert result.json["tool_result"]["content"] == BLOCKED
    assert result.json["warnings"] == []
    terminal, diagnostics = lifecycle_tail(result)
    assert (terminal["status"], terminal["policy"], terminal["category"], terminal["message"]) == (
        "failed", "block", "exit", "hook denied the call (exit status 2)")
    assert diagnostics == [terminal]
    assert MARKER not in result.stdout + result.stderr
    assert run_phase_cli(project, "before_tool", settings, bash_event("ls")).returncode == 0


def test_deny_reason_never_reaches_records_answers_or_sessions(project):
    install(project, "claude_bash_guard.sh")
    settings = config(project, before_tool=[dialect_hook("claude-code", "claude_bash_guard.sh")])
    session = project / "s.jsonl"
    result = adapt("claude-code", project, claude_stdin(project, "Bash", {"command": "rm -rf /"}),
                   settings, "--session", str(session))
    assert answer(result) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": BLOCKED}}
    assert MARKER not in result.stdout + result.stderr + session.read_text()


@pytest.mark.parametrize("path,message", [
    ("conf/.env", "hook denied the call (permissionDecision deny)"),
    ("app/deploy/prod.yaml", "hook denied the call (permissionDecision ask, counted as deny)"),
    ("keys/server.pem", "hook denied the call (decision block)"),
])
def test_claude_json_denies(project, path, message):
    install(project, "claude_protect_files.py")
    settings = config(project, before_tool=[dialect_hook("claude-code", "claude_protect_files.py")])
    event = {"tool": {"name": "write", "call_id": "c"}, "request": {"path": path, "content": "x"}}
    result = run_phase_cli(project, "before_tool", settings, event)
    assert (result.returncode, result.json["verdict"]) == (3, "block")
    terminal, _ = lifecycle_tail(result)
    assert (terminal["policy"], terminal["message"]) == ("block", message)
    assert MARKER not in result.stdout


def test_claude_allow_with_updated_input_is_ignored_with_a_diagnostic(project):
    install(project, "claude_protect_files.py")
    settings = config(project, before_tool=[dialect_hook("claude-code", "claude_protect_files.py")])
    event = {"tool": {"name": "write", "call_id": "c"}, "request": {"path": "README.md",
                                                                     "content": "x"}}
    result = run_phase_cli(project, "before_tool", settings, event)
    assert (result.returncode, result.json["verdict"], result.json["tool_result"]) == (
        0, "continue", None)
    note = "ignored updatedInput: hooks cannot rewrite tool arguments"
    assert result.json["warnings"] == ["hook h (before_tool #0, write): " + note]
    terminal, diagnostics = lifecycle_tail(result)
    assert terminal["status"] == "success"
    assert diagnostics == [dict(terminal, message=note)]
    assert list(diagnostics[0]) == list(LIFECYCLE_KEYS)
    other = dict(event, request={"path": "src/main.py", "content": "x"})
    assert run_phase_cli(project, "before_tool", settings, other).json["warnings"] == []


ALLOW_ALL = ("#!/bin/sh\ncat >/dev/null\nprintf '%s' '{\"hookSpecificOutput\": {\"hookEventName\":"
             " \"PreToolUse\", \"permissionDecision\": \"allow\"}}'\n")


def test_allow_never_overrides_another_hooks_deny(project):
    install(project, "claude_bash_guard.sh")
    write_script(project / ".hooks", "allow.sh", ALLOW_ALL)
    guard = dialect_hook("claude-code", "claude_bash_guard.sh")
    allow = dialect_hook("claude-code", "allow.sh")
    for hooks in ([allow, guard], [guard, allow]):
        settings = config(project, before_tool=hooks)
        result = run_phase_cli(project, "before_tool", settings, bash_event("rm -rf x"))
        assert (result.returncode, result.json["verdict"]) == (3, "block")


@pytest.mark.parametrize("policy,code,verdict,warnings", [
    ("warn", 0, "continue", ["hook h (before_tool #0, bash) failed: exit: hook exited with "
                             "status 2 without a reason on stderr" + WENT_ON]),
    ("block", 3, "block", []),
])
def test_codex_exit_2_needs_a_reason(project, policy, code, verdict, warnings):
    install(project, "claude_bash_guard.sh")
    settings = config(project, before_tool=[dialect_hook("codex", "claude_bash_guard.sh",
                                                         failure_policy=policy)])
    result = run_phase_cli(project, "before_tool", settings, bash_event("sudo ls"))
    assert (result.returncode, result.json["verdict"], result.json["warnings"]) == (
        code, verdict, warnings)
    terminal, _ = lifecycle_tail(result)
    assert (terminal["policy"], terminal["category"]) == (policy, "exit")
    # The same silent exit 2 is a deny for Claude Code.
    claude = config(project, before_tool=[dialect_hook("claude-code", "claude_bash_guard.sh",
                                                       failure_policy="warn")])
    assert run_phase_cli(project, "before_tool", claude, bash_event("sudo ls")).returncode == 3
    # And with a reason, Codex denies too.
    assert run_phase_cli(project, "before_tool", settings,
                         bash_event("git push --force")).returncode == 3


def test_codex_patch_guard_through_adapt(project):
    install(project, "codex_patch_guard.py")
    settings = config(project, before_tool=[dialect_hook("codex", "codex_patch_guard.py")])
    patch = "*** Begin Patch\n*** Add File: config/.env\n+KEY=1\n*** End Patch\n"
    result = adapt("codex", project, codex_stdin(project, "apply_patch", {"command": patch}),
                   settings)
    assert answer(result) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": BLOCKED}}
    assert MARKER not in result.stdout + result.stderr
    # A Codex deny without a reason is an invalid answer: a hook failure (policy warn).
    vendor = "*** Begin Patch\n*** Update File: vendor/x.c\n@@\n-a\n+b\n*** End Patch\n"
    result = adapt("codex", project, codex_stdin(project, "apply_patch", {"command": vendor}),
                   settings)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.json == {"systemMessage": "magihook: hook h (before_tool #0, hash_edit) failed: "
                                            "exit: hook returned permissionDecision deny without a "
                                            "reason" + WENT_ON}


def test_gemini_guard_through_adapt(project):
    install(project, "gemini_shell_guard.sh")
    settings = config(project, before_tool=[dialect_hook("gemini", "gemini_shell_guard.sh")])
    deny = adapt("gemini", project, gemini_stdin(project, "run_shell_command",
                                                  {"command": "rm -rf /tmp/x"}), settings)
    assert answer(deny) == {"decision": "deny", "reason": BLOCKED}
    assert (deny.stderr, MARKER in deny.stdout) == ("", False)
    allowed = adapt("gemini", project, gemini_stdin(project, "run_shell_command",
                                                     {"command": "ls"}), settings)
    assert (allowed.returncode, allowed.stdout, allowed.stderr) == (0, "", "")


def injection_events(result):
    return [(e["type"], {k: e["payload"][k] for k in ("status", "item_count", "byte_count")}
             if e["type"] == "hook_context_injection" else e["payload"]["content"])
            for e in result.events() if e["type"] in ("hook_context_injection",
                                                      "provider_context_item")]


def test_claude_post_tool_feedback_and_context_become_items(project):
    install(project, "claude_post_context.py")
    hook = dialect_hook("claude-code", "claude_post_context.py", provider_context_injection=True)
    settings = config(project, after_tool=[hook])
    write = after_event("write", {"path": "src/x.py", "content": "x"})
    result = run_phase_cli(project, "after_tool", settings, write)
    feedback = "The formatter rewrote this file; read it again before editing."
    style = "Project style: 4-space indents."
    assert (result.returncode, result.json["verdict"]) == (0, "continue")
    assert result.json["context_items"] == [{"role": "user", "content": feedback},
                                            {"role": "user", "content": style}]
    assert injection_events(result) == [
        ("hook_context_injection", {"status": "success", "item_count": 2,
                                    "byte_count": len(feedback) + len(style)}),
        ("provider_context_item", feedback), ("provider_context_item", style)]
    terminal, _ = lifecycle_tail(result)
    assert terminal["status"] == "success"
    # Bash: additionalContext, and an ignored result rewrite.
    result = run_phase_cli(project, "after_tool", settings, after_event())
    assert result.json["context_items"] == [
        {"role": "user", "content": "Tests live in tests/; run them with pytest -q."}]
    assert result.json["warnings"] == [
        "hook h (after_tool #0, bash): ignored updatedMCPToolOutput: hooks cannot rewrite tool "
        "results"]


def test_dialect_context_follows_the_injection_rules(project):
    install(project, "claude_post_context.py")
    write = after_event("write", {"path": "src/x.py", "content": "x"})
    off = config(project, after_tool=[dialect_hook("claude-code", "claude_post_context.py")])
    result = run_phase_cli(project, "after_tool", off, write)
    assert (result.json["context_items"], injection_events(result)) == ([], [])
    small = config(project, after_tool=[dialect_hook(
        "claude-code", "claude_post_context.py", provider_context_injection=True,
        provider_context_max_bytes=20)])
    result = run_phase_cli(project, "after_tool", small, write)
    assert result.json["context_items"] == []
    assert injection_events(result) == [
        ("hook_context_injection", {"status": "over_limit", "item_count": 0, "byte_count": 93})]


def test_after_phase_exit_2_is_feedback_not_a_failure(project):
    install(project, "claude_bash_guard.sh")
    settings = config(project, after_tool=[dialect_hook(
        "claude-code", "claude_bash_guard.sh", provider_context_injection=True)])
    result = run_phase_cli(project, "after_tool", settings,
                           after_event(request={"command": "rm -rf build"}))
    assert (result.returncode, result.json["verdict"]) == (0, "continue")
    assert result.json["context_items"] == [
        {"role": "user", "content": "Blocked by guard: destructive command (" + MARKER + ")"}]
    terminal, diagnostics = lifecycle_tail(result)
    assert (terminal["status"], diagnostics) == ("success", [])


def test_gemini_after_deny_adds_its_reason_as_context(project):
    install(project, "gemini_after_context.sh")
    settings = config(project, after_tool=[dialect_hook(
        "gemini", "gemini_after_context.sh", provider_context_injection=True)])
    read = after_event("read", {"path": "config/secrets.txt"}, content="k=v")
    result = run_phase_cli(project, "after_tool", settings, read)
    assert result.json["tool_result"]["content"] == "k=v"  # never hidden or replaced
    assert result.json["context_items"] == [
        {"role": "user", "content": "That file holds secrets; do not repeat its content."}]
    assert result.json["warnings"] == [
        "hook h (after_tool #0, read): decision deny cannot hide the tool result; its reason "
        "was added as context"]
    plain = run_phase_cli(project, "after_tool", settings,
                          after_event("read", {"path": "README.md"}))
    assert plain.json["context_items"] == [{"role": "user", "content": "Read files are UTF-8."}]
    assert plain.json["warnings"] == []


def test_claude_stop_hook_block_reason_is_message_phase_feedback(project):
    (project / ".hooks").mkdir()
    write_script(project / ".hooks", "stop.sh", "#!/bin/sh\ncat >/dev/null\nprintf '%s' "
                 "'{\"decision\": \"block\", \"reason\": \"Run the tests before finishing.\"}'\n")
    settings = config(project, after_assistant=[dialect_hook(
        "claude-code", "stop.sh", provider_context_injection=True)])
    result = run_phase_cli(project, "after_assistant", settings, {"text": "Done."})
    assert result.json["context_items"] == [
        {"role": "user", "content": "Run the tests before finishing."}]


@pytest.mark.parametrize("policy,code,verdict", [("warn", 0, "continue"), ("block", 3, "block")])
def test_other_exit_codes_are_failures_under_the_policy(project, policy, code, verdict):
    (project / ".hooks").mkdir()
    write_script(project / ".hooks", "one.sh", FAILING)
    settings = config(project, before_tool=[dialect_hook("gemini", "one.sh",
                                                         failure_policy=policy)])
    result = run_phase_cli(project, "before_tool", settings, bash_event())
    assert (result.returncode, result.json["verdict"]) == (code, verdict)
    terminal, _ = lifecycle_tail(result)
    assert (terminal["category"], terminal["message"]) == ("exit", "hook exited with status 1")


def test_continue_false_stops_the_turn(project):
    (project / ".hooks").mkdir()
    write_script(project / ".hooks", "stop.sh", "#!/bin/sh\ncat >/dev/null\nprintf '%s' "
                 "'{\"continue\": false, \"stopReason\": \"Build is broken\"}'\n")
    settings = config(project, before_tool=[dialect_hook("claude-code", "stop.sh",
                                                         failure_policy="ignore")])
    result = run_phase_cli(project, "before_tool", settings, bash_event())
    assert (result.returncode, result.json["verdict"]) == (4, "fail")
    terminal, diagnostics = lifecycle_tail(result)
    assert (terminal["policy"], terminal["message"]) == (
        "fail", "hook stopped the turn (continue: false)")
    assert "Build is broken" not in result.stdout


def test_dialect_stdin_over_1_mib_is_a_stdin_failure(project):
    install(project, "capture.py")
    settings = config(project, before_tool=[dialect_hook("claude-code", "capture.py")])
    event = {"tool": {"name": "write", "call_id": "c"},
             "request": {"path": "big.txt", "content": "x" * (1024 * 1024)}}
    result = run_phase_cli(project, "before_tool", settings, event)
    assert result.json["warnings"] == [
        "hook h (before_tool #0, write) failed: stdin: claude-code hook stdin would be larger "
        "than 1048576 bytes and a dialect hook cannot take a payload_ref" + WENT_ON]
    assert not (project / "captured.jsonl").exists()


@pytest.mark.parametrize("command", [
    '"$CLAUDE_PROJECT_DIR"/.hooks/capture.py',
    "$CLAUDE_PROJECT_DIR/.hooks/capture.py",
    '"${CLAUDE_PROJECT_DIR}/.hooks/capture.py"',
    "python3 ${CLAUDE_PROJECT_DIR}/.hooks/capture.py",
])
def test_project_dir_is_expanded_before_preflight(tmp_path, command):
    project = tmp_path / "my project"
    project.mkdir()
    install(project, "capture.py")
    settings = config(project, before_tool=[dict(dialect_hook("claude-code", "capture.py"),
                                                 command=command)])
    result = run_phase_cli(project, "before_tool", settings, bash_event())
    assert statuses(result) == [("hook_lifecycle", "started"), ("hook_lifecycle", "success")]
    assert len(captured(project)) == 1


def test_expansion_follows_bash_quoting():
    expand = magihook.expand_variables
    names = ("CLAUDE_PROJECT_DIR",)
    assert expand('"$CLAUDE_PROJECT_DIR"/x', names, '/a b/"c"') == '"/a b/\\"c\\""/x'
    assert expand("$CLAUDE_PROJECT_DIR/x", names, "/a b") == "'/a b'/x"
    assert expand("'$CLAUDE_PROJECT_DIR'/x", names, "/p") == "'$CLAUDE_PROJECT_DIR'/x"
    assert expand("\\$CLAUDE_PROJECT_DIR $CLAUDE_PROJECT_DIRS", names, "/p") == (
        "\\$CLAUDE_PROJECT_DIR $CLAUDE_PROJECT_DIRS")
    assert magihook.preflight_rejection(expand("'$CLAUDE_PROJECT_DIR'/x", names, "/p"), True) == (
        "command contains '$'")


def test_codex_and_magihook_dialects_expand_nothing(project):
    install(project, "capture.py")
    for dialect in ("codex", "magihook"):
        settings = config(project, before_tool=[dict(dialect_hook("codex", "capture.py"),
                                                     dialect=dialect,
                                                     command="$CLAUDE_PROJECT_DIR/.hooks/c.py")])
        terminal, _ = lifecycle_tail(run_phase_cli(project, "before_tool", settings, bash_event()))
        assert (terminal["category"], terminal["message"]) == (
            "runner", "command rejected by preflight: command contains '$'")


# --- import claude-code -------------------------------------------------------------------------

CLAUDE_SETTINGS = {
    "model": "opus",
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [
                {"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.hooks/claude_bash_guard.sh',
                 "timeout": 30}]},
            {"matcher": "Edit|MultiEdit|Write", "hooks": [
                {"type": "command", "command": "python3 .hooks/protect.py", "timeout": 120,
                 "if": "Edit(*.env)"},
                {"type": "http", "url": "http://localhost:8080/hook"}]},
            {"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "./mcp.sh"}]},
            {"matcher": "Web.*", "hooks": [{"type": "command", "command": "./web.sh",
                                            "async": True}]},
        ],
        "PostToolUse": [
            {"hooks": [{"type": "command", "command": "jq . >> ~/.claude/log.jsonl",
                        "timeout": 0.5}]},
        ],
        "UserPromptSubmit": [{"hooks": [{"type": "prompt", "prompt": "Is this safe?"}]}],
    },
}


def test_import_claude_code_settings(project):
    source = project / "claude.json"
    source.write_text(json.dumps(CLAUDE_SETTINGS))
    result = run_cli("import", "claude-code", str(source), cwd=project)
    assert result.returncode == 0
    script = project / ".magi-code" / "imported-hooks" / "claude-code-PostToolUse-0.0.sh"
    assert script.read_text() == (
        "#!/bin/sh\n# Generated by `magihook import claude-code` from "
        "$.hooks.PostToolUse[0].hooks[0].command.\n# Claude Code runs that command with /bin/sh -c; "
        "this script runs the same text.\njq . >> ~/.claude/log.jsonl\n")
    assert script.stat().st_mode & 0o777 == 0o700
    common = {"dialect": "claude-code", "payload": "full", "failure_policy": "warn"}
    # A PreToolUse guard fails closed (issue 26): block, and the widest output caps.
    guard = dict(common, failure_policy="block", stdout_max_bytes=65536, stderr_max_bytes=65536)
    assert json.loads(result.stdout) == {"hooks": {
        "enabled": True,
        "before_tool": [
            dict(guard, label="claude-code PreToolUse 0.0", timeout_seconds=30,
                 command='"$CLAUDE_PROJECT_DIR"/.hooks/claude_bash_guard.sh',
                 include_tools=["bash"]),
            dict(guard, label="claude-code PreToolUse 1.0", timeout_seconds=60,
                 command="python3 .hooks/protect.py", include_tools=["write", "hash_edit"]),
            dict(guard, label="claude-code PreToolUse 3.0", timeout_seconds=60,
                 command="./web.sh", include_tools=["web_search"]),
        ],
        "after_tool": [
            dict(common, label="claude-code PostToolUse 0.0", timeout_seconds=1,
                 command=str(script), provider_context_injection=True),
        ],
    }}
    assert result.stderr.splitlines() == [
        "magihook import: $.hooks.PreToolUse[1].hooks[0].timeout: 120 s became 60 s "
        "(magihook allows 1 to 60); a guard stopped by it blocks the call",
        "magihook import: $.hooks.PreToolUse[1].hooks[0].if: not carried over; the hook runs for "
        "every call of its tools",
        "magihook import: $.hooks.PreToolUse[1].hooks[1]: handler type 'http' is not carried over "
        "(only command handlers are)",
        "magihook import: $.hooks.PreToolUse[2].matcher: matches no tool magihook wraps; not "
        "carried over",
        "magihook import: $.hooks.PreToolUse[3].matcher: also matches WebFetch, which magihook "
        "does not wrap",
        "magihook import: $.hooks.PreToolUse[3].hooks[0].timeout: none, so 60 s (Claude Code "
        "waits 600 s); a guard stopped by it blocks the call",
        "magihook import: $.hooks.PreToolUse[3].hooks[0].async: not carried over; magihook runs "
        "hooks synchronously",
        "magihook import: $.hooks.PostToolUse[0].hooks[0].timeout: 0.5 s became 1 s (magihook "
        "allows 1 to 60)",
        "magihook import: $.hooks.PostToolUse[0].hooks[0].command: preflight would reject it "
        "(command contains '~'), so it runs from the generated script %s" % script,
        "magihook import: $.hooks.UserPromptSubmit: event 'UserPromptSubmit' has no magihook "
        "phase; not carried over",
    ] + ["magihook import: $.hooks.PreToolUse: " + line for line in (
        "each guard has failure_policy block: it blocks the call when it fails (not found, "
        "timeout, output cap, any exit status other than 0 and 2, and a call whose hook stdin "
        "would pass 1048576 bytes, which a dialect hook cannot be given); Claude Code lets the "
        "call through on exit statuses other than 2",
        "a guard still lets a call through when: you change its failure_policy to warn or "
        "ignore; it exits 0 without a deny decision (its own logic); hooks.enabled is not true; "
        "these settings are not in force (put them in ~/.magi-code/settings.json, a trusted "
        "project file, or name them with --config); the call is to a tool magihook does not "
        "wrap")]
    out = project / "magihook.json"
    out.write_text(result.stdout)
    # A command preflight would reject became a generated script (reported above): what import
    # prints passes validate, which rejects such commands (issue 16).
    checked = run_cli("validate", "--config", str(out))
    assert (checked.returncode, checked.stderr) == (0, "")


def test_imported_guard_runs_under_adapt(project):
    install(project, "claude_bash_guard.sh")
    source = project / "claude.json"
    source.write_text(json.dumps({"hooks": {"PreToolUse": CLAUDE_SETTINGS["hooks"]["PreToolUse"][:1]}}))
    converted = project / "magihook.json"
    converted.write_text(run_cli("import", "claude-code", str(source)).stdout)
    result = adapt("claude-code", project, claude_stdin(project, "Bash", {"command": "rm -rf /"}),
                   str(converted))
    assert answer(result)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_import_errors(project):
    missing = run_cli("import", "claude-code", "nope.json", cwd=project)
    assert (missing.returncode, missing.stderr) == (
        2, "magihook: nope.json: settings file not found\n")
    other = run_cli("import", "gemini", "x.json")
    assert other.stderr == (
        "magihook: import reads claude-code or qwen settings only, not 'gemini' (see magihook --help)\n")
    empty = project / "empty.json"
    empty.write_text("{}")
    result = run_cli("import", "claude-code", str(empty))
    assert json.loads(result.stdout) == {"hooks": {"enabled": True, "before_tool": [],
                                                   "after_tool": []}}
    assert result.stderr == (
        "magihook import: $.hooks: no Claude Code hooks section; nothing to import\n")


def test_import_reads_a_timeout_no_float_holds(project):
    # A 400-digit timeout once made import fail with an internal error (OverflowError).
    source = project / "claude.json"
    source.write_text('{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", '
                      '"command": "./g.sh", "timeout": %s}]}]}}' % HUGE)
    result = run_cli("import", "claude-code", str(source), cwd=project)
    assert result.returncode == 0
    assert json.loads(result.stdout)["hooks"]["before_tool"][0]["timeout_seconds"] == 60
    assert result.stderr.splitlines()[0] == (
        "magihook import: $.hooks.PreToolUse[0].hooks[0].timeout: %s s became 60 s (magihook "
        "allows 1 to 60); a guard stopped by it blocks the call" % HUGE)


def test_python_api_round_trip(project):
    """adapt_event + run_phase + agent_answer is what the CLI does, callable in-process."""
    settings = magihook.settings_from_document({"hooks": {"enabled": True, "before_tool": [
        {"command": "./gate.sh", "payload": "full", "failure_policy": "block"}]}})
    shutil.copy2(EXAMPLES / "hooks" / "block-dangerous-bash.sh", project / "gate.sh")
    phase, event = magihook.adapt_event(
        "gemini", gemini_stdin(project, "run_shell_command", {"command": "rm -rf x"}))
    result = magihook.run_phase(settings, phase, event)
    assert magihook.agent_answer("gemini", result) == {"decision": "deny", "reason": BLOCKED}


def test_import_reports_malformed_sections(project):
    source = project / "claude.json"
    source.write_text(json.dumps({"hooks": {
        "PreToolUse": {"matcher": "Bash"},
        "PostToolUse": [
            "x", {"matcher": "Bash"}, {"matcher": 5, "hooks": []}, {"matcher": "(", "hooks": []},
            {"matcher": "Bash", "description": "d", "hooks": [
                "x", {"type": "command"}, {"command": "./ok.sh", "once": True}]},
        ]}}))
    result = run_cli("import", "claude-code", str(source))
    assert result.returncode == 0
    assert json.loads(result.stdout)["hooks"]["after_tool"] == [
        {"label": "claude-code PostToolUse 4.2", "command": "./ok.sh", "dialect": "claude-code",
         "payload": "full", "failure_policy": "warn", "timeout_seconds": 60,
         "provider_context_injection": True, "include_tools": ["bash"]}]
    assert result.stderr.splitlines() == ["magihook import: " + line for line in (
        "$.hooks.PreToolUse: expected an array; not carried over",
        "$.hooks.PostToolUse[0]: expected an object with a hooks array; not carried over",
        "$.hooks.PostToolUse[1]: expected an object with a hooks array; not carried over",
        "$.hooks.PostToolUse[2].matcher: expected a string; not carried over",
        "$.hooks.PostToolUse[3].matcher: not a valid regular expression; not carried over",
        "$.hooks.PostToolUse[4].description: not carried over",
        "$.hooks.PostToolUse[4].hooks[0]: expected an object; not carried over",
        "$.hooks.PostToolUse[4].hooks[1].command: missing command; not carried over",
        "$.hooks.PostToolUse[4].hooks[2].once: not carried over",
    )]


@pytest.mark.parametrize("agent", ["claude-code", "qwen"])
def test_import_reports_a_matcher_re_rejects_with_other_errors_than_re_error(project, agent):
    # A repeat count past re's limit raises OverflowError and 1000 nested groups RecursionError,
    # not re.error: each once ended import with an internal error (exit 1).
    source = project / "settings.json"
    source.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": matcher, "hooks": [{"type": "command", "command": "./g.sh"}]}
        for matcher in ("Bash{99999999999}", "(" * 1000 + "Bash" + ")" * 1000)]}}))
    result = run_cli("import", agent, str(source), cwd=project)
    assert (result.returncode, json.loads(result.stdout)) == (0, {"hooks": {
        "enabled": True, "before_tool": [], "after_tool": []}})
    assert result.stderr.splitlines() == [
        "magihook import: $.hooks.PreToolUse[%d].matcher: not a valid regular expression; not "
        "carried over" % index for index in (0, 1)]


def test_import_carries_a_monitor_guard_over_as_a_bash_guard(project):
    # Claude Code's Monitor runs a command: a guard written for it guards magihook's bash (and
    # so Bash calls too), where it was once dropped as matching no wrapped tool.
    source = project / "settings.json"
    source.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Monitor", "hooks": [{"type": "command", "command": "/bin/true", "timeout": 5}]}]}}))
    result = run_cli("import", "claude-code", str(source), cwd=project)
    assert result.returncode == 0, result.stderr
    assert [hook["include_tools"] for hook in json.loads(result.stdout)["hooks"]["before_tool"]] == [["bash"]]


@pytest.mark.parametrize("body,status", [
    ("printf 'done'", "invalid_json"),
    ("printf '[1]'", "invalid_shape"),
    ("printf '%s' '{\"hookSpecificOutput\": {\"additionalContext\": 5}}'", "empty_content"),
    ("printf '%s' '{\"hookSpecificOutput\": {\"additionalContext\": \"  \"}}'", "success"),
    ("exit 3", "hook_failed"),
    # A number no JSON output carries (1e400 reads as inf) once raised ValueError.
    ("printf '%s' '{\"hookSpecificOutput\": {\"additionalContext\": 1e400}}'", "empty_content"),
])
def test_dialect_injection_statuses(project, body, status):
    (project / ".hooks").mkdir()
    write_script(project / ".hooks", "ctx.sh", "#!/bin/sh\ncat >/dev/null\n%s\n" % body)
    settings = config(project, after_tool=[dialect_hook(
        "claude-code", "ctx.sh", provider_context_injection=True, failure_policy="ignore")])
    result = run_phase_cli(project, "after_tool", settings, after_event())
    assert (result.returncode, result.json["context_items"]) == (0, [])
    assert injection_events(result) == [
        ("hook_context_injection", {"status": status, "item_count": 0, "byte_count": 0})]


@pytest.mark.parametrize("agent, expected", [
    ("claude-code", '{"hookSpecificOutput": {"additionalContext": "..."}}'),
    ("copilot", '{"additionalContext": "..."}'),
])
def test_a_dialect_hook_s_injection_warning_names_its_own_answer(project, agent, expected):
    # It quoted magihook's {"context_items": ...}, which a dialect hook never answers with.
    (project / ".hooks").mkdir()
    write_script(project / ".hooks", "ctx.sh", "#!/bin/sh\ncat >/dev/null\nprintf '[1]'\n")
    settings = config(project, after_tool=[dialect_hook(
        agent, "ctx.sh", provider_context_injection=True)])
    result = run_phase_cli(project, "after_tool", settings, after_event())
    assert result.json["warnings"] == [
        "hook h (after_tool #0, bash): its stdout was not injected: invalid_shape (expected %s "
        "within 4096 bytes)" % expected]


def test_gemini_after_exit_2_adds_stderr_as_context(project):
    (project / ".hooks").mkdir()
    write_script(project / ".hooks", "hide.sh",
                 "#!/bin/sh\ncat >/dev/null\necho 'Output withheld: use the summary.' >&2\nexit 2\n")
    settings = config(project, after_tool=[dialect_hook("gemini", "hide.sh",
                                                         provider_context_injection=True)])
    result = run_phase_cli(project, "after_tool", settings, after_event(content="raw"))
    assert (result.returncode, result.json["tool_result"]["content"]) == (0, "raw")
    assert result.json["context_items"] == [
        {"role": "user", "content": "Output withheld: use the summary."}]
    assert result.json["warnings"] == [
        "hook h (after_tool #0, bash): exit status 2 cannot hide the tool result; stderr was "
        "added as context"]


# The shape of the .env protection one-liner of Claude Code's hooks guide: `$`, braces, a pipe.
ENV_ONE_LINER = ("jq -r '.tool_input.file_path // empty' | { read -r f; case \"$f\" in *.env) "
                 "echo \"Blocked: $f\" >&2; exit 2;; esac; }")


def test_import_turns_a_rejected_one_liner_into_a_script_that_still_blocks(project):
    source = project / "claude.json"
    source.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [
        {"type": "command", "command": ENV_ONE_LINER, "timeout": 10}]}]}}))
    result = run_cli("import", "claude-code", str(source), "--scripts", "gen", cwd=project)
    assert result.returncode == 0, result.stderr
    script = project / "gen" / "claude-code-PreToolUse-0.0.sh"
    assert result.stderr.splitlines()[0] == (
        "magihook import: $.hooks.PreToolUse[0].hooks[0].command: preflight would reject it "
        "(command contains '$'), so it runs from the generated script %s" % script)
    (hook,) = json.loads(result.stdout)["hooks"]["before_tool"]
    # An imported guard fails closed (issue 26).
    assert (hook["command"], hook["failure_policy"]) == (str(script), "block")
    converted = project / "magihook.json"
    converted.write_text(result.stdout)
    deny = adapt("claude-code", project, claude_stdin(
        project, "Write", {"file_path": str(project / "config" / ".env"), "content": "K=1"}),
        str(converted))
    assert answer(deny)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "Blocked" not in deny.stdout
    allowed = adapt("claude-code", project, claude_stdin(
        project, "Write", {"file_path": str(project / "notes.txt"), "content": "x"}), str(converted))
    assert (allowed.returncode, allowed.stdout, allowed.stderr) == (0, "", "")


def test_import_expands_the_plugin_root(project, tmp_path):
    plugin = tmp_path / "my-plugin"
    (plugin / "scripts").mkdir(parents=True)
    (plugin / "blocked.txt").write_text("rm -rf\n")
    # The plugin's script reads its own folder from the environment, as under Claude Code.
    write_script(plugin / "scripts", "guard.sh", "#!/bin/sh\ncommand=$(jq -r .tool_input.command)\n"
                 "pattern=$(cat \"$CLAUDE_PLUGIN_ROOT/blocked.txt\")\n"
                 "case \"$command\" in *\"$pattern\"*) echo no >&2; exit 2;; esac\n")
    hooks_json = plugin / "hooks.json"
    hooks_json.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/guard.sh", "timeout": 5}]}]}}))
    without = run_cli("import", "claude-code", str(hooks_json), cwd=project)
    assert json.loads(without.stdout)["hooks"]["before_tool"] == []
    assert without.stderr == ("magihook import: $.hooks.PreToolUse[0].hooks[0].command: uses "
                              "${CLAUDE_PLUGIN_ROOT}; not carried over (pass --plugin-root DIR, the "
                              "plugin's folder)\n")
    result = run_cli("import", "claude-code", str(hooks_json), "--plugin-root", str(plugin),
                     cwd=project)
    assert result.returncode == 0, result.stderr
    script = project / ".magi-code" / "imported-hooks" / "claude-code-PreToolUse-0.0.sh"
    assert "CLAUDE_PLUGIN_ROOT=%s\nexport CLAUDE_PLUGIN_ROOT\n" % plugin in script.read_text()
    converted = project / "magihook.json"
    converted.write_text(result.stdout)
    deny = adapt("claude-code", project, claude_stdin(project, "Bash", {"command": "rm -rf x"}),
                 str(converted))
    assert answer(deny)["hookSpecificOutput"]["permissionDecision"] == "deny"
    allowed = adapt("claude-code", project, claude_stdin(project, "Bash", {"command": "ls"}),
                    str(converted))
    assert (allowed.returncode, allowed.stdout, allowed.stderr) == (0, "", "")
    missing = run_cli("import", "claude-code", str(hooks_json), "--plugin-root", "nope", cwd=project)
    assert (missing.returncode, missing.stderr) == (
        2, "magihook: --plugin-root nope: not a folder (see magihook --help)\n")


def test_import_refuses_a_scripts_folder_preflight_would_reject(project):
    source = project / "claude.json"
    source.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo $X", "timeout": 5}]}]}}))
    result = run_cli("import", "claude-code", str(source), "--scripts", "a$b", cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("magihook: the scripts folder %s cannot be a hook command (command "
                             "contains '$'); choose another with --scripts DIR (see magihook --help)\n"
                             % (project / "a$b"))
    assert not (project / "a$b").exists()
    blocked = project / "ro"
    blocked.write_text("a file, not a folder")
    result = run_cli("import", "claude-code", str(source), "--scripts", "ro", cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    # The folder is opened with O_DIRECTORY (no link followed): a file there is ENOTDIR.
    assert result.stderr == ("magihook: %s: cannot write the generated script (ENOTDIR)\n"
                             % (blocked / "claude-code-PreToolUse-0.0.sh"))
    # A link planted where the script goes is not followed (its target would be overwritten).
    (project / "gen").mkdir()
    target = project / "precious.txt"
    target.write_text("keep")
    (project / "gen" / "claude-code-PreToolUse-0.0.sh").symlink_to(target)
    result = run_cli("import", "claude-code", str(source), "--scripts", "gen", cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("magihook: %s: cannot write the generated script (ELOOP)\n"
                             % (project / "gen" / "claude-code-PreToolUse-0.0.sh"))
    assert target.read_text() == "keep"


def test_import_refuses_a_script_text_no_file_can_hold(project, tmp_path):
    # A lone surrogate (valid JSON) in a command preflight rejects, and a --plugin-root whose
    # path is not UTF-8, have no UTF-8 bytes: each once ended import with an internal error
    # (UnicodeEncodeError) and left an empty generated script behind.
    source = project / "claude.json"
    source.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo $HOME \ud800", "timeout": 5}]}]}}))
    result = run_cli("import", "claude-code", str(source), cwd=project)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", "magihook: $.hooks.PreToolUse[0].hooks[0].command: holds a character no file can "
        "be written with (a lone surrogate); no script was generated\n")
    assert not (project / ".magi-code").exists()
    plugin = tmp_path / os.fsdecode(b"plug\xff")
    plugin.mkdir()
    source.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/x.sh", "timeout": 5}]}]}}))
    result = run_cli("import", "claude-code", str(source), "--plugin-root", str(plugin),
                     cwd=project)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", "magihook: --plugin-root: the folder's path is not UTF-8, which the generated "
        "script is written in; no script was generated (see magihook --help)\n")
    assert not (project / ".magi-code").exists()


# A guard written once against magihook's tools: a secret-like path, or a credential in what a
# write or an edit would put in a file (write's content, hash_edit's patch).
WRITE_GUARD = (Path(__file__).resolve().parent / "interop_scripts" / "write_guard.sh").read_text()


@pytest.mark.parametrize("tool,tool_input", [
    ("Write", lambda p: {"file_path": P(p, "server.key"), "content": "k"}),
    ("Write", lambda p: {"file_path": P(p, "a.txt"), "content": "sk-" + "A" * 20}),
    ("Edit", lambda p: {"file_path": P(p, "config/.env"), "old_string": "a", "new_string": "b"}),
    ("Edit", lambda p: {"file_path": P(p, "a.py"), "old_string": "a", "new_string": "sk-" + "B" * 20}),
    ("MultiEdit", lambda p: {"file_path": P(p, "a.py"), "edits": [
        {"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "sk-" + "C" * 20}]}),
    ("MultiEdit", lambda p: {"file_path": P(p, "x/y.pem"), "edits": [
        {"old_string": "a", "new_string": "b"}]}),
])
def test_a_write_guard_catches_claude_file_tools(project, tool, tool_input):
    write_script(project, "guard.sh", WRITE_GUARD)
    settings = config(project, before_tool=[{"label": "w", "command": "./guard.sh", "payload": "full",
                                             "failure_policy": "block",
                                             "include_tools": ["write", "hash_edit"]}])
    result = adapt("claude-code", project, claude_stdin(project, tool, tool_input(project)), settings)
    assert answer(result)["hookSpecificOutput"]["permissionDecision"] == "deny"
    harmless = adapt("claude-code", project, claude_stdin(project, "Edit", {
        "file_path": P(project, "a.py"), "old_string": "a", "new_string": "b"}), settings)
    assert (harmless.returncode, harmless.stdout, harmless.stderr) == (0, "", "")


def test_a_dialect_guard_cannot_see_a_call_past_the_stdin_cap(project):
    # As import reports: the call goes through, with a warning, and the guard never runs.
    write_script(project, "deny.sh", "#!/bin/sh\ncat >/dev/null\necho ran > ran.txt\nexit 2\n")
    settings = config(project, before_tool=[{"label": "g", "command": "./deny.sh",
                                             "dialect": "claude-code", "payload": "full"}])
    result = adapt("claude-code", project, claude_stdin(project, "Write", {
        "file_path": P(project, ".env"), "content": "x" * (1024 * 1024)}), settings)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.json == {"systemMessage": (
        "magihook: hook g (before_tool #0, write) failed: stdin: claude-code hook stdin would be "
        "larger than 1048576 bytes and a dialect hook cannot take a payload_ref" + WENT_ON)}
    assert not (project / "ran.txt").exists()


INTERNAL_ERROR = "This tool call was blocked because the local hook layer failed unexpectedly."


@pytest.mark.parametrize("agent,stdin,tool,event_name,expected", [
    ("claude-code", claude_stdin, "Bash", "PreToolUse", {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                               "permissionDecisionReason": INTERNAL_ERROR},
        "continue": False, "stopReason": STOPPED}),
    ("codex", codex_stdin, "Bash", "PreToolUse", {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": INTERNAL_ERROR}}),
    ("gemini", gemini_stdin, "run_shell_command", "AfterTool",
     {"continue": False, "stopReason": STOPPED}),
])
def test_adapt_internal_error_fails_closed(project, agent, stdin, tool, event_name, expected):
    # A bug inside the pipeline (injected here into a real magihook process) is exit 1 in `run`;
    # Claude Code treats exit 1 as a non-blocking error and runs the tool, so adapt denies.
    settings = capture_settings(project, "before_tool")
    program = ("import sys, magihook\n"
               "def broken(*args, **kwargs):\n    raise ZeroDivisionError('a bug')\n"
               "magihook._run_phase = broken\n"
               "sys.exit(magihook.main(['adapt', %r, '--config', %r]))\n" % (agent, settings))
    event = stdin(project, tool, {"command": "ls"}, event_name, tool_response="out")
    done = subprocess.run([sys.executable, "-c", program], input=json.dumps(event).encode(),
                          cwd=project, capture_output=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(EXAMPLES.parent)))
    assert (done.returncode, done.stderr) == (0, b"")
    answer = json.loads(done.stdout)
    message = answer.pop("systemMessage")
    assert answer == expected
    assert message == ("magihook: internal error (ZeroDivisionError); please report it "
                       "(MAGIHOOK_DEBUG=1 shows the traceback)")


# -- The agent registry: one object per agent -----------------------------------------------------

AGENT_PROBE = """
import json, magihook as m
from types import MappingProxyType

class Tables:
    tool_events = MappingProxyType({"PreToolUse": "before_tool", "PostToolUse": "after_tool"})
    message_events = MappingProxyType({"Stop": "after_assistant"})
    failed_tool_events = frozenset()
    tools = (("Execute", "bash", {"command": "command"}),)
    streamed_output_tools = ()
    millisecond_fields = frozenset()
    context_fields = MappingProxyType({})
    project_dir_variables = ()
    settings_places = ()
    home_folder = ("", "")

class Bare(m.Agent):
    name, title = "bare", "Bare"
for key, value in vars(Tables).items():
    if not key.startswith("__"):
        setattr(Bare, key, value)
try:
    m.register_agent(Bare)
except TypeError as exc:
    print(exc)

class Droid(m.ClaudeCode):
    name, title, aliases = "droid", "Factory Droid", ("factory-droid",)
for key, value in vars(Tables).items():
    if not key.startswith("__"):
        setattr(Droid, key, value)
m.register_agent(Droid)
print(list(m.AGENTS))
schema = m.settings_schema(m.INHERITED_SETTINGS)["$defs"]
print(schema["hook"]["properties"]["dialect"]["enum"], schema["foreign_dialect_payload"]["if"])
print(m.command_helps()["adapt"].summary, "/", m.command_helps()["adapt"].usages[0])
print(json.dumps(m.agent_settings_snippet("factory-droid", None, "mh")))
print(json.dumps(m.adapt_event("droid", {"hook_event_name": "PreToolUse", "tool_name": "Execute",
                                         "tool_input": {"command": "ls"}, "cwd": "/p"})))
"""


def test_a_new_agent_is_one_registered_class_and_everything_derives_from_it():
    lines = fresh_python(AGENT_PROBE)
    assert lines[0] == (
        "agent class Bare must state session_id_variable, message_field, user_message_field, "
        "permission_decision, deny_needs_reason, after_tool_deny_hides_result, fail_replaces_output, "
        "imports_settings, typed_sessions_unseen, deny_answer, stop_answer, fail_answer, context_answer, "
        "allow_answer, settings_snippet, result, edit_request, edit_call, tool_response, dialect_fields, "
        "redacted_output_answer")
    agents = "'claude-code', 'codex', 'gemini', 'copilot', 'qwen', 'droid'"
    assert lines[1] == "[%s]" % agents
    assert lines[2] == ("['magihook', %s] {'properties': {'dialect': {'enum': [%s]}}, "
                        "'required': ['dialect']}" % (agents, agents))
    assert lines[3] == ("be the hook command of Claude Code, Codex, Gemini CLI, GitHub Copilot CLI, "
                        "Qwen Code or Factory Droid / adapt claude-code|codex|gemini|copilot|qwen|droid "
                        "[--config PATH] [--session PATH]")
    group = [{"matcher": "Execute", "hooks": [
        {"type": "command", "command": "mh adapt droid", "timeout": 600}]}]
    assert json.loads(lines[4]) == {"hooks": {"PreToolUse": group, "PostToolUse": group,
                                              "Stop": [{"hooks": group[0]["hooks"]}]}}
    assert json.loads(lines[5]) == ["before_tool", {
        "tool": {"name": "bash", "call_id": None}, "request": {"command": "ls"},
        "context": {"cwd": "/p", "session_id": None, "session_path": None}}]


def test_an_agent_that_imports_settings_must_state_what_import_reads_of_it():
    lines = fresh_python(
        "import magihook as m\n"
        "class Half(m.Agent):\n"
        "    imports_settings = True\n"
        "for key in m.AGENT_OWN_TABLES + m.AGENT_BEHAVIOURS:\n"
        "    if key != 'imports_settings':\n"
        "        setattr(Half, key, getattr(m.Codex, key))\n"
        "Half.name = 'half'\n"
        "try:\n"
        "    m.register_agent(Half)\n"
        "except TypeError as exc:\n"
        "    print(exc)\n")
    assert lines[0] == (
        "agent class Half must state unwrapped_tools, matcher_searches, hook_timeout_ms_from, "
        "default_hook_timeout_seconds, hook_args, hook_shell, guard_fails_open")


def test_an_agent_class_that_leaves_its_tables_to_its_parent_is_refused():
    lines = fresh_python(
        "import magihook as m\n"
        "class Copy(m.ClaudeCode):\n"
        "    name, title = 'copy', 'Copy'\n"
        "try:\n"
        "    m.register_agent(Copy)\n"
        "except TypeError as exc:\n"
        "    print(exc)\n"
        "class Twin(m.Codex):\n"
        "    pass\n"
        "for key in m.AGENT_OWN_TABLES:\n"
        "    setattr(Twin, key, getattr(m.Codex, key))\n"
        "try:\n"
        "    m.register_agent(Twin)\n"
        "except TypeError as exc:\n"
        "    print(exc)\n")
    assert lines[:2] == [
        "agent class Copy must state tool_events, message_events, failed_tool_events, tools, "
        "streamed_output_tools, millisecond_fields, context_fields, project_dir_variables, settings_places, "
        "home_folder",
        "agent class Twin: its name or an alias is taken"]


# -- adapt never exits 1: crafted events -----------------------------------------------------------

UNREADABLE = "This tool call was blocked because the local hook layer could not read the agent's event."
HUGE = "1" + "0" * 400


def crafted(agent, event, tool_input):
    """A crafted agent event as raw stdin: JSON text with the tool input spliced in as is."""
    name = {"claude-code": "Bash", "codex": "shell", "gemini": "run_shell_command"}[agent]
    return ('{"hook_event_name": "%s", "tool_name": "%s", "session_id": "s", "tool_input": %s}'
            % (event, name, tool_input)).encode("utf-8", "surrogateescape")


CLAUDE_DENIED = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                        "permissionDecisionReason": UNREADABLE},
                 "continue": False, "stopReason": STOPPED}
CODEX_DENIED = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": UNREADABLE}}
GEMINI_DENIED = {"decision": "deny", "reason": UNREADABLE, "continue": False,
                 "stopReason": STOPPED}


@pytest.mark.parametrize("agent,stdin,expected,message", [
    ("claude-code", crafted("claude-code", "PreToolUse", '{"command": "rm -rf \udcff"}'),
     CLAUDE_DENIED, "input is not valid UTF-8 (byte 108)"),
    # A cwd that names no path (a lone surrogate) once failed as an internal error.
    ("claude-code", b'{"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": "/tmp/\\ud800",'
                    b' "tool_input": {"command": "ls"}}',
     CLAUDE_DENIED, "$.cwd: holds a character no path can be written with"),
    ("claude-code", b'{"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": "/tmp/\\u0000",'
                    b' "tool_input": {"command": "ls"}}',
     CLAUDE_DENIED, "$.cwd: contains a NUL byte"),
    ("claude-code", crafted("claude-code", "PreToolUse", '{"command": "ls", "timeout": NaN}'),
     CLAUDE_DENIED, "input is not valid JSON: NaN is not valid JSON"),
    ("codex", crafted("codex", "PreToolUse", '["rm", "-rf", "x"]'),
     CODEX_DENIED, "$.tool_input: expected an object, got an array"),
    ("codex", crafted("codex", "PreToolUse", '{"command": %s}' % ("[" * 300 + "]" * 300)),
     CODEX_DENIED, "input is nested deeper than 256 levels"),
    ("codex", crafted("codex", "PostToolUse", '{"command": "ls", "x": Infinity}'),
     {"continue": False, "stopReason": STOPPED},
     "input is not valid JSON: Infinity is not valid JSON"),
    ("claude-code", b'{"hook_event_name": "Stop", "last_assistant_message": ["x"]}',
     {"continue": False, "stopReason": STOPPED},
     "$.last_assistant_message: expected a string, got an array"),
    ("gemini", b'{"hook_event_name": "BeforeTool", "tool_name": 7, "tool_input": {}}',
     GEMINI_DENIED, "$.tool_name: expected a string, got an integer"),
    ("gemini", crafted("gemini", "BeforeTool", '{"command": "ls", "is_background": -Infinity}'),
     GEMINI_DENIED, "input is not valid JSON: -Infinity is not valid JSON"),
    ("gemini", crafted("gemini", "AfterTool", '{"command": "\udcc3"}'),
     {"continue": False, "stopReason": STOPPED}, "input is not valid UTF-8 (byte 113)"),
])
def test_adapt_crafted_events_get_the_fail_closed_answer(project, agent, stdin, expected, message):
    # Never exit 1 (Claude Code and Qwen Code run the tool on it): the agent's deny before a
    # tool, its stop after one, and what failed in the user's field only.
    settings = capture_settings(project)
    result = run_cli("adapt", agent, "--config", settings, stdin=stdin, cwd=project)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.json == dict(expected, systemMessage="magihook: " + message)
    assert not (project / "captured.jsonl").exists()


def test_a_timeout_no_float_holds_is_carried_in_whole_seconds_both_ways(project):
    # A Bash timeout of 400 digits (ms) once made adapt exit 1 (Claude Code ran the tool), then
    # fail closed as an internal error; a model can write any number there.  Back in an
    # agent's words, a seconds timeout whose milliseconds are past float range could not be
    # sent to a dialect hook at all.
    settings = capture_settings(project)
    stdin = crafted("claude-code", "PreToolUse", '{"command": "ls", "timeout": %s1}' % HUGE)
    result = run_cli("adapt", "claude-code", "--config", settings, stdin=stdin, cwd=project)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert captured(project)[0]["stdin"]["request"]["timeout"] == 10 ** 398
    (project / "captured.jsonl").unlink()
    settings = config(project, before_tool=[dialect_hook("claude-code", "capture.py")])
    event = bash_event()
    event["request"]["timeout"] = 1e306
    result = run_phase_cli(project, "before_tool", settings, event)
    assert statuses(result) == [("hook_lifecycle", "started"), ("hook_lifecycle", "success")]
    assert captured(project)[0]["stdin"]["tool_input"]["timeout"] == int(1e306) * 1000


@pytest.mark.parametrize("agent, event, expected", [
    ("claude-code", "PostToolUse", {"continue": False, "stopReason": STOPPED}),
    ("claude-code", "PreToolUse", CLAUDE_DENIED),
    ("gemini", "AfterTool", {"continue": False, "stopReason": STOPPED}),
])
def test_adapt_an_event_past_the_size_cap_gets_the_fail_closed_answer(project, agent, event, expected):
    # Cut at the cap, the JSON does not parse, but it names its event: exit 2 (what it once
    # was) is no answer after a tool, where Claude Code sends the output on to the model as it is
    # (redact_tool_output's redaction and every after_tool guard skipped).
    settings = capture_settings(project)
    stdin = crafted(agent, event, '{"command": "%s"}' % ("x" * magihook.EVENT_MAX_BYTES))
    result = run_cli("adapt", agent, "--config", settings, stdin=stdin, cwd=project)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.json == dict(expected, systemMessage="magihook: input event is larger than %d bytes"
                               % magihook.EVENT_MAX_BYTES)


def test_a_cut_event_s_name_is_the_top_level_one():
    assert magihook._named_event(b'{"hook_event_name": "PostToolUse", "tool_input": {"c": "\\"}, "x') \
        == "PostToolUse"
    # A name inside a string (escaped quotes) is not the event's.
    assert magihook._named_event(b'{"content": "\\\"hook_event_name\\\": \\\"Stop\\\"", "x": "') is None
    assert magihook._named_event(b'{"tool_input": {"hook_event_name": "Stop"}, "x": "') is None
    assert magihook._named_event(b'{"tool_input": {"x": "y"') is None


def test_adapt_crafted_events_magihook_wraps_nothing_for_pass_through(project):
    settings = capture_settings(project)
    for stdin in (b'{"hook_event_name": "Notification", "x": NaN}',
                  b'{"hook_event_name": "SessionStart", "x": "\xff"}'):
        result = run_cli("adapt", "claude-code", "--config", settings, stdin=stdin, cwd=project)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


# -- Message hooks inside the agents --------------------------------------------------------------

def claude_stop(project, event="Stop", **extra):
    document = {"session_id": "abc123", "transcript_path": "/home/user/.claude/t.jsonl",
                "cwd": str(project), "permission_mode": "default", "hook_event_name": event,
                "stop_hook_active": False, "last_assistant_message": "All done."}
    document.update(extra)
    return document


def codex_stop(project, **extra):
    document = {"session_id": "0199a213", "turn_id": "turn-7", "transcript_path": None,
                "cwd": str(project), "hook_event_name": "Stop", "model": "gpt-5-codex",
                "permission_mode": "default", "stop_hook_active": False,
                "last_assistant_message": "All done."}
    document.update(extra)
    return document


def gemini_after_agent(project, **extra):
    document = {"session_id": "gem-1", "transcript_path": "/home/user/.gemini/tmp/chat.json",
                "cwd": str(project), "hook_event_name": "AfterAgent",
                "timestamp": "2026-01-28T10:30:00Z", "prompt": "do it",
                "prompt_response": "All done.", "stop_hook_active": False}
    document.update(extra)
    return document


STOPS = [
    ("claude-code", claude_stop),
    ("claude-code", lambda p, **extra: claude_stop(p, "SubagentStop", agent_id="a1", **extra)),
    ("codex", codex_stop),
    ("gemini", gemini_after_agent),
]


@pytest.mark.parametrize("agent,stop", STOPS)
def test_adapt_runs_after_assistant_hooks_on_the_final_message(project, agent, stop):
    settings = capture_settings(project, "after_assistant")
    for active in (False, True):  # another hook's continued turn ends with a new message
        result = adapt(agent, project, stop(project, stop_hook_active=active), settings)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    records = captured(project)
    assert len(records) == 2
    assert records[0]["stdin"]["request"] == {"text": "All done."}
    assert records[0]["stdin"]["tool"]["name"] == "assistant"
    assert records[0]["stdin"]["phase"] == "after_assistant"


@pytest.mark.parametrize("agent,stop", STOPS)
def test_adapt_fail_on_the_final_message_ends_the_turn(project, agent, stop):
    write_script(project, "fail.sh", FAILING)
    settings = config(project, after_assistant=[{"label": "f", "command": "./fail.sh",
                                                 "failure_policy": "fail"}])
    result = adapt(agent, project, stop(project), settings)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.json == {"continue": False, "stopReason": STOPPED}
    broken = project / "broken.json"
    broken.write_text("{")
    result = adapt(agent, project, stop(project), str(broken))
    assert (result.returncode, result.stderr) == (0, "")
    answer = result.json
    assert answer.pop("systemMessage").startswith("magihook: ")
    assert answer == {"continue": False, "stopReason": STOPPED}


@pytest.mark.parametrize("agent,stop", STOPS)
def test_adapt_context_at_the_end_of_a_turn_is_recorded_not_delivered(project, agent, stop):
    # Text added at a stop (additionalContext, decision block) makes the agent run one more
    # model round: magihook never does it, so it never starts a loop.
    write_script(project, "note.sh", "#!/bin/sh\ncat >/dev/null\nprintf '%s' "
                 "'{\"context_items\": [{\"role\": \"user\", \"content\": \"note\"}]}'\n")
    settings = config(project, after_assistant=[{"label": "n", "command": "./note.sh",
                                                 "provider_context_injection": True}])
    session = project / "s.jsonl"
    result = adapt(agent, project, stop(project), settings, "--session", str(session))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    events = [json.loads(line) for line in session.read_text().splitlines()]
    assert [event["type"] for event in events] == [
        "hook_lifecycle", "hook_lifecycle", "hook_context_injection"]
    audit = events[-1]["payload"]
    assert (audit["status"], audit["item_count"], audit["byte_count"]) == ("not_delivered", 1, 4)


@pytest.mark.parametrize("agent,document", [
    ("claude-code", lambda p: {k: v for k, v in claude_stop(p).items()
                               if k != "last_assistant_message"}),
    ("codex", lambda p: codex_stop(p, last_assistant_message=None)),
])
def test_adapt_a_stop_without_the_message_runs_nothing(project, agent, document):
    settings = capture_settings(project, "after_assistant")
    result = adapt(agent, project, document(project), settings)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert not (project / "captured.jsonl").exists()
