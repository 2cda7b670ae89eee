"""Issue 23's held-out check, emulated by a red team: the forms of a credential that reached a
redacted-mode hook or the model (under hooks.redact_tool_output), each a neighbour of one that
was caught: a pair printed over lines or escaped in a JSON string, a label in Markdown's or
HTML's strong emphasis, a no-break space, prose with a longer "for ...", coloured output, an
entry object's other key names, a header in ANTHROPIC_CUSTOM_HEADERS; in every phase that
scans a string and through `adapt` for every agent.

Real processes only: the CLI (`run`, `adapt`) in a subprocess, hooks that are real scripts
writing what they were handed to a file.
"""

from __future__ import annotations

import json
import os

import pytest
from conftest import run_cli, write_script, write_settings

import magihook

# A random value with letters, digits and mixed case: what every rule calls a secret.
R = "Xk9mQ2vR7tLp4wZs8N"

# --- the forms --------------------------------------------------------------------------

# The issue's own pair form, as `json.dumps(..., indent=2)`, `jq .`, `curl | python -m json.tool`
# print it: one line between the name and the value.
PRETTY_PAIR = json.dumps({"headers": [["X-Api-Key", R]]}, indent=2)
# kubectl get deploy -o json / an ECS task definition: the `{"name": ..., "value": ...}` env entry,
# pretty-printed (compact, it is redacted).
PRETTY_NAME_VALUE = json.dumps({"env": [{"name": "API_KEY", "value": R}]}, indent=2)
# Markdown bold around the label: how models and READMEs write it.
BOLD = "**API key:** %s" % R
# A no-break space after the colon (HTML, French typography, text pasted from a web page).
NBSP = "Your API key:\u00a0%s" % R
# The pair form inside a JSON string (a logged request body): the pair written with
# escaped quotes.  `{"body": "{\"password\": \"R\"}"}` is caught; the list pair is not.
ESCAPED_PAIR = json.dumps({"body": json.dumps({"headers": [["X-Api-Key", R]]})})
# The same pair, in a file with Windows line ends.
CRLF_PAIR = '[["X-Api-Key",\r\n  "%s"]]' % R

FORMS = {"pretty_pair": PRETTY_PAIR, "pretty_name_value": PRETTY_NAME_VALUE, "markdown_bold": BOLD,
         "nbsp": NBSP, "escaped_pair": ESCAPED_PAIR, "crlf_pair": CRLF_PAIR}


def test_the_control_forms_are_redacted():
    # The neighbours of the forms above, so that each failure below is about its form, not R.
    for text in ("api_key: %s" % R, "Your API key: %s" % R, '[["X-Api-Key", "%s"]]' % R,
                 '{"env": [{"name": "API_KEY", "value": "%s"}]}' % R, '{"headers": {"X-Api-Key": "%s"}}' % R,
                 json.dumps({"body": json.dumps({"password": R})})):
        assert R not in magihook.redact_credentials(text), text


# --- (b) the model: what `run` sends as tool_result under redact_tool_output ------------------------

# Each is a neighbour of one of the forms (`Password for bob: R`, `Your API key: R`).
KIN = {
    "password_for_the_account": "Password for the admin account: %s" % R,
    "password_for_user_on_host": "Password for bob on prod: %s" % R,
    "html_label": "<b>Your API key:</b> %s" % R,
    "access_key_label": "Access key: %s" % R,
    "private_key_label": "Private key: %s" % R,
    "json_value_on_next_line": '{\n  "password":\n    "%s"\n}' % R,
}
SENT = dict(FORMS, **KIN)


@pytest.mark.parametrize("form", sorted(SENT))
def test_run_after_tool_result_sent_to_the_model_holds_no_credential(project, form):
    settings = write_settings(project, {"redact_tool_output": True})
    event = {"tool": {"name": "read", "call_id": "call_1"}, "request": {"path": "notes.txt"},
             "result": {"tool_name": "read", "success": True,
                        "content": "first line\n%s\nlast line\n" % SENT[form], "metadata": {}}}
    done = run_cli("run", "--phase", "after_tool", "--config", str(settings), event=event, cwd=str(project))
    assert done.returncode == 0, done.stderr
    sent = done.json["tool_result"]
    assert "first line" in sent["content"] and "last line" in sent["content"] and R not in json.dumps(sent)


# --- (b) the model, through `adapt`: a file read or shown by each agent's own tools ----------------

def agent_stdin(project, event, tool, tool_input, **extra):
    return dict({"session_id": "s1", "cwd": str(project), "hook_event_name": event, "tool_name": tool,
                 "tool_input": tool_input}, **extra)


