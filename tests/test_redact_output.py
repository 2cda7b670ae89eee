"""hooks.redact_tool_output: the tool result the model is sent, with credentials redacted, and a
write of a redaction marker blocked (DESIGN.md "Secrets kept from the model")."""

from __future__ import annotations

import json

import pytest
from conftest import after_event, run_cli, write_script, write_settings

import magihook

GITHUB = "ghp_" + "Z9y8Xw7V" * 4 + "Ab12"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "Q1w2E3r4T5"
HELD = "s3cr3t-held-by-name-x9"
CONTENT = ("# app.env\nLOG_LEVEL=debug\nGITHUB_TOKEN=%s\nAWS_SECRET_ACCESS_KEY=%s\nPORT=8080\n"
           "copy of the held value: %s\n" % (GITHUB, AWS_SECRET, HELD))
RESULT = {"tool_name": "bash", "success": True, "content": CONTENT,
          "metadata": {"exit_code": 0, "api_key": HELD, "lines": ["plain", "Bearer " + GITHUB],
                       "duration_ms": 12.5, "truncated": False}}
MARKER = magihook.REDACTION_MARKER


def settings(**hooks):
    return magihook.settings_from_document({"hooks": dict({"redact_tool_output": True}, **hooks)})


def test_off_by_default_the_result_is_the_event_s_own():
    given = dict(after_event(), result=RESULT)
    for document in ({"hooks": {"enabled": True}}, {"hooks": {"redact_tool_output": False}}):
        result = magihook.run_phase(magihook.settings_from_document(document), "after_tool", given)
        assert result["tool_result"] is given["result"]


def test_on_the_model_gets_the_result_with_credentials_redacted_and_the_rest_whole():
    out = magihook.run_phase(settings(), "after_tool", dict(after_event(), result=RESULT))["tool_result"]
    assert out == {"tool_name": "bash", "success": True, "content": (
        "# app.env\nLOG_LEVEL=debug\nGITHUB_TOKEN=%s\nAWS_SECRET_ACCESS_KEY=%s\nPORT=8080\n"
        "copy of the held value: %s\n" % (MARKER, MARKER, MARKER)),
        "metadata": {"exit_code": 0, "api_key": MARKER, "lines": ["plain", "Bearer " + MARKER],
                     "duration_ms": 12.5, "truncated": False}}


def test_a_value_under_a_credential_name_keeps_its_shape():
    result = dict(RESULT, metadata={"credentials": {"user": "bob", "password": "pw-is-long-enough"},
                                    "api_keys": ["first-key-value-x", 7], "session_token": None})
    out = magihook.run_phase(settings(), "after_tool", dict(after_event(), result=result))["tool_result"]
    assert out["metadata"] == {"credentials": {"user": MARKER, "password": MARKER},
                               "api_keys": [MARKER, 7], "session_token": None}


def test_it_holds_without_hooks_enabled_and_for_a_tool_no_hook_wraps():
    unwrapped = dict(after_event(tool="mcp__db__query"), result=dict(RESULT, tool_name="mcp__db__query"))
    for document in ({"hooks": {"redact_tool_output": True}},
                     {"hooks": {"enabled": False, "redact_tool_output": True}}):
        out = magihook.run_phase(magihook.settings_from_document(document), "after_tool", unwrapped)
        assert GITHUB not in json.dumps(out["tool_result"]) and "LOG_LEVEL=debug" in out["tool_result"]["content"]


@pytest.mark.parametrize("payload", ["full", "redacted"])
def test_hooks_still_get_their_payload_by_their_mode(project, payload):
    dump = project / "stdin.json"
    script = write_script(project, "dump.sh", "#!/bin/bash\ncat > '%s'\n" % dump)
    config = write_settings(project, {"enabled": True, "redact_tool_output": True,
                                      "after_tool": [{"command": str(script), "payload": payload}]})
    ran = run_cli("run", "--phase", "after_tool", "--config", str(config),
                  event=dict(after_event(), result=RESULT), cwd=str(project))
    assert ran.returncode == 0, ran.stderr
    assert GITHUB not in ran.stdout and "PORT=8080" in ran.json["tool_result"]["content"]
    given = json.loads(dump.read_text())["result"]
    if payload == "full":
        assert given == RESULT
    else:
        assert given["content"] == magihook.REDACTED_TOOL_OUTPUT


