"""Codex-specific interop: what the real Codex 0.171 sends its hooks (tests/e2e/test_codex.py
observed it), carried through `magihook adapt codex` and the codex dialect.

apply_patch reaches write guards (affected_paths, the shipped write validator), a shell call's
result has `success: null`, and Codex's own `permission_mode` reaches codex-dialect hooks.
"""

from __future__ import annotations

import json
import resource
import shutil

import pytest
from conftest import EXAMPLES, bash_event, require_tool, run_cli, write_settings
from test_interop import BLOCKED, adapt, answer, captured, codex_stdin, config, dialect_hook, install

SECRET = "sk-" + "unitA1b2C3d4E5f6G7h8"


def real_codex_stdin(project, tool, tool_input, event="PreToolUse", **extra):
    """The stdin Codex 0.171.0 gave a hook in `codex exec --dangerously-bypass-approvals-and-sandbox`
    (recorded from the real CLI): its permission mode, a transcript path, its own turn id."""
    document = codex_stdin(project, tool, tool_input, event, **extra)
    document.update(model="gpt-5.5", permission_mode="bypassPermissions",
                    turn_id="01a230bf-9f94-79c1-932e-f8496e4d3726",
                    transcript_path="/home/u/.codex/sessions/rollout-01a2.jsonl")
    return document


def magihook_capture(project, phase="before_tool", **fields):
    install(project, "capture.py")
    return config(project, **{phase: [dict({"label": "cap", "command": "./.hooks/capture.py",
                                            "payload": "full"}, **fields)]})


# --- tool results: success is never true when Codex does not say ------------------------------

@pytest.mark.parametrize("tool,response,success", [
    ("Bash", "", None),                       # exec_command: the output text alone
    ("Bash", "total 0\n", None),
    # A command's output may say anything: only apply_patch's status line is Codex's own.
    ("Bash", "Exit code: 0\nWall time: 0 seconds\nOutput:\n", None),
    ("apply_patch", "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the "
                    "following files:\nA notes.txt\n", True),
    ("apply_patch", "Exit code: 1\nWall time: 0 seconds\nOutput:\nerror\n", False),
    ("apply_patch", "no status line", None),
    ("apply_patch", None, None),
])
def test_codex_results_say_success_only_when_codex_does(project, tool, response, success):
    settings = magihook_capture(project, "after_tool")
    tool_input = {"command": "ls"} if tool == "Bash" else {
        "command": "*** Begin Patch\n*** Add File: notes.txt\n+hi\n*** End Patch\n"}
    result = adapt("codex", project, real_codex_stdin(project, tool, tool_input, "PostToolUse",
                                                      tool_response=response), settings)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    got = captured(project)[0]["stdin"]["result"]
    assert got["success"] is success
    assert got["content"] == response


@pytest.mark.parametrize("response,success,content", [
    ({"success": False, "output": "x"}, False, '{"success":false,"output":"x"}'),
    ({"output": "x"}, None, '{"output":"x"}'),
    (["a", 1], None, '["a",1]'),
    (7, None, "7"),
    (True, None, "true"),
])
def test_other_codex_responses_are_json_text_and_unknown_unless_they_say(project, response,
                                                                          success, content):
    settings = magihook_capture(project, "after_tool")
    result = adapt("codex", project, real_codex_stdin(project, "Bash", {"command": "ls"},
                                                      "PostToolUse", tool_response=response), settings)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    got = captured(project)[0]["stdin"]["result"]
    assert (got["success"], got["content"]) == (success, content)


def test_after_log_example_writes_na_for_an_unknown_status(project):
    shutil.copy2(EXAMPLES / "hooks" / "after-log.sh", project / "after-log.sh")
    settings = config(project, after_tool=[{"label": "log", "command": "./after-log.sh"}])
    result = adapt("codex", project, real_codex_stdin(project, "Bash", {"command": "ls"},
                                                      "PostToolUse", tool_response="x\n"), settings)
    assert (result.returncode, result.stdout) == (0, "")
    assert (project / ".magi-hooks" / "after.log").read_text().rstrip().endswith(
        "tool=bash success=n/a")


# --- permission_mode: Codex's own reaches codex-dialect hooks ----------------------------------