def after_tool_stdin(agent, project, text):
    """Each agent's after-tool stdin for a file shown or read, holding TEXT (the shapes
    tests/test_redact_output.py uses)."""
    path = str(project / "notes.txt")
    if agent == "claude-code":
        return agent_stdin(project, "PostToolUse", "Read", {"file_path": path}, tool_response={
            "type": "text", "file": {"filePath": path, "content": text, "numLines": 3, "startLine": 1,
                                     "totalLines": 3}})
    if agent == "codex":
        return agent_stdin(project, "PostToolUse", "Bash", {"command": "cat notes.txt"}, tool_response=text,
                           turn_id="t1", tool_use_id="u1")
    if agent == "gemini":
        return agent_stdin(project, "AfterTool", "read_file", {"file_path": "notes.txt"},
                           tool_response={"llmContent": text, "returnDisplay": ""})
    if agent == "copilot":
        return agent_stdin(project, "PostToolUse", "Bash", {"command": "cat notes.txt"},
                           tool_result={"result_type": "success", "text_result_for_llm": text})
    assert agent == "qwen"
    return agent_stdin(project, "PostToolUse", "read_file", {"absolute_path": path},
                       tool_response={"llmContent": text, "returnDisplay": text})


def model_reads(agent, project, text):
    """What the model is sent after the tool: adapt's answer (None: no answer, so the agent sends
    its original output)."""
    settings = write_settings(project, {"redact_tool_output": True})
    done = run_cli("adapt", agent, "--config", str(settings), event=after_tool_stdin(agent, project, text),
                   cwd=str(project))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


AGENTS = ["claude-code", "codex", "gemini", "copilot", "qwen"]


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("form", ["pretty_pair", "markdown_bold"])
def test_adapt_replaces_an_output_holding_the_form_for_every_agent(project, agent, form):
    text = "first line\n%s\nlast line\n" % FORMS[form]
    answer = model_reads(agent, project, text)
    assert answer is not None, "no answer: %s sends the original output, credential and all" % agent
    assert R not in json.dumps(answer) and "last line" in json.dumps(answer)


@pytest.mark.parametrize("form", ["pretty_name_value", "nbsp", "escaped_pair", "crlf_pair"])
def test_adapt_replaces_a_claude_code_read_holding_the_form(project, form):
    answer = model_reads("claude-code", project, "first line\n%s\nlast line\n" % FORMS[form])
    assert answer is not None, "no answer: Claude Code sends the original output, credential and all"
    assert R not in json.dumps(answer)


# --- (a) a redacted-mode hook: every phase hands it the value -------------------------------------

def capture_hook(project):
    """A redacted-mode hook that keeps its stdin in captured.json."""
    return str(write_script(project, "capture.sh", "#!/bin/bash\ncat > '%s'\n" % (project / "captured.json")))


def captured(project):
    return (project / "captured.json").read_text()


@pytest.mark.parametrize("agent, document", [
    ("claude-code", lambda p, t: {"session_id": "s1", "cwd": str(p), "hook_event_name": "Stop",
                                  "last_assistant_message": t, "stop_hook_active": False}),
    ("claude-code", lambda p, t: {"session_id": "s1", "cwd": str(p), "hook_event_name": "SubagentStop",
                                  "last_assistant_message": t, "stop_hook_active": False}),
    ("codex", lambda p, t: {"session_id": "s1", "cwd": str(p), "hook_event_name": "Stop", "turn_id": "t1",
                            "last_assistant_message": t, "stop_hook_active": False}),
    ("gemini", lambda p, t: {"session_id": "s1", "cwd": str(p), "hook_event_name": "AfterAgent", "prompt": "",
                             "prompt_response": t, "stop_hook_active": False}),
    ("qwen", lambda p, t: {"session_id": "s1", "cwd": str(p), "hook_event_name": "Stop",
                           "last_assistant_message": t, "stop_hook_active": False}),
], ids=["claude-Stop", "claude-SubagentStop", "codex-Stop", "gemini-AfterAgent", "qwen-Stop"])
def test_an_after_assistant_hook_in_redacted_mode_gets_no_credential(project, agent, document):
    settings = write_settings(project, {"enabled": True, "after_assistant": [
        {"label": "cap", "command": capture_hook(project)}]})
    text = "Done. I set it up.\n\n%s\n\n%s" % (BOLD, PRETTY_PAIR)
    done = run_cli("adapt", agent, "--config", str(settings), event=document(project, text), cwd=str(project))
    assert done.returncode == 0, done.stderr
    got = captured(project)
    assert "Done. I set it up." in got and R not in got