def test_code_that_compares_a_literal_with_a_nameless_name_comes_back_whole(project):
    # `"x" == _` once raised IndexError inside the redactor: the call failed and no redacted
    # output went to the agent.
    content = 'if "value1" == _:\n    pass\nGITHUB_TOKEN=%s\n' % GITHUB
    config = write_settings(project, {"redact_tool_output": True})
    ran = run_cli("run", "--phase", "after_tool", "--config", str(config),
                  event=after_event(content=content), cwd=str(project))
    assert ran.returncode == 0, ran.stderr
    assert ran.json["tool_result"]["content"] == 'if "value1" == _:\n    pass\nGITHUB_TOKEN=%s\n' % MARKER


def test_config_shows_the_setting(project):
    config = write_settings(project, {"redact_tool_output": True})
    shown = run_cli("config", "--config", str(config))
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["hooks"]["redact_tool_output"] is True


# --- no placeholder written back ------------------------------------------------------------------

PATCH_ADDING = "*** Begin Patch\n*** Update File: app.env\n@@\n-GITHUB_TOKEN=old\n+GITHUB_TOKEN=%s\n*** End Patch\n"
PATCH_REMOVING = "*** Begin Patch\n*** Update File: app.env\n@@\n-GITHUB_TOKEN=%s\n+GITHUB_TOKEN=\n*** End Patch\n"


def before(tool, request):
    return {"tool": {"name": tool, "call_id": "c1"}, "request": request}


@pytest.mark.parametrize("tool, request_", [
    ("write", {"path": "app.env", "content": "GITHUB_TOKEN=%s\n" % MARKER}),
    ("hash_edit", {"path": "app.env", "input": PATCH_ADDING % MARKER}),
])
def test_writing_a_marker_back_is_blocked_before_the_tool_and_before_any_hook(project, tool, request_):
    touched = project / "ran"
    script = write_script(project, "guard.sh", "#!/bin/bash\ntouch '%s'\n" % touched)
    config = write_settings(project, {"enabled": True, "redact_tool_output": True,
                                      "before_tool": [{"command": str(script)}]})
    ran = run_cli("run", "--phase", "before_tool", "--config", str(config), event=before(tool, request_),
                  cwd=str(project))
    assert ran.returncode == 3, ran.stderr
    assert ran.json["verdict"] == "block"
    assert ran.json["tool_result"] == {
        "tool_name": tool, "call_id": "c1", "success": False, "blocked": True,
        "content": "This tool call was blocked by local hook policy: its new content holds "
                   "<redacted:credential>, which stands for a credential hidden from you; write the "
                   "file without it."}
    assert not touched.exists()


@pytest.mark.parametrize("redact, tool, request_", [
    (False, "write", {"path": "app.env", "content": "GITHUB_TOKEN=%s\n" % MARKER}),
    (True, "write", {"path": "app.env", "content": "GITHUB_TOKEN=ghp_real\n"}),
    (True, "hash_edit", {"path": "app.env", "input": PATCH_REMOVING % MARKER}),
    # A command that can only show or search text.
    (True, "bash", {"command": "echo %s" % MARKER}),
    (True, "bash", {"command": "grep -n '%s' app.env 2>&1 | head 2>/dev/null" % MARKER}),
    (True, "bash", {"command": "grep -i '%s' app.env >/dev/null && echo found; rg -i '%s'" % (MARKER, MARKER)}),
    (True, "bash", {"command": "grep -c '%s' app.env | awk '$1 > 0'; echo 'a -> %s'" % (MARKER, MARKER)}),
    (True, "bash", {"command": "git grep '%s' || git diff | sed -n '/%s/p'" % (MARKER, MARKER)}),
    (False, "bash", {"command": "cat > app.env <<'EOF'\nGITHUB_TOKEN=%s\nEOF" % MARKER}),
    (False, "mcp__fs__write_file", {"path": "app.env", "content": "GITHUB_TOKEN=%s\n" % MARKER}),
    (True, "mcp__fs__write_file", {"path": "app.env", "content": "GITHUB_TOKEN=ghp_real\n"}),
])
def test_a_marker_elsewhere_or_with_the_setting_off_is_not_blocked(redact, tool, request_):
    document = {"hooks": {"redact_tool_output": redact}}
    result = magihook.run_phase(magihook.settings_from_document(document), "before_tool", before(tool, request_))
    assert (result["verdict"], result["tool_result"]) == ("continue", None)


