"""Issue 26, failing out loud: a guard that failed and let the call through says so on stderr
(`run`, `test`); `test` passes no case silently over a warning (`--strict`) and says why a case
failed (the category and the first line of the hook's stderr, for the terminal only); `doctor`
finds a hook that works from the project root only and a guard that cannot block; a near miss of
the top-level `hooks` key is an error.

Every hook is a real process; every settings file a real file.
"""

from __future__ import annotations

import json
import os

import pytest
from conftest import WENT_ON, bash_event, run_cli, warning_lines, write_script, write_settings

import magihook

CRASH = "#!/bin/sh\ncat >/dev/null\necho 'guard: crashed' >&2\nexit 1\n"
# A guard whose stderr's first line holds a credential, then more lines the test line never shows.
TELLS = ("#!/bin/sh\ncat >/dev/null\necho 'refused: token ghp_%s in the command' >&2\n"
         "echo 'second line' >&2\nexit 7\n" % "Zq8xWm3Kt7Lp2Vn9Rb4Yc6Hd1Jf5Gs0Ae3Tu")


def write_cases(folder, *cases):
    path = folder / "cases.jsonl"
    path.write_text("".join(json.dumps(case) + "\n" for case in cases))
    return path


def case(name, command, verdict):
    return {"name": name, "phase": "before_tool", "event": bash_event(command),
            "expect": {"verdict": verdict}}


# --- run: each warning on stderr ----------------------------------------------------------------

def test_run_prints_a_failed_warn_guard_on_stderr(project):
    guard = write_script(project, "guard.sh", CRASH)
    config = write_settings(project, {"enabled": True, "before_tool": [
        {"label": "guard", "command": str(guard), "failure_policy": "warn"}]})
    result = run_cli("run", "--phase", "before_tool", "--config", str(config),
                     event=bash_event("rm -rf build"), cwd=project)
    assert (result.returncode, result.json["verdict"]) == (0, "continue")
    warning = "hook guard (before_tool #0, bash) failed: exit: hook exited with status 1" + WENT_ON
    assert result.json["warnings"] == [warning]
    assert result.stderr == "magihook: warning: " + warning + "\n"
    # No hook output and no command text, in the line or the result.
    assert "crashed" not in result.stderr + result.stdout and "rm -rf" not in result.stderr


def test_after_phases_say_what_went_on(project):
    guard = write_script(project, "guard.sh", CRASH)
    config = write_settings(project, {"enabled": True, "after_tool": [{"command": str(guard)}],
                                      "after_assistant": [{"command": str(guard)}]})
    after = run_cli("run", "--phase", "after_tool", "--config", str(config), cwd=project, event={
        "tool": {"name": "bash", "call_id": "c"}, "request": {"command": "ls"},
        "result": {"tool_name": "bash", "success": True, "content": "x"}})
    assert after.stderr == ("magihook: warning: after_tool hook #0 (bash) failed: exit: hook exited "
                            "with status 1; the tool result went on without it (failure_policy "
                            "warn)\n")
    message = run_cli("run", "--phase", "after_assistant", "--config", str(config), cwd=project,
                      event={"text": "hello"})
    assert message.stderr == warning_lines(message.json)
    assert message.stderr.endswith("; the message went on without it (failure_policy warn)\n")


def test_an_untrusted_project_warning_is_printed_once_without_a_doubled_prefix(project):
    (project / ".magi-code").mkdir()
    write_settings(project / ".magi-code", {"enabled": True, "before_tool": [{"command": "true"}]})
    result = run_cli("run", "--phase", "before_tool", event=bash_event(), cwd=project)
    assert result.json["verdict"] == "block"
    assert result.stderr.startswith("magihook: warning: the project settings file ")
    assert result.stderr.count("\n") == 1 and "magihook: magihook" not in result.stderr