@pytest.mark.parametrize("agent, tool, tool_input", [
    ("claude-code", "Task", {"description": "d", "subagent_type": "general-purpose"}),
    ("claude-code", "Agent", {"description": "d", "subagent_type": "general-purpose"}),
    ("codex", "spawn_agent", {}),
    ("qwen", "agent", {"description": "d", "subagent_type": "general"}),
])
def test_a_before_tool_hook_in_redacted_mode_gets_no_credential_from_a_subagent_prompt(
        project, agent, tool, tool_input):
    settings = write_settings(project, {"enabled": True, "before_tool": [
        {"label": "cap", "command": capture_hook(project)}]})
    prompt = "Deploy with these settings.\n%s\n%s" % (BOLD, PRETTY_NAME_VALUE)
    field = "message" if agent == "codex" else "prompt"
    document = agent_stdin(project, "PreToolUse", tool, dict(tool_input, **{field: prompt}))
    if agent == "codex":
        document.update(turn_id="t1", tool_use_id="u1")
    done = run_cli("adapt", agent, "--config", str(settings), event=document, cwd=str(project))
    assert done.returncode == 0, done.stderr
    got = captured(project)
    assert "Deploy with these settings." in got and R not in got


def test_a_before_tool_hook_in_redacted_mode_gets_no_credential_from_tool_args(project):
    # `run`, magihook's own protocol: a web_search query (tool_args are scanned as strings).
    settings = write_settings(project, {"enabled": True, "before_tool": [
        {"label": "cap", "command": capture_hook(project)}]})
    event = {"tool": {"name": "web_search", "call_id": "call_1"},
             "request": {"query": "why does %s fail with 401" % BOLD}}
    done = run_cli("run", "--phase", "before_tool", "--config", str(settings), event=event, cwd=str(project))
    assert done.returncode == 0, done.stderr
    got = captured(project)
    assert "fail with 401" in got and R not in got


# --- (a) a redacted-mode hook's environment ---------------------------------------------------------

def test_a_redacted_hook_does_not_inherit_anthropic_custom_headers_holding_an_api_key(project):
    # Claude Code's documented ANTHROPIC_CUSTOM_HEADERS ("Name: Value" lines): the redactor finds
    # the key in that value, and a variable whose value holds a credential the redactor finds is
    # left out, whatever its name (a header's `key:` as a connection string's `key=`).
    assert magihook.redact_credentials("X-Api-Key: %s" % R) == "X-Api-Key: <redacted:credential>"
    dump = write_script(project, "env.sh", "#!/bin/bash\nenv > '%s'\n" % (project / "env.txt"))
    settings = write_settings(project, {"enabled": True, "after_tool": [{"label": "env", "command": str(dump)}]})
    env = dict(os.environ, ANTHROPIC_CUSTOM_HEADERS="X-Api-Key: %s" % R, MAGIHOOK_TEST_CONTROL="kept")
    event = {"tool": {"name": "bash", "call_id": "call_1"}, "request": {"command": "ls"},
             "result": {"tool_name": "bash", "success": True, "content": "ok", "metadata": {}}}
    done = run_cli("run", "--phase", "after_tool", "--config", str(settings), event=event, cwd=str(project),
                   env=env)
    assert done.returncode == 0, done.stderr
    seen = (project / "env.txt").read_text()
    assert "MAGIHOOK_TEST_CONTROL=kept" in seen and R not in seen


# --- (b) coloured output: ANSI escapes between a name and its value ------------------------------------

# What `jq -C .` and `grep --color=always API_KEY .env` print (also any tool under FORCE_COLOR /
# CLICOLOR_FORCE, common in CI environments): the same file uncoloured is redacted.
JQ_COLOURED = ('\x1b[1;39m{\n  \x1b[0m\x1b[34;1m"password"\x1b[0m\x1b[1;39m: \x1b[0m\x1b[0;32m"%s"'
               '\x1b[0m\x1b[1;39m\n\x1b[1;39m}\x1b[0m\n' % R)
GREP_COLOURED = "\x1b[01;31m\x1b[KAPI_KEY\x1b[m\x1b[K=%s\n" % R