INPUT_BLOCKED = ("This tool call was blocked by local hook policy: its input holds <redacted:credential>, which "
                 "stands for a credential hidden from you; call it without it.")


@pytest.mark.parametrize("tool, request_", [
    # A shell that writes a file (Codex's model writes with here-documents and apply_patch), or
    # stores or sends the marker as the credential it stands for.
    ("bash", {"command": "cat > app.env <<'EOF'\nGITHUB_TOKEN=%s\nEOF" % MARKER}),
    ("bash", {"command": "echo GITHUB_TOKEN=%s >> app.env" % MARKER}),
    ("bash", {"command": "echo 'K=%s' &> app.env" % MARKER}),
    ("bash", {"command": "exec 3>app.env; echo K=%s >&3" % MARKER}),
    ("bash", {"command": "printf 'GITHUB_TOKEN=%s' | tee app.env" % MARKER}),
    ("bash", {"command": "sed -Ei 's/old/%s/' app.env" % MARKER}),
    ("bash", {"command": "sed -i.bak 's/old/%s/' app.env" % MARKER}),
    ("bash", {"command": "perl -pi -e 's/old/%s/' app.env" % MARKER}),
    ("bash", {"command": "apply_patch <<'EOF'\n%sEOF" % (PATCH_ADDING % MARKER)}),
    ("bash", {"command": "python3 - <<'EOF'\nopen('app.env', 'w').write('K=%s')\nEOF" % MARKER}),
    ("bash", {"command": "gh secret set API_KEY --body '%s'" % MARKER}),
    ("bash", {"command": "git config --global github.token '%s'" % MARKER}),
    ("bash", {"command": "curl -X PUT -d 'token=%s' https://example.test" % MARKER}),
    ("mcp__fs__write_file", {"path": "app.env", "content": "GITHUB_TOKEN=%s\n" % MARKER}),
    ("NotebookEdit", {"notebook_path": "a.ipynb", "new_source": ["x = 1", "key = '%s'" % MARKER]}),
])
def test_a_call_that_may_store_or_send_a_marker_is_blocked(tool, request_):
    # A tool magihook does not know may write what it is given (an MCP server's write_file).
    result = magihook.run_phase(settings(), "before_tool", before(tool, request_))
    assert result["verdict"] == "block"
    assert result["tool_result"] == {"tool_name": tool, "call_id": "c1", "success": False, "blocked": True,
                                     "content": INPUT_BLOCKED}


# --- what hooks add for the model --------------------------------------------------------------------

QUOTED = "from the output: GITHUB_TOKEN=%s (port 8080)" % GITHUB


def quoting_hook(project):
    # A full-payload hook that hands the model a line of what the tool showed it.
    items = json.dumps({"context_items": [{"role": "user", "content": QUOTED}]})
    return {"command": str(write_script(project, "quote.sh", "#!/bin/bash\ncat >/dev/null\necho '%s'\n" % items)),
            "payload": "full", "provider_context_injection": True}


@pytest.mark.parametrize("phase, event", [("after_tool", dict(after_event(), result=RESULT)),
                                          ("after_assistant", {"text": "done"})])
@pytest.mark.parametrize("redact", [True, False])
def test_a_context_item_quoting_a_credential_reaches_the_model_redacted(project, phase, event, redact):
    config = write_settings(project, {"enabled": True, "redact_tool_output": redact, phase: [quoting_hook(project)]})
    ran = run_cli("run", "--phase", phase, "--config", str(config), event=event, cwd=str(project))
    assert ran.returncode == 0, ran.stderr
    sent = QUOTED.replace(GITHUB, MARKER) if redact else QUOTED
    assert ran.json["context_items"] == [{"role": "user", "content": sent}]
    recorded = [e["payload"]["content"] for e in ran.json["events"] if e["type"] == "provider_context_item"]
    assert recorded == [sent]


@pytest.mark.parametrize("tool, tool_input, redact, denied", [
    ("NotebookEdit", {"notebook_path": "/p/a.ipynb", "new_source": "key = '%s'" % MARKER}, True, True),
    ("mcp__fs__write_file", {"path": "/p/app.env", "content": "K=%s" % MARKER}, True, True),
    ("mcp__fs__write_file", {"path": "/p/app.env", "content": "K=%s" % MARKER}, False, False),
    ("mcp__fs__write_file", {"path": "/p/app.env", "content": "K=v"}, True, False),
])
def test_adapt_denies_an_unwrapped_tool_whose_input_holds_a_marker(project, tool, tool_input, redact, denied):
    got = adapt_answer(project, "claude-code", agent_stdin(project, "PreToolUse", tool, tool_input), redact=redact)
    assert got == ({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                           "permissionDecisionReason": INPUT_BLOCKED}} if denied else None)