def test_stream_keeps_warnings_in_its_result_lines_only(project):
    guard = write_script(project, "guard.sh", CRASH)
    config = write_settings(project, {"enabled": True, "before_tool": [{"command": str(guard)}]})
    line = json.dumps(dict(bash_event(), phase="before_tool")) + "\n"
    result = run_cli("run", "--stream", "--config", str(config), stdin=(line * 2).encode(),
                     cwd=project)
    assert result.stderr == ""
    assert [len(json.loads(each)["warnings"]) for each in result.stdout.splitlines()] == [1, 1]


# --- test: warnings on PASS lines, --strict, and why a case failed ------------------------------

def test_a_pass_over_a_warning_shows_it_and_strict_fails_it(project):
    guard = write_script(project, "guard.sh", CRASH)
    config = write_settings(project, {"enabled": True, "before_tool": [
        {"label": "guard", "command": str(guard), "failure_policy": "warn"}]})
    cases = write_cases(project, case("lets-ls-through", "ls", "continue"))
    warning = "hook guard (before_tool #0, bash) failed: exit: hook exited with status 1" + WENT_ON
    plain = run_cli("test", str(cases), "--config", str(config), cwd=project)
    assert (plain.returncode, plain.stdout) == (
        0, "PASS lets-ls-through (warning: %s)\n1 passed, 0 failed\n" % warning)
    assert plain.stderr == "magihook: warning: %s\n" % warning
    strict = run_cli("test", str(cases), "--config", str(config), "--strict", cwd=project)
    assert (strict.returncode, strict.stdout) == (
        3, "FAIL lets-ls-through: a warning under --strict; why: hook guard (before_tool #0) "
           "failed: exit: hook exited with status 1; its stderr: guard: crashed\n"
           "0 passed, 1 failed\n")


def test_a_guard_without_its_run_bit_fails_its_case_saying_why(project):
    guard = project / "guard.sh"
    guard.write_text("#!/bin/sh\nexit 0\n")  # not executable
    config = write_settings(project, {"enabled": True, "before_tool": [
        {"label": "guard", "command": str(guard), "failure_policy": "block"}]})
    cases = write_cases(project, case("must-block", "rm -rf /", "block"),
                        case("lets-ls-through", "ls", "continue"))
    result = run_cli("test", str(cases), "--config", str(config), cwd=project)
    why = ("hook guard (before_tool #0) failed: exit: hook exited with status 126 (shell: %s); its "
           "stderr: /bin/bash: line 1: %s: Permission denied" % (
               magihook.SHELL_EXIT_MEANINGS[126], guard))
    assert (result.returncode, result.stdout.splitlines()) == (3, [
        "PASS must-block (blocked by %s)" % why,  # the wrong reason, in plain sight
        "FAIL lets-ls-through: expected verdict continue, got block; why: " + why,
        "1 passed, 1 failed"])


def test_a_fail_line_shows_the_first_stderr_line_redacted_and_capped_and_nowhere_else(project):
    guard = write_script(project, "guard.sh", TELLS)
    long_guard = write_script(project, "long.sh", "#!/bin/sh\ncat >/dev/null\nprintf 'x%.0s' "
                              "$(seq 1 5000) >&2\nexit 1\n")
    config = write_settings(project, {"enabled": True, "before_tool": [
        {"label": "guard", "command": str(guard), "failure_policy": "warn"},
        {"label": "long", "command": str(long_guard), "failure_policy": "ignore"}]})
    cases = write_cases(project, case("must-block", "ls", "block"))
    result = run_cli("test", str(cases), "--config", str(config), cwd=project)
    (line, summary) = result.stdout.splitlines()
    assert line.startswith("FAIL must-block: expected verdict block, got continue; why: hook guard "
                           "(before_tool #0) failed: exit: hook exited with status 7; its stderr: "
                           "refused: token <redacted:credential> in the command; why: hook long "
                           "(before_tool #1) failed: exit: hook exited with status 1; its stderr: ")
    assert line.endswith("x" * (magihook.STDERR_HEAD_MAX_CHARS - 1) + "\u2026")
    assert "ghp_" not in result.stdout + result.stderr and "second line" not in result.stdout
    assert summary == "0 passed, 1 failed"
    # The same call through `run`: the hook's stderr is in no record, warning or result.
    run = run_cli("run", "--phase", "before_tool", "--config", str(config), "--session",
                  str(project / "s.jsonl"), event=bash_event("ls"), cwd=project)
    for text in (run.stdout, run.stderr, (project / "s.jsonl").read_text()):
        assert "refused" not in text and "ghp_" not in text and "xxxxx" not in text