@pytest.mark.parametrize("text", [JQ_COLOURED, GREP_COLOURED], ids=["jq-C", "grep-color-always"])
def test_run_after_tool_result_redacts_coloured_output(project, text):
    plain = magihook._ansi_re().sub("", text)
    assert R not in magihook.redact_credentials(plain)       # the control: uncoloured, it is found
    settings = write_settings(project, {"redact_tool_output": True})
    event = {"tool": {"name": "bash", "call_id": "call_1"}, "request": {"command": "jq -C . app.json"},
             "result": {"tool_name": "bash", "success": True, "content": text, "metadata": {}}}
    done = run_cli("run", "--phase", "after_tool", "--config", str(settings), event=event, cwd=str(project))
    assert done.returncode == 0, done.stderr
    assert R not in json.dumps(done.json["tool_result"])


# --- (b) name/value entries under other key names ---------------------------------------------------

# Beside `{"name": "API_KEY", "value": R}` and `{"Key": ..., "Value": ...}`: real outputs that give
# the name under another key, as text and as a JSON tree.
ENTRIES = {
    # `op item get ... --format json` (1Password CLI): a concealed field
    "onepassword_field": {"fields": [{"id": "password", "type": "CONCEALED", "purpose": "PASSWORD",
                                      "label": "password", "value": R}]},
    # `aws cloudformation describe-stacks`: a parameter without NoEcho
    "cloudformation_parameter": {"Parameters": [{"ParameterKey": "DbPassword", "ParameterValue": R}]},
    # a HTTP client's header list (Insomnia, Bruno, k6 exports)
    "header_entry": {"headers": [{"header": "X-Api-Key", "value": R}]},
}


@pytest.mark.parametrize("form, as_text", [
    ("cloudformation_parameter", True), ("cloudformation_parameter", False),
    ("onepassword_field", False), ("header_entry", False),
], ids=["cloudformation-text", "cloudformation-tree", "onepassword-tree", "header-entry-tree"])
def test_run_after_tool_result_redacts_a_name_value_entry(project, form, as_text):
    settings = write_settings(project, {"redact_tool_output": True})
    result = {"tool_name": "bash", "success": True, "content": "ok", "metadata": {}}
    if as_text:
        result["content"] = json.dumps(ENTRIES[form])
    else:
        result["metadata"] = ENTRIES[form]
    event = {"tool": {"name": "bash", "call_id": "call_1"}, "request": {"command": "show"}, "result": result}
    done = run_cli("run", "--phase", "after_tool", "--config", str(settings), event=event, cwd=str(project))
    assert done.returncode == 0, done.stderr
    assert R not in json.dumps(done.json["tool_result"])


# --- (c) the red team's layouts: a credential phrase or name, then its value ----------------------

# A value with digits and mixed case, and one after its vendor's word.
V, SK = "Xq7pL2mN9vR4", "sk-4f3c2b1a9d8e7f6a"
# Long texts run other paths (the prose forms found by the name passes, the names with their
# values in one pattern): each form is checked alone and after a filler past each of them.
FILLER = "a line of output, with: a colon = and words\n"


def redacted_everywhere(text, secret):
    return all(secret not in magihook.redact_credentials(FILLER * count + text + "\n" + FILLER)
               for count in (0, 400, 1600, 24000))


# Who or what a password is for, as git's `password for <user>:` prompt says it.
QUALIFIED = ["Password (prod): %s" % V, "API key (staging): %s" % V, "api key (staging): %s" % SK,
             "password of bob: %s" % V, "Password of user bob: %s" % V, "The password (prod) is %s" % V]


@pytest.mark.parametrize("text", QUALIFIED)
def test_a_prose_value_after_a_qualifier_is_redacted(text):
    assert redacted_everywhere(text, V if V in text else SK)


@pytest.mark.parametrize("text", ["password (optional): string", "Password (required): yes",
                                  "the password of the user", "password of bob: see the vault",
                                  "Password (prod): ${PROD_PASSWORD}", "API key (staging): <your key>"])
def test_a_qualified_noun_before_no_secret_stays(text):
    assert magihook.redact_credentials(text) == text


# An arrow or a spaced dash between a name and its value, as `password => X` is read.
ARROWED = ["password -> %s" % V, "password \u2192 %s" % V, "root password - %s" % V, "API_KEY -> %s" % SK,
           "db_password\u2192%s" % V]


@pytest.mark.parametrize("text", ARROWED)
def test_a_value_after_an_arrow_or_a_spaced_dash_is_redacted(text):
    assert redacted_everywhere(text, V if V in text else SK)


@pytest.mark.parametrize("text", ["password -> see below", "token -> refresh_token", "ctx->password->%s" % V,
                                  "password \u2192 <your password>", "api_key - see the docs",
                                  "password - ${PASSWORD}", "Rotate the token - done in PR 1234"])