def test_a_context_item_quoting_a_value_the_result_held_by_name_gets_it_redacted(project):
    # The value alone in the item has no name; the result named it, so every copy goes.
    hint = json.dumps({"context_items": [{"role": "user", "content": "Hint: psql with Kq7vR2mXw9Lp as password."}]})
    hook = {"command": str(write_script(project, "hint.sh", "#!/bin/bash\ncat >/dev/null\necho '%s'\n" % hint)),
            "payload": "full", "provider_context_injection": True}
    result = {"tool_name": "bash", "success": True, "content": "DB_PASSWORD=Kq7vR2mXw9Lp\nPORT=5432\n"}
    out = magihook.run_phase(settings(enabled=True, after_tool=[hook]), "after_tool",
                             dict(after_event(), result=result))
    assert out["context_items"] == [{"role": "user", "content": "Hint: psql with %s as password." % MARKER}]


def test_claude_code_additional_context_is_redacted_too(project):
    got = adapt_answer(project, "claude-code", agent_stdin(project, "PostToolUse", "Bash", {"command": "x"},
                                                         tool_response=CLAUDE_BASH),
                       hooks={"enabled": True, "after_tool": [quoting_hook(project)]})
    assert got["hookSpecificOutput"]["additionalContext"] == QUOTED.replace(GITHUB, MARKER)
    assert GITHUB not in json.dumps(got)


# --- adapt: each agent's model gets the redacted output ---------------------------------------------

def adapt_answer(project, agent, document, redact=True, hooks=None):
    settings = write_settings(project, dict({"redact_tool_output": redact}, **(hooks or {})))
    done = run_cli("adapt", agent, "--config", str(settings), event=document, cwd=str(project))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def agent_stdin(project, event, tool, tool_input, **extra):
    return dict({"session_id": "s1", "cwd": str(project), "hook_event_name": event, "tool_name": tool,
                 "tool_input": tool_input}, **extra)


CLAUDE_BASH = {"stdout": CONTENT, "stderr": "", "interrupted": False, "isImage": False}
CLAUDE_READ = {"type": "text", "file": {"filePath": "/p/app.env", "content": CONTENT, "numLines": 7,
                                        "startLine": 1, "totalLines": 7}}


@pytest.mark.parametrize("tool, tool_input, response", [
    ("Bash", {"command": "cat app.env"}, CLAUDE_BASH),
    ("Read", {"file_path": "/p/app.env"}, CLAUDE_READ),
])
def test_claude_code_gets_updated_tool_output_in_the_tool_s_own_shape(project, tool, tool_input, response):
    got = adapt_answer(project, "claude-code", agent_stdin(project, "PostToolUse", tool, tool_input,
                                                         tool_response=response))
    replaced = got["hookSpecificOutput"]["updatedToolOutput"]
    assert got["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert json.dumps(replaced).replace(MARKER, "") == json.dumps(response).replace(GITHUB, "").replace(
        AWS_SECRET, "")
    assert GITHUB not in json.dumps(got) and AWS_SECRET not in json.dumps(got)


def test_claude_code_context_and_replacement_share_hook_specific_output(project):
    items = json.dumps({"context_items": [{"role": "user", "content": "note"}]})
    install = write_script(project, "ctx.sh", "#!/bin/bash\necho '%s'\n" % items)
    hooks = {"enabled": True, "after_tool": [{"command": str(install), "provider_context_injection": True}]}
    got = adapt_answer(project, "claude-code", agent_stdin(project, "PostToolUse", "Bash", {"command": "x"},
                                                         tool_response=CLAUDE_BASH), hooks=hooks)
    assert set(got["hookSpecificOutput"]) == {"hookEventName", "additionalContext", "updatedToolOutput"}


def test_nothing_to_redact_or_setting_off_answers_nothing(project):
    plain = dict(CLAUDE_BASH, stdout="total 0\n")
    assert adapt_answer(project, "claude-code", agent_stdin(project, "PostToolUse", "Bash", {"command": "ls"},
                                                          tool_response=plain)) is None
    assert adapt_answer(project, "claude-code", agent_stdin(project, "PostToolUse", "Bash", {"command": "x"},
                                                          tool_response=CLAUDE_BASH), redact=False) is None


