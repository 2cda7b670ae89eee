"""The hook payload: the 1 MiB stdin cap, payload_ref spill files, omitted_too_large, affected_paths,
and the message phases."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile

import pytest
from conftest import WENT_ON, bash_event, run_cli, write_script, write_settings

import magihook

MIB = 1024 * 1024
CAPTURE = """#!/bin/sh
cat > stdin.json
ref=$(jq -r '.payload_ref.path // empty' stdin.json)
if [ -n "$ref" ]; then
  cp "$ref" ref-copy.json
  stat -c '%a' "$ref" > ref-mode.txt
  stat -c '%a' "$(dirname "$ref")" > ref-dir-mode.txt
fi
"""


def run_capture(project, event, payload="full", phase="before_tool", env=None, **hook):
    write_script(project, "cap.sh", CAPTURE)
    config = write_settings(project, {"enabled": True, phase: [
        dict({"label": "cap", "command": "./cap.sh", "payload": payload}, **hook)]})
    return run_cli("run", "--phase", phase, "--config", str(config), event=event, cwd=project,
                   env=env)


def stdin_size(event, project, payload="full"):
    """Inline stdin size for this event, from the real envelope builder."""
    settings = magihook.settings_from_document({"hooks": {"enabled": True, "before_tool": [
        {"label": "cap", "command": "./cap.sh", "payload": payload}]}})
    tool_event = magihook.parse_event("before_tool", event, str(project))
    bodies = magihook.payload_bodies(settings.before_tool[0], tool_event)
    envelope = magihook.payload_envelope(settings.before_tool[0], tool_event, bodies, {
        "inline": True, "status": "inline", "data": bodies}, None, bodies)
    return len(magihook.dump_json(envelope))


def event_of_stdin_size(target, project):
    """An event whose inline envelope is exactly `target` bytes: the request fills it two bytes
    at a time (it appears twice), context.agent_id (once) sets the last byte."""
    event = bash_event("", context={"agent_id": "a"})
    base = stdin_size(event, project)
    event["request"]["command"] = "x" * ((target - base) // 2)
    event["context"]["agent_id"] = "a" * (1 + (target - base) % 2)
    assert stdin_size(event, project) == target
    return event


@pytest.mark.parametrize("size, status", [
    (MIB - 1, "inline"), (MIB, "inline"), (MIB + 1, "referenced"),
])
def test_stdin_cap_boundary(project, size, status):
    result = run_capture(project, event_of_stdin_size(size, project))
    assert result.returncode == 0
    received = (project / "stdin.json").read_bytes()
    payload = json.loads(received)
    assert payload["payload"]["status"] == status
    assert len(received) <= MIB
    if status == "inline":
        assert len(received) == size


def test_payload_ref_file_is_private_exact_and_removed(project, tmp_path):
    spill_root = tmp_path / "spill"
    spill_root.mkdir()
    event = bash_event("z" * (2 * MIB))
    result = run_capture(project, event, env=dict(os.environ, TMPDIR=str(spill_root)))
    assert result.returncode == 0
    payload = json.loads((project / "stdin.json").read_text())
    ref = payload["payload_ref"]
    copy = (project / "ref-copy.json").read_bytes()
    assert payload["payload"] == {"inline": False, "status": "referenced"}
    assert ref["path"].startswith(str(spill_root) + os.sep)
    assert ref == {"path": ref["path"], "bytes": len(copy), "payload_mode": "full",
                   "media_type": "application/json",
                   "digest_sha256": "sha256:" + hashlib.sha256(copy).hexdigest()}
    assert json.loads(copy) == {"request": event["request"]}
    summary = {"status": "moved_to_payload_ref", "original_bytes": len(copy),
               "omitted_fields": ["request"]}
    assert payload["request"] == summary
    assert "data" not in payload["payload"]
    assert (project / "ref-mode.txt").read_text().strip() == "600"
    assert (project / "ref-dir-mode.txt").read_text().strip() == "700"
    assert list(spill_root.iterdir()) == []


def test_after_tool_spill_moves_request_and_result(project, tmp_path):
    event = {"tool": {"name": "read", "call_id": "c"}, "request": {"path": "big.txt"},
             "result": {"tool_name": "read", "success": True, "content": "r" * (2 * MIB),
                        "metadata": {}}}
    run_capture(project, event, phase="after_tool")
    payload = json.loads((project / "stdin.json").read_text())
    assert payload["payload"]["status"] == "referenced"
    assert payload["request"]["omitted_fields"] == payload["result"]["omitted_fields"] == [
        "request", "result"]
    assert json.loads((project / "ref-copy.json").read_text()) == {
        "request": event["request"], "result": event["result"]}


def test_redacted_mode_spills_a_huge_unredacted_field(project):
    event = {"tool": {"name": "ffgrep", "call_id": "c"}, "request": {"pattern": "p" * (2 * MIB)}}
    run_capture(project, event, payload="redacted")
    payload = json.loads((project / "stdin.json").read_text())
    assert payload["payload"]["status"] == "referenced"
    assert payload["payload_ref"]["payload_mode"] == "redacted"
    assert payload["payload_mode"] == "redacted"


@pytest.mark.parametrize("command, category", [
    ("sleep 30", "timeout"), ("yes", "output-limit"), ("exit 7", "exit")])
def test_payload_ref_removed_however_the_hook_ends(project, tmp_path, command, category):
    spill_root = tmp_path / "spill"
    spill_root.mkdir()
    config = write_settings(project, {"enabled": True, "before_tool": [
        {"command": command, "payload": "full", "timeout_seconds": 1}]})
    result = run_cli("run", "--phase", "before_tool", "--config", str(config),
                     event=bash_event("q" * (2 * MIB)), cwd=project,
                     env=dict(os.environ, TMPDIR=str(spill_root)))
    assert result.events("hook_lifecycle")[-1]["payload"]["category"] == category
    assert list(spill_root.iterdir()) == []


def test_past_the_hard_cap_is_omitted_too_large(project):
    event = bash_event("o" * (magihook.PAYLOAD_REF_MAX_BYTES + 10))
    run_capture(project, event)
    payload = json.loads((project / "stdin.json").read_text())
    size = len(magihook.dump_json({"request": event["request"]}))
    assert payload["payload"] == {"inline": False, "status": "omitted_too_large"}
    assert payload["payload_ref"] is None
    assert payload["request"] == {"status": "omitted_too_large", "original_bytes": size,
                                  "omitted_fields": ["request"],
                                  "reason": "exceeds_payload_ref_max_bytes"}
    assert not (project / "ref-copy.json").exists()


def test_unwritable_spill_folder_is_omitted_too_large(project, monkeypatch):
    not_a_folder = project / "file"
    not_a_folder.write_text("")
    monkeypatch.setattr(tempfile, "tempdir", str(not_a_folder))
    write_script(project, "cap.sh", "#!/bin/sh\ncat > stdin.json\n")
    settings = magihook.settings_from_document({"hooks": {"enabled": True, "before_tool": [
        {"command": "./cap.sh", "payload": "full"}]}})
    magihook.run_phase(settings, "before_tool", bash_event("u" * (2 * MIB)), cwd=str(project))
    payload = json.loads((project / "stdin.json").read_text())
    assert payload["payload"]["status"] == "omitted_too_large"
    assert payload["request"]["reason"] == "payload_ref_unavailable"


# --- affected_paths -----------------------------------------------------------------------------

def read_event(path):
    return {"tool": {"name": "read", "call_id": "c"}, "request": {"path": path}}


def test_symlinks_resolving_outside_cwd_are_omitted(project, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    (project / "escape").symlink_to(outside)
    (project / "inside.txt").write_text("x")
    (project / "alias").symlink_to(project / "inside.txt")
    for path, kept in (("escape", False), ("alias", True), (str(project / "inside.txt"), True),
                       (str(outside), False)):
        run_capture(project, read_event(path), payload="redacted")
        paths = json.loads((project / "stdin.json").read_text())["affected_paths"]
        assert paths == ([{"path": path, "kind": "read_target", "source": "request.path"}]
                         if kept else []), path


@pytest.mark.parametrize("tool, kind", [("read", "read_target"), ("ffgrep", "read_target"),
                                        ("write", "write_target"), ("hash_edit", "write_target"),
                                        ("bash", None), ("web_search", None)])
def test_affected_path_kinds(project, tool, kind):
    event = {"tool": {"name": tool, "call_id": "c"},
             "request": {"path": "a.txt", "command": "cat /etc/passwd b.txt"}}
    run_capture(project, event, payload="redacted")
    paths = json.loads((project / "stdin.json").read_text())["affected_paths"]
    assert paths == ([{"path": "a.txt", "kind": kind, "source": "request.path"}] if kind else [])


# --- message phases -----------------------------------------------------------------------------

@pytest.mark.parametrize("phase, tool", [("after_assistant", "assistant"),
                                         ("after_reasoning", "reasoning")])
def test_message_phase_payload(project, phase, tool):
    text = "I will now run the tests.\nThen summarize."
    run_capture(project, {"text": text, "context": {"turn_id": "turn-7"}}, payload="redacted",
                phase=phase, include_tools=["write"])
    payload = json.loads((project / "stdin.json").read_text())
    assert payload["tool"] == {"name": tool, "call_id": "%s-turn-7" % tool}
    assert payload["request"] == {"text": text}
    assert payload["payload"] == {"inline": True, "status": "inline",
                                  "data": {"request": {"text": text}}}
    assert "result" not in payload
    assert payload["affected_paths"] == []


def test_message_phase_default_turn_id(project):
    result = run_capture(project, {"request": {"text": "hi"}}, phase="after_reasoning")
    assert result.json["tool"] == {"name": "reasoning", "call_id": "reasoning-turn-0"}


# --- redaction end to end -----------------------------------------------------------------------

GITHUB = "ghp_" + "Zq8xWm3Kt7Lp2Vn9Rb4Yc6Hd1Jf5Gs0Ae3Tu"
JWT = ("eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "Qm9ndXNTaWduYXR1cmVWYWx1ZUhlcmU")


def test_redacted_payload_holds_no_credential(project):
    event = {"tool": {"name": "web_search", "call_id": "c"},
             "request": {"query": "why does %s fail" % GITHUB, "max_tokens": 50,
                         "headers": {"Authorization": "Bearer " + JWT, "x-api-key": "k" * 20,
                                     "Accept": "text/html"},
                         "session_id": "sess-1", "options": [{"clientSecret": "s3cr3t-value"}]},
             "result": {"tool_name": "web_search", "success": True, "content": GITHUB,
                        "metadata": {"url": "https://bob:hunter2pass@example.com/x",
                                     "note": "token=%s" % JWT}}}
    run_capture(project, event, payload="redacted", phase="after_tool")
    received = (project / "stdin.json").read_text()
    for secret in (GITHUB, JWT, "k" * 20, "s3cr3t-value", "hunter2pass"):
        assert secret not in received
    payload = json.loads(received)
    request = payload["request"]
    assert request["query"] == "why does <redacted:credential> fail"
    assert request["max_tokens"] == 50
    assert request["session_id"] == "sess-1"
    assert request["headers"]["Authorization"] == {"redacted": True, "kind": "credential",
                                                   "bytes": len("Bearer " + JWT)}
    assert request["headers"]["x-api-key"] == {"redacted": True, "kind": "credential", "bytes": 20}
    assert request["headers"]["Accept"] == "text/html"
    assert request["options"] == [{"clientSecret": {"redacted": True, "kind": "credential",
                                                    "bytes": 12}}]
    assert payload["result"]["content"] == "<redacted:tool-output>"
    assert payload["result"]["metadata"]["url"] == "https://bob:<redacted:credential>@example.com/x"
    assert JWT not in payload["result"]["metadata"]["note"]


def test_a_credential_shaped_key_of_the_result_is_redacted_in_place(project):
    # A result's own key can hold a credential: it comes back renamed, and the call goes on.
    event = {"tool": {"name": "bash", "call_id": "c"}, "request": {"command": "ls"},
             "result": {"content": "x", "password=hunter2xyz": 1, "exit_code": 0}}
    result = run_capture(project, event, payload="redacted", phase="after_tool")
    assert result.returncode == 0
    received = (project / "stdin.json").read_text()
    assert "hunter2xyz" not in received
    assert json.loads(received)["result"] == {
        "content": "<redacted:tool-output>",
        "password=<redacted:credential>": {"redacted": True, "kind": "credential", "bytes": 1},
        "exit_code": 0}


def test_the_envelope_s_ids_and_folders_are_redacted_in_redacted_mode(project):
    # The agent sets them; a credential in one once reached a redacted hook as it was, while the
    # records redacted the same call id.
    context = {"session_id": GITHUB, "agent_id": "password=hunter2xyz", "turn_id": "token=" + GITHUB,
               "cwd": str(project)}
    event = dict(bash_event(call_id="password=hunter2xyz"), context=context)
    run_capture(project, event, payload="redacted")
    received = json.loads((project / "stdin.json").read_text())
    assert received["tool"]["call_id"] == "password=<redacted:credential>"
    assert {key: received["context"][key] for key in ("session_id", "agent_id", "turn_id", "cwd")} == {
        "session_id": "<redacted:credential>", "agent_id": "password=<redacted:credential>",
        "turn_id": "token=<redacted:credential>", "cwd": str(project)}
    run_capture(project, event, payload="full")
    received = json.loads((project / "stdin.json").read_text())
    assert (received["tool"]["call_id"], received["context"]["session_id"]) == (
        "password=hunter2xyz", GITHUB)


def test_full_payload_keeps_credentials_for_trusted_hooks(project):
    event = {"tool": {"name": "web_search", "call_id": "c"}, "request": {"query": GITHUB}}
    run_capture(project, event, payload="full")
    assert json.loads((project / "stdin.json").read_text())["request"] == {"query": GITHUB}


def test_message_text_credentials_are_redacted(project):
    run_capture(project, {"text": "use export OPENAI_API_KEY=%s now" % GITHUB},
                payload="redacted", phase="after_assistant")
    text = json.loads((project / "stdin.json").read_text())["request"]["text"]
    assert GITHUB not in text and text.startswith("use export OPENAI_API_KEY=<redacted:credential>")


def test_warning_lines_are_sanitized(project):
    label = "gate\x1b[31m\nred " + GITHUB
    config = write_settings(project, {"enabled": True, "before_tool": [
        {"label": label, "command": "exit 5"}]})
    result = run_cli("run", "--phase", "before_tool", "--config", str(config), event=bash_event(),
                     cwd=project)
    warning = result.json["warnings"][0]
    assert warning == ("hook gate red <redacted:credential> (before_tool #0, bash) failed: exit: "
                       "hook exited with status 5" + WENT_ON)
    assert result.events("hook_diagnostic")[0]["payload"]["label"] == "gate red <redacted:credential>"


def test_plural_and_name_value_credentials_are_redacted(project):
    event = {"tool": {"name": "bash", "call_id": "c"},
             "request": {"passwords": ["hunter2hunter2"], "refresh_tokens": ["r3fr3sh-value"],
                         "cookies": {"sid": "s3ss10n"}, "max_tokens": 9, "prompt_tokens": 3,
                         "env": [{"name": "API_KEY", "value": "s3cr3tvalue123"},
                                 {"name": "HOME", "value": "/home/u"}],
                         "argv": ["psql", "--password", "pg-s3cret", "--user", "bob"],
                         "upper": {"Name": "DB_PASSWORD", "Value": "upper-s3cret"},
                         "keyed": {"name": "x", "key": "PASSWORD", "value": "keyed-s3cret"},
                         "numeric": ["--pin-password", 987654321]}}
    run_capture(project, event, payload="redacted")
    request = json.loads((project / "stdin.json").read_text())["request"]
    for secret in ("hunter2hunter2", "r3fr3sh-value", "s3ss10n", "s3cr3tvalue123", "pg-s3cret",
                   "upper-s3cret", "keyed-s3cret", "987654321"):
        assert secret not in json.dumps(request)
    assert (request["max_tokens"], request["prompt_tokens"]) == (9, 3)
    assert request["env"][1] == {"name": "HOME", "value": "/home/u"}
    assert request["argv"][:2] == ["psql", "--password"] and request["argv"][3:] == ["--user", "bob"]


def test_affected_path_holding_a_credential_is_left_out_when_redacted(project):
    name = "notes-" + GITHUB + ".txt"
    event = {"tool": {"name": "write", "call_id": "c"}, "request": {"path": name, "content": "x"}}
    run_capture(project, event, payload="redacted")
    payload = json.loads((project / "stdin.json").read_text())
    assert payload["affected_paths"] == []
    assert payload["request"]["path"] == "notes-<redacted:credential>.txt"
    run_capture(project, event, payload="full")
    assert json.loads((project / "stdin.json").read_text())["affected_paths"][0]["path"] == name


def test_unencodable_path_and_nul_cwd(project):
    event = {"tool": {"name": "write", "call_id": "c"}, "request": {"path": "a\ud800.txt"}}
    result = run_capture(project, event, payload="redacted")
    assert result.events("hook_lifecycle")[-1]["payload"]["status"] == "success"
    assert json.loads((project / "stdin.json").read_text())["affected_paths"] == []
    bad = bash_event(context={"cwd": "/tmp/x\x00y"})
    result = run_capture(project, bad)
    assert (result.returncode, result.stderr) == (2, "magihook: $.context.cwd: contains a NUL byte\n")
    result = run_capture(project, bash_event(context={"cwd": "/tmp/x\ud800"}))
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", "magihook: $.context.cwd: holds a character no path can be written with\n")


def test_payload_ref_folder_is_removed_with_what_the_hook_put_in_it(project, tmp_path):
    spill_root = tmp_path / "spill"
    spill_root.mkdir()
    write_script(project, "mk.sh", '#!/bin/sh\nref=$(jq -r .payload_ref.path)\n'
                                   'mkdir "$(dirname "$ref")/work"\ntouch "$(dirname "$ref")/work/x"\n')
    config = write_settings(project, {"enabled": True, "before_tool": [
        {"command": "./mk.sh", "payload": "full"}]})
    result = run_cli("run", "--phase", "before_tool", "--config", str(config),
                     event=bash_event("w" * (2 * MIB)), cwd=project,
                     env=dict(os.environ, TMPDIR=str(spill_root)))
    assert result.events("hook_lifecycle")[-1]["payload"]["status"] == "success"
    assert list(spill_root.iterdir()) == []