def test_an_arrow_or_a_dash_before_no_secret_stays(text):
    assert magihook.redact_credentials(text) == text


# A Markdown table's row whose first cell is a credential's name: the settings a CLI prints, a
# document lists.
TABLE_ROWS = ["| API_KEY | %s |" % SK, "| DB_PASSWORD | %s |" % V,
              "| Name | Value |\n| --- | --- |\n| password | %s |\n| region | eu-west-1 |" % V,
              "| token | %s | the deploy token |" % V, '| API_KEY | "%s" |' % SK]


@pytest.mark.parametrize("text", TABLE_ROWS)
def test_a_table_cell_after_a_credential_name_is_redacted(text):
    assert redacted_everywhere(text, V if V in text else SK)


# A table of options (a type, a default, a description), a placeholder, a reference, a mask, a
# path, an identifier, the header and rule of a table, and a pipe in a shell command.
@pytest.mark.parametrize("text", [
    "| Name | Type | Description |\n| --- | --- | --- |\n| password | string | The user's password |",
    "| token | description |", "| --- | --- |", "| password | `string` |", "| password | true |",
    "| API_KEY | <your key> |", "| API_KEY | ${API_KEY} |", "| password | **** |", "| password | /etc/secret/path |",
    "| password | user_password |", "| token | Token used for auth |", "| api_key | string | no | API key |",
    "echo $API_KEY | base64", "cat token | %s" % V, "grep password | %s" % V])
def test_a_table_row_or_a_pipe_holding_no_secret_stays(text):
    assert magihook.redact_credentials(text) == text


# A YAML block scalar: the value on the line after its name's `|` or `>` (and a chomping sign).
BLOCKS = ["password: |\n  %s\n" % V, "password: >-\n  %s\n" % V, "db:\n  db_password: |-\n    %s\n  host: db\n" % V,
          "api_key: >\n  %s\n" % SK, "password: |\r\n  %s\r\n" % V]


@pytest.mark.parametrize("text", BLOCKS)
def test_a_yaml_block_scalar_after_a_credential_name_is_redacted(text):
    assert redacted_everywhere(text, V if V in text else SK)


# A paragraph, a reference, a placeholder, a script; and a block under a name of no credential.
@pytest.mark.parametrize("text", [
    "password: |\n  the user's password\n", "password: >-\n  ${PASSWORD}\n", "token: |\n  <your token>\n",
    "token: |\n  echo %s | login\n" % V, "description: |\n  %s\n" % V, "password: |\n  %s and more\n" % V])
def test_a_yaml_block_scalar_holding_no_secret_stays(text):
    assert magihook.redact_credentials(text) == text


# A name and its value in two tab-separated columns, a line each (`aws ... --output text`, a
# spreadsheet pasted as text).
COLUMNS = ["DB_PASSWORD\t%s" % V, "API_KEY\t%s\nREGION\teu-west-1\n" % SK, "name\tvalue\ndb_password\t%s\n" % V]


@pytest.mark.parametrize("text", COLUMNS)
def test_a_tab_separated_value_after_a_credential_name_is_redacted(text):
    assert redacted_everywhere(text, V if V in text else SK)


# A header, a count, a type, a word, a column after another, a line that goes on.
@pytest.mark.parametrize("text", ["token\tdescription", "DB_PASSWORD\tstring", "token\t12345678",
                                  "password\thunter", "x\tDB_PASSWORD\t%s" % V, "password\t%s\tcreated" % V,
                                  "\tToken\tstring"])
def test_tab_separated_columns_holding_no_secret_stay(text):
    assert magihook.redact_credentials(text) == text


def test_run_after_tool_result_redacts_every_layout(project):
    # The layouts above in one tool output, through `run` as the model is sent it.
    text = "\n".join(QUALIFIED + ARROWED + TABLE_ROWS + BLOCKS + COLUMNS)
    settings = write_settings(project, {"redact_tool_output": True})
    event = {"tool": {"name": "read", "call_id": "call_1"}, "request": {"path": "notes.md"},
             "result": {"tool_name": "read", "success": True, "content": "first line\n%s\nlast line\n" % text,
                        "metadata": {}}}
    done = run_cli("run", "--phase", "after_tool", "--config", str(settings), event=event, cwd=str(project))
    assert done.returncode == 0, done.stderr
    sent = json.dumps(done.json["tool_result"])
    assert "last line" in sent and V not in sent and SK not in sent