def test_claude_code_failed_tool_output_cannot_be_replaced_and_the_user_is_told(project):
    got = adapt_answer(project, "claude-code", agent_stdin(project, "PostToolUseFailure", "Bash",
                                                         {"command": "x"}, error="Exit code 1\n" + CONTENT))
    assert got == {"systemMessage": "magihook: redact_tool_output: Claude Code cannot replace this tool's "
                                    "output, so the credentials in it were not redacted"}


def test_codex_gets_a_block_whose_reason_is_the_redacted_output(project):
    got = adapt_answer(project, "codex", agent_stdin(project, "PostToolUse", "Bash", {"command": "cat app.env"},
                                                   tool_response=CONTENT))
    assert got == {"decision": "block", "reason": CONTENT.replace(GITHUB, MARKER).replace(
        AWS_SECRET, MARKER)}


def test_gemini_gets_a_deny_whose_reason_is_the_redacted_llm_content_in_its_wrapper(project):
    wrapped = "<untrusted_context>\n%s\n</untrusted_context>" % CONTENT
    got = adapt_answer(project, "gemini", agent_stdin(project, "AfterTool", "read_file", {"file_path": "app.env"},
                                                    tool_response={"llmContent": wrapped, "returnDisplay": ""}))
    assert got == {"decision": "deny", "reason": wrapped.replace(GITHUB, MARKER).replace(AWS_SECRET, MARKER)}


def test_gemini_reason_is_truncated_inside_the_wrapper():
    long = "<untrusted_context>\n" + "x" * (magihook.GEMINI_REASON_MAX_CHARS * 2) + "\n</untrusted_context>"
    cut = magihook._gemini_truncated(long)
    assert cut.startswith("<untrusted_context>\nxxx") and cut.endswith(
        "characters not shown ...]\n</untrusted_context>")
    assert len(cut) < magihook.GEMINI_REASON_MAX_CHARS + 100
    assert magihook._gemini_truncated("short") == "short"


@pytest.mark.parametrize("tool, tool_input", [("Bash", {"command": "cat app.env"}), ("read_bash", {"shellId": "1"})],
                         ids=["wrapped", "unwrapped"])
def test_copilot_gets_a_modified_result_with_the_redacted_text(project, tool, tool_input):
    # Copilot's PascalCase PostToolUse holds the output under tool_result (snake case); the
    # answer that replaces it is modifiedResult (camel case), also for a tool magihook does not
    # wrap (read_bash: a background command's output).
    response = {"result_type": "success", "text_result_for_llm": CONTENT}
    got = adapt_answer(project, "copilot", agent_stdin(project, "PostToolUse", tool, tool_input,
                                                     tool_result=response))
    assert got == {"modifiedResult": {"resultType": "success", "textResultForLlm": CONTENT.replace(
        GITHUB, MARKER).replace(AWS_SECRET, MARKER)}}


def test_qwen_gets_a_stop_reason_that_becomes_the_tool_result(project):
    response = {"llmContent": CONTENT, "returnDisplay": CONTENT}
    got = adapt_answer(project, "qwen", agent_stdin(project, "PostToolUse", "run_shell_command",
                                                  {"command": "cat app.env"}, tool_response=response))
    assert got == {"continue": False, "stopReason": CONTENT.replace(GITHUB, MARKER).replace(AWS_SECRET, MARKER)}


@pytest.mark.parametrize("agent, title, tool", [("copilot", "GitHub Copilot CLI", "Bash"),
                                                ("qwen", "Qwen Code", "run_shell_command")])
def test_a_failed_tool_s_output_is_not_claimed_replaced_and_the_user_is_told(project, agent, title, tool):
    got = adapt_answer(project, agent, agent_stdin(project, "PostToolUseFailure", tool, {"command": "x"},
                                                 error="Exit code 1\n" + CONTENT))
    assert got == {"systemMessage": "magihook: redact_tool_output: %s cannot replace this tool's "
                                    "output, so the credentials in it were not redacted" % title}