def test_codex_permission_mode_reaches_a_codex_dialect_hook(project):
    install(project, "capture.py")
    settings = config(project, before_tool=[dialect_hook("codex", "capture.py")])
    sent = real_codex_stdin(project, "Bash", {"command": "ls"})
    answer_result = adapt("codex", project, sent, settings)
    assert (answer_result.returncode, answer_result.stdout) == (0, "")
    got = captured(project)[0]["stdin"]
    assert got["permission_mode"] == "bypassPermissions"
    # The whole stdin is what Codex itself sent, key for key.
    assert got == sent


def test_permission_mode_stays_out_of_magihooks_own_payload(project):
    settings = magihook_capture(project)
    adapt("codex", project, real_codex_stdin(project, "Bash", {"command": "ls"}), settings)
    context = captured(project)[0]["stdin"]["context"]
    assert "permission_mode" not in context


def test_an_input_event_may_carry_the_agents_permission_mode(project):
    install(project, "capture.py")
    settings = config(project, before_tool=[dialect_hook("codex", "capture.py")])
    event = bash_event(context={"permission_mode": "acceptEdits"})
    result = run_cli("run", "--phase", "before_tool", "--config", settings, event=event, cwd=project)
    assert result.returncode == 0, result.stderr
    assert captured(project)[0]["stdin"]["permission_mode"] == "acceptEdits"


def test_without_a_permission_mode_a_dialect_hook_gets_default(project):
    install(project, "capture.py")
    settings = config(project, before_tool=[dialect_hook("codex", "capture.py")])
    run_cli("run", "--phase", "before_tool", "--config", settings, event=bash_event(), cwd=project)
    assert captured(project)[0]["stdin"]["permission_mode"] == "default"


def test_a_bad_permission_mode_is_a_clear_input_error(project):
    result = run_cli("run", "--phase", "before_tool",
                     event=bash_event(context={"permission_mode": 3}), cwd=project)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", "magihook: $.context.permission_mode: expected a string, got an integer\n")


def test_a_misspelled_permission_mode_is_named(project):
    result = run_cli("run", "--phase", "before_tool",
                     event=bash_event(context={"permision_mode": "plan"}), cwd=project)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", "magihook: $.context.permision_mode: unknown context key "
               "(did you mean 'permission_mode'?)\n")


# --- apply_patch: the files a patch writes are affected_paths ----------------------------------

def affected(project, patch, cwd=None):
    settings = magihook_capture(project)
    result = adapt("codex", project, real_codex_stdin(project, "apply_patch", {"command": patch}),
                   settings)
    assert (result.returncode, result.stdout) == (0, "")
    return captured(project)[-1]["stdin"]["affected_paths"]


def entry(path, source="request.input"):
    return {"path": path, "kind": "write_target", "source": source}


def test_every_file_a_patch_writes_is_an_affected_path(project):
    patch = ("*** Begin Patch\n*** Add File: .env\n+A=1\n*** Update File: src/a.py\n"
             "*** Move to: src/b.py\n@@\n-x\n+y\n*** Delete File: old.txt\n*** End Patch\n")
    assert affected(project, patch) == [entry(".env"), entry("src/a.py"), entry("src/b.py"),
                                        entry("old.txt")]


def test_a_one_file_patch_names_its_file_as_request_path(project):
    patch = "*** Begin Patch\n*** Add File: notes.txt\n+hi\n*** End Patch\n"
    assert affected(project, patch) == [entry("notes.txt", "request.path")]


def test_unsafe_patch_paths_are_left_out(project, tmp_path):
    (project / "link").symlink_to(tmp_path)
    patch = ("*** Begin Patch\n*** Add File: ../escape.txt\n+a\n*** Add File: /etc/x\n+a\n"
             "*** Add File: link/out.txt\n+a\n*** Add File: %s\n+a\n*** Add File: ok.txt\n+a\n"
             "*** End Patch\n" % (project / "inside.txt"))
    assert affected(project, patch) == [entry("inside.txt"), entry("ok.txt")]


def test_affected_paths_of_a_huge_patch_stay_bounded_and_fast(project):
    patch = "*** Begin Patch\n" + "".join(
        "*** Add File: f%d.txt\n+x\n" % number for number in range(200000)) + "*** End Patch\n"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    paths = affected(project, patch)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert paths == [entry("f%d.txt" % number) for number in range(64)]
    # Generous: the CPU time of magihook and the hook together, not a wall-clock bound.
    assert (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime) < 20