def test_run_phase_keeps_no_stderr_in_its_result(project):
    guard = write_script(project, "guard.sh", TELLS)
    settings = magihook.settings_from_document({"hooks": {"enabled": True, "before_tool": [
        {"command": str(guard), "failure_policy": "block"}]}})
    seen = []
    result = magihook._run_phase(settings, "before_tool", bash_event(), cwd=str(project),
                                 on_failure=lambda hook, outcome: seen.append(outcome.category))
    assert (result["verdict"], seen) == ("block", ["exit"])
    assert "refused" not in json.dumps(result)


# --- doctor -------------------------------------------------------------------------------------

def doctor_findings(project, hooks):
    config = write_settings(project, dict({"enabled": True}, **hooks))
    result = run_cli("doctor", "--config", str(config), cwd=project)
    return result.returncode, [line[len("finding: "):] for line in result.stdout.splitlines()
                               if line.startswith("finding: ")]


@pytest.mark.parametrize("command, script", [
    ("./scripts/magi-hooks/audit.sh", "./scripts/magi-hooks/audit.sh"),
    ("scripts/magi-hooks/audit.sh --quiet", "scripts/magi-hooks/audit.sh"),
    ("python3 scripts/magi-hooks/audit.sh", "scripts/magi-hooks/audit.sh"),
])
def test_doctor_finds_a_hook_that_works_from_the_project_root_only(project, command, script):
    (project / "scripts" / "magi-hooks").mkdir(parents=True)
    write_script(project / "scripts" / "magi-hooks", "audit.sh", "#!/bin/sh\ncat >/dev/null\n")
    code, found = doctor_findings(project, {"after_tool": [{"label": "audit", "command": command}]})
    assert (code, found) == (3, [
        "hook audit (after_tool #0): runs %s by a relative path, so it is found only while the "
        "agent's cwd is %s: from a subfolder it is not found and the hook fails; use its "
        "absolute path, %s"
        % (script, project, project / "scripts" / "magi-hooks" / "audit.sh")])
    # And it does fail from a subfolder, as doctor says.
    (project / "src").mkdir()
    config = write_settings(project, {"enabled": True, "before_tool": [
        {"label": "audit", "command": command, "failure_policy": "block"}]})
    event = dict(bash_event(), context={"cwd": str(project / "src")})
    result = run_cli("run", "--phase", "before_tool", "--config", str(config), event=event,
                     cwd=project)
    assert (result.json["verdict"], result.json["events"][-1]["payload"]["category"]) == (
        "block", "exit")


@pytest.mark.parametrize("hook, word", [
    ({"label": "guard", "failure_policy": "warn"}, "guard"),
    ({"label": "scan", "command": "/opt/hooks/deny-writes.sh", "failure_policy": "ignore"},
     "deny"),
    ({"label": "Protect-Main", "failure_policy": "warn"}, "protect"),
    ({"label": "no-force-push", "failure_policy": "warn"}, "no-"),
    ({"command": "/opt/hooks/check-secrets.sh", "failure_policy": "warn"}, "secret"),
])
def test_doctor_finds_a_guard_that_cannot_block(project, hook, word):
    command = hook.get("command", "/bin/true")
    code, found = doctor_findings(project, {"before_tool": [dict(hook, command=command)]})
    subject = ("hook %s (before_tool #0)" % hook["label"] if "label" in hook
               else "before_tool hook #0")
    assert (code, found[-1]) == (3, (
        "%s: looks like a guard (%r) but its failure_policy is %s: its non-zero exit never blocks "
        "a call, and when it crashes, times out or is not found the call goes on; set "
        "\"failure_policy\": \"block\"" % (subject, word, hook["failure_policy"])))