# A `fail` after a tool withholds the whole output where the agent puts the stop sentence in its
# place (Codex reads a block's reason before stopReason; Copilot's modifiedResult; Qwen's
# stopReason): a redacted copy of the output must not take the sentence's place there.
@pytest.mark.parametrize("agent, event, tool, fields, expected", [
    ("codex", "PostToolUse", "Bash", {"tool_response": CONTENT},
     {"continue": False, "stopReason": "This turn was stopped by local hook policy."}),
    ("copilot", "PostToolUse", "Bash",
     {"tool_result": {"result_type": "success", "text_result_for_llm": CONTENT}},
     {"modifiedResult": {"resultType": "failure",
                         "textResultForLlm": "This turn was stopped by local hook policy."}}),
    ("qwen", "PostToolUse", "run_shell_command",
     {"tool_response": {"llmContent": CONTENT, "returnDisplay": CONTENT}},
     {"continue": False, "stopReason": "This turn was stopped by local hook policy."}),
])
def test_a_fail_after_a_tool_still_withholds_the_output_when_it_holds_a_credential(
        project, agent, event, tool, fields, expected):
    hooks = {"enabled": True, "after_tool": [{"command": "/bin/false", "failure_policy": "fail"}]}
    got = adapt_answer(project, agent, agent_stdin(project, event, tool, {"command": "cat app.env"},
                                                   **fields), hooks=hooks)
    got.pop("systemMessage", None)
    assert got == expected


@pytest.mark.parametrize("agent, event, tool, fields, replaced", [
    ("claude-code", "PostToolUse", "Bash", {"tool_response": CLAUDE_BASH}, "hookSpecificOutput"),
    ("gemini", "AfterTool", "run_shell_command", {"tool_response": {"llmContent": CONTENT}}, "reason"),
])
def test_a_fail_that_ends_the_turn_still_leaves_the_redacted_copy_behind(
        project, agent, event, tool, fields, replaced):
    # Claude Code and Gemini CLI end the turn: the output stays in the session, redacted.
    hooks = {"enabled": True, "after_tool": [{"command": "/bin/false", "failure_policy": "fail"}]}
    got = adapt_answer(project, agent, agent_stdin(project, event, tool, {"command": "cat app.env"},
                                                   **fields), hooks=hooks)
    assert got["continue"] is False and replaced in got
    assert GITHUB not in json.dumps(got) and MARKER in json.dumps(got)


# A tool magihook does not wrap may still show the model an output: the output of a command run in
# the background, read back by Gemini CLI's read_background_output or Copilot's read_bash.  No
# hook runs for it, but the setting holds (the whole file reached the model, measured with
# Gemini CLI 0.61.0).
def test_gemini_read_background_output_is_redacted_and_wired(project):
    response = {"llmContent": "Full Log Output:\n" + CONTENT, "returnDisplay": "Full Log Output:\n" + CONTENT}
    got = adapt_answer(project, "gemini", agent_stdin(project, "AfterTool", "read_background_output",
                                                    {"pid": 4242}, tool_response=response))
    assert got == {"decision": "deny", "reason": "Full Log Output:\n" + CONTENT.replace(
        GITHUB, MARKER).replace(AWS_SECRET, MARKER)}
    snippet = magihook.agent_settings_snippet("gemini", None, "mh")
    assert "read_background_output" in snippet["hooks"]["AfterTool"][0]["matcher"].split("|")
    assert "read_background_output" not in snippet["hooks"]["BeforeTool"][0]["matcher"].split("|")


def test_an_unwrapped_tool_gets_no_answer_without_the_setting_or_a_credential_or_before_it(project):
    response = {"llmContent": CONTENT, "returnDisplay": ""}
    event = agent_stdin(project, "AfterTool", "read_background_output", {"pid": 1}, tool_response=response)
    assert adapt_answer(project, "gemini", event, redact=False) is None
    assert adapt_answer(project, "gemini", dict(event, tool_response={"llmContent": "PORT=8080"})) is None
    before = agent_stdin(project, "BeforeTool", "read_background_output", {"pid": 1})
    assert adapt_answer(project, "gemini", before) is None
    hooks = {"enabled": True, "after_tool": [{"command": "/bin/false", "failure_policy": "fail"}]}
    assert adapt_answer(project, "gemini", dict(event, tool_response={"llmContent": "x"}), hooks=hooks) is None


# --- a tool whose output streams past every hook ------------------------------------------------------

# Claude Code's Monitor runs a command and hands the model each line it prints as a message of its
# own, which no hook sees (measured, 2.1.332): under the setting the call is denied before it runs.
MONITOR_INPUT = {"description": "watch", "timeout_ms": 300000, "command": "cat app.env"}
MONITOR_DENIED = ("This tool call was blocked by local hook policy: Monitor streams its output to you "
                  "where the credentials in it cannot be redacted; use Bash instead.")