# --- the shipped write validator covers hash_edit ----------------------------------------------

def validator(project):
    shutil.copytree(EXAMPLES / "hooks", project / "hooks")
    return str(write_settings(project, {"enabled": True, "before_tool": [{
        "label": "trusted-write-validator", "command": "./hooks/write-validator.sh",
        "payload": "full", "failure_policy": "block", "include_tools": ["write", "hash_edit"]}]}))


@pytest.mark.parametrize("patch,denied", [
    ("*** Begin Patch\n*** Add File: .env\n+DEBUG=1\n*** End Patch\n", True),
    ("*** Begin Patch\n*** Add File: a.txt\n+a\n*** Add File: sub/.env\n+B=2\n*** End Patch\n", True),
    ("*** Begin Patch\n*** Update File: a.txt\n*** Move to: server.key\n@@\n-a\n+b\n*** End Patch\n",
     True),
    ("*** Begin Patch\n*** Delete File: certs/site.pem\n*** End Patch\n", True),
    ("*** Begin Patch\n*** Add File: config.py\n+TOKEN = '%s'\n*** End Patch\n" % SECRET, True),
    ("*** Begin Patch\n*** Update File: app.py\n@@\n ctx\n-x = 1\n+auth = 'Authorization: Bearer "
     "abc'\n*** End Patch\n", True),
    # Removing a credential is what a user wants; only added lines are checked.
    ("*** Begin Patch\n*** Update File: app.py\n@@\n-TOKEN = '%s'\n+TOKEN = env()\n*** End Patch\n"
     % SECRET, False),
    ("*** Begin Patch\n*** Add File: notes.txt\n+plain\n*** End Patch\n", False),
])
def test_the_write_validator_checks_codex_patches(project, patch, denied):
    require_tool("jq", "the shipped scripts use jq")
    settings = validator(project)
    result = adapt("codex", project, real_codex_stdin(project, "apply_patch", {"command": patch}),
                   settings)
    if denied:
        assert answer(result) == {"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": BLOCKED}}
    else:
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_the_write_validator_checks_edits_from_other_agents(project):
    """Claude Code's Edit and Gemini's replace reach the validator as hash_edit patches too."""
    require_tool("jq", "the shipped scripts use jq")
    settings = validator(project)
    claude = {"session_id": "s", "transcript_path": None, "cwd": str(project),
              "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Edit",
              "tool_input": {"file_path": str(project / "a.py"), "old_string": "x = 1",
                             "new_string": "key = '%s'" % SECRET}, "tool_use_id": "toolu_1"}
    assert answer(adapt("claude-code", project, claude, settings))["hookSpecificOutput"][
        "permissionDecision"] == "deny"
    gemini = {"session_id": "g", "transcript_path": None, "cwd": str(project),
              "hook_event_name": "BeforeTool", "timestamp": "2026-01-01T00:00:00Z",
              "tool_name": "replace", "tool_input": {"file_path": str(project / "deploy.key"),
                                                     "old_string": "a", "new_string": "b"}}
    assert answer(adapt("gemini", project, gemini, settings))["decision"] == "deny"
    fine = dict(claude, tool_input=dict(claude["tool_input"], new_string="x = 2"))
    done = adapt("claude-code", project, fine, settings)
    assert (done.returncode, done.stdout) == (0, "")


def test_the_write_validator_still_checks_writes(project):
    require_tool("jq", "the shipped scripts use jq")
    settings = validator(project)
    write = {"tool": {"name": "write", "call_id": "c"},
             "request": {"path": "deploy/.env", "content": "A=1\n"}}
    result = run_cli("run", "--phase", "before_tool", "--config", settings, event=write, cwd=project)
    assert (result.returncode, result.json["verdict"]) == (3, "block")
    write["request"] = {"path": "notes.txt", "content": "token %s\n" % SECRET}
    result = run_cli("run", "--phase", "before_tool", "--config", settings, event=write, cwd=project)
    assert (result.returncode, result.json["verdict"]) == (3, "block")
    write["request"] = {"path": "notes.txt", "content": "fine\n"}
    result = run_cli("run", "--phase", "before_tool", "--config", settings, event=write, cwd=project)
    assert (result.returncode, result.json["verdict"]) == (0, "continue")
    assert json.loads(result.stdout)["warnings"] == []