@pytest.mark.parametrize("hook", [
    {"label": "guard", "command": "/bin/true", "failure_policy": "block", "payload": "full"},
    {"label": "audit", "command": "/bin/true", "failure_policy": "warn"},      # not a guard
    {"label": "guard", "command": "/bin/true", "failure_policy": "warn", "dialect": "claude-code",
     "payload": "full"},                                                       # blocks by deny
])
def test_doctor_leaves_other_hooks_alone(project, hook):
    assert doctor_findings(project, {"before_tool": [hook]}) == (0, [])


# --- a near miss of `hooks` ---------------------------------------------------------------------

@pytest.mark.parametrize("key", ["hook", "Hooks", "HOOKS", "hooks_", "hoks", "hookss", "Hook"])
def test_a_near_miss_of_hooks_is_an_error_everywhere(project, key):
    path = project / "settings.json"
    path.write_text(json.dumps({key: {"enabled": True, "before_tool": [{"command": "/bin/false"}]}}))
    message = ("magihook: %s: $.%s: unknown top-level key, a near miss of 'hooks' (did you mean "
               "'hooks'?): as it is, no hook in this file would run\n" % (path, key))
    for args in (["validate", str(path)], ["doctor", "--config", str(path)],
                 ["run", "--phase", "before_tool", "--config", str(path)]):
        result = run_cli(*args, event=bash_event(), cwd=project)
        assert (result.returncode, result.stdout, result.stderr) == (2, "", message), args
    with pytest.raises(magihook.SettingsError):
        magihook.settings_from_document({key: {}})


@pytest.mark.parametrize("document", [
    {"tools": {"bash": {"absolute_paths": True}}}, {"books": 1}, {"house": 1}, {"hooked": 1},
    {"hooks": {"enabled": True}, "model": "x", "theme": "dark"},
])
def test_other_top_level_keys_are_ignored(project, document):
    path = project / "settings.json"
    path.write_text(json.dumps(document))
    assert run_cli("validate", str(path), cwd=project).returncode == 0


# --- doctor: an agent's wiring older than magihook ------------------------------------------------

def printed_wiring(project, agent, config):
    printed = run_cli("adapt", agent, "--print-settings", "--config", str(config), cwd=project)
    assert printed.returncode == 0, printed.stderr
    return json.loads(printed.stdout)


def test_doctor_finds_agent_wiring_that_maps_less_than_magihook_now_does(project, isolated_env):
    # Wired before Monitor joined the PreToolUse matcher: a Monitor call then reaches magihook as
    # a Bash call, and under redact_tool_output its output leaks.
    config = write_settings(project, {"enabled": True, "redact_tool_output": True})
    wiring = printed_wiring(project, "claude-code", config)
    pre = wiring["hooks"]["PreToolUse"][0]
    pre["matcher"] = pre["matcher"].replace("|Monitor", "")
    del wiring["hooks"]["SubagentStop"]
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps(wiring))
    gemini = printed_wiring(project, "gemini", config)
    del gemini["hooks"]["AfterAgent"]
    (isolated_env / ".gemini").mkdir()
    (isolated_env / ".gemini" / "settings.json").write_text(json.dumps(gemini))
    result = run_cli("doctor", "--config", str(config), cwd=project)
    assert result.returncode == 3
    assert [line for line in result.stdout.splitlines() if "wires magihook" in line] == [
        "finding: Claude Code: .claude/settings.json wires magihook for less than it now maps "
        "(PreToolUse: Monitor; SubagentStop); print it again with `magihook adapt claude-code "
        "--print-settings` and replace those hooks",
        "finding: Gemini CLI: ~/.gemini/settings.json wires magihook for less than it now maps "
        "(AfterAgent); print it again with `magihook adapt gemini --print-settings` and replace "
        "those hooks"]