def test_claude_code_monitor_is_denied_before_any_hook_and_bash_still_runs(project):
    touched = project / "ran"
    guard = write_script(project, "guard.sh", "#!/bin/bash\ntouch '%s'\n" % touched)
    hooks = {"enabled": True, "before_tool": [{"command": str(guard)}]}
    got = adapt_answer(project, "claude-code", agent_stdin(project, "PreToolUse", "Monitor", MONITOR_INPUT),
                       hooks=hooks)
    assert got == {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                          "permissionDecisionReason": MONITOR_DENIED}}
    assert not touched.exists()
    bash = agent_stdin(project, "PreToolUse", "Bash", {"command": "cat app.env"})
    assert adapt_answer(project, "claude-code", bash, hooks=hooks) is None
    assert touched.exists()


def test_claude_code_monitor_with_the_setting_off_meets_the_bash_guards_as_before(project):
    # Wired by name, Monitor reaches adapt as itself; the bash guards still get its command, as
    # they did when Claude Code handed its events to the Bash matcher as Bash's.
    dump = project / "stdin.json"
    guard = write_script(project, "guard.sh", "#!/bin/bash\ncat > '%s'\n" % dump)
    hooks = {"enabled": True, "before_tool": [{"command": str(guard), "include_tools": ["bash"],
                                               "payload": "full"}]}
    got = adapt_answer(project, "claude-code", agent_stdin(project, "PreToolUse", "Monitor", MONITOR_INPUT),
                       redact=False, hooks=hooks)
    assert got is None
    given = json.loads(dump.read_text())
    assert (given["tool"]["name"], given["request"]) == ("bash", {"command": "cat app.env"})


# Codex: what the model types into a session it started (exec_command with a TTY, then
# write_stdin) reaches no hook (measured, 0.171): under the setting a command that starts a shell
# or an interpreter reading its stdin is denied before it runs.
TYPED_SESSION_DENIED = ("This tool call was blocked by local hook policy: what you type into an "
                        "interactive session reaches you where the credentials in it cannot be "
                        "redacted; run each command on its own.")


@pytest.mark.parametrize("command", ["bash", "python3 -i", "PS1= /bin/sh"])
def test_codex_starting_an_interactive_session_is_denied_before_any_hook(project, command):
    touched = project / "ran"
    guard = write_script(project, "guard.sh", "#!/bin/bash\ntouch '%s'\n" % touched)
    hooks = {"enabled": True, "before_tool": [{"command": str(guard)}]}
    got = adapt_answer(project, "codex", agent_stdin(project, "PreToolUse", "Bash", {"command": command}),
                       hooks=hooks)
    assert got == {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                          "permissionDecisionReason": TYPED_SESSION_DENIED}}
    assert not touched.exists()


@pytest.mark.parametrize("agent, command, redact", [
    ("codex", "cat app.env", True), ("codex", "bash -c 'cat app.env'", True), ("codex", "python3 x.py", True),
    ("codex", "bash", False), ("claude-code", "bash", True)])
def test_a_command_that_starts_no_session_or_an_agent_whose_sessions_hooks_see_runs(
        project, agent, command, redact):
    touched = project / "ran"
    guard = write_script(project, "guard.sh", "#!/bin/bash\ntouch '%s'\n" % touched)
    hooks = {"enabled": True, "before_tool": [{"command": str(guard)}]}
    event = agent_stdin(project, "PreToolUse", "Bash", {"command": command})
    assert adapt_answer(project, agent, event, redact=redact, hooks=hooks) is None
    assert touched.exists()


def test_claude_code_wires_monitor_before_the_tool_only():
    snippet = magihook.agent_settings_snippet("claude-code", None, "mh")["hooks"]
    assert "Monitor" in snippet["PreToolUse"][0]["matcher"].split("|")
    for event in ("PostToolUse", "PostToolUseFailure"):
        assert "Monitor" not in snippet[event][0]["matcher"].split("|")


def test_every_streamed_output_tool_names_a_tool_to_use_instead():
    for agent in magihook.AGENTS.values():
        for tool in agent.streamed_output_tools:
            sentence = magihook.streamed_output_content(agent, tool)
            assert sentence is not None and "%" not in sentence, (agent.name, tool)