@pytest.mark.parametrize("agent, variable, rest", [
    ("claude-code", "CLAUDE_CONFIG_DIR", "settings.json"),
    ("codex", "CODEX_HOME", "hooks.json"),
    ("gemini", "GEMINI_CLI_HOME", ".gemini/settings.json"),
    ("copilot", "COPILOT_HOME", "hooks/magihook.json"),
    ("qwen", "QWEN_HOME", "settings.json"),
])
def test_doctor_reads_user_wiring_where_the_agents_home_variable_moves_it(
        project, isolated_env, monkeypatch, agent, variable, rest):
    # The agent reads its user settings from $VARIABLE when it is set, so doctor does too; the
    # same file in the default folder is then not the agent's and says nothing.
    config = write_settings(project, {"enabled": True})
    wiring = printed_wiring(project, agent, config)
    del wiring["hooks"][next(iter(wiring["hooks"]))]
    home = project / "agent-home"
    (home / rest).parent.mkdir(parents=True)
    (home / rest).write_text(json.dumps(wiring))
    monkeypatch.setenv(variable, str(home))
    result = run_cli("doctor", "--config", str(config), cwd=project)
    assert result.returncode == 3
    [finding] = [line for line in result.stdout.splitlines() if "wires magihook" in line]
    assert finding.startswith("finding: %s: $%s/%s wires magihook for less than it now maps ("
                              % (magihook.AGENTS[agent].title, variable, rest))
    monkeypatch.delenv(variable)
    assert run_cli("doctor", "--config", str(config), cwd=project).returncode == 0


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini", "copilot", "qwen"])
def test_doctor_finds_nothing_in_wiring_as_printed_or_wider_or_not_ours(project, agent):
    config = write_settings(project, {"enabled": True})
    wiring = printed_wiring(project, agent, config)
    place = {"claude-code": ".claude/settings.json", "codex": ".codex/hooks.json",
             "gemini": ".gemini/settings.json", "copilot": ".github/hooks/magihook.json",
             "qwen": ".qwen/settings.json"}[agent]
    (project / place).parent.mkdir(parents=True)
    (project / place).write_text(json.dumps(wiring))
    assert run_cli("doctor", "--config", str(config), cwd=project).returncode == 0
    for groups in wiring["hooks"].values():
        for group in groups:
            if "matcher" in group:
                group["matcher"] = ".*" if agent == "gemini" else "*"
    (project / place).write_text(json.dumps(wiring))
    assert run_cli("doctor", "--config", str(config), cwd=project).returncode == 0
    (project / place).write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "my-own-guard.sh"}]}]}}))
    assert run_cli("doctor", "--config", str(config), cwd=project).returncode == 0


def test_doctor_reads_hostile_agent_wiring_without_hanging_or_running_its_regex(project):
    # A cloned project's file: a FIFO would block an open for read; a matcher of nested
    # alternatives would take exponential time if run against each tool name.
    config = write_settings(project, {"enabled": True})
    (project / ".claude").mkdir()
    os.mkfifo(project / ".claude" / "settings.json")
    (project / ".qwen").mkdir()
    (project / ".qwen" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "(?:%s)*X" % "|".join([r"\w"] * 16),
         "hooks": [{"type": "command", "command": "/x/magihook adapt --config /x/s.json qwen"}]}]}}))
    result = run_cli("doctor", "--config", str(config), cwd=project)
    assert result.returncode == 3
    assert [line for line in result.stdout.splitlines() if "wires magihook" in line] == [
        "finding: Qwen Code: .qwen/settings.json wires magihook for less than it now maps (PostToolUse; "
        "PostToolUseFailure; Stop); print it again with `magihook adapt qwen --print-settings` and replace "
        "those hooks"]
