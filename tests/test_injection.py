"""Provider context injection: all-or-nothing validation, audit statuses, order, records.

Hooks are real processes: `./emit.sh NAME` prints the bytes the test wrote to NAME.out.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import EXAMPLES, after_event, bash_event, require_tool, run_cli, write_script

import magihook

AUDIT_KEYS = ["schema_version", "phase", "label", "target_tool", "status", "item_count",
              "byte_count", "max_bytes", "hook_index"]
ITEM_KEYS = ["phase", "target_tool", "tool_call_id", "hook_index", "item_index", "role",
             "content"]


@pytest.fixture
def emit(project):
    """Write what hook NAME prints; returns the hook command."""
    write_script(project, "emit.sh", "#!/bin/sh\ncat >/dev/null\ncat \"$1.out\"\n")

    def emit_(name: str, stdout: bytes) -> str:
        (project / (name + ".out")).write_bytes(stdout)
        return "./emit.sh " + name

    return emit_


def items(*contents: str) -> bytes:
    return json.dumps({"context_items": [{"role": "user", "content": c} for c in contents]}
                      ).encode()


def run(project, phase, hooks, event=None, **globals_):
    settings = magihook.settings_from_document(
        {"hooks": dict({"enabled": True, phase: hooks}, **globals_)})
    if event is None:
        event = after_event() if phase == "after_tool" else (
            bash_event() if phase == "before_tool" else {"text": "message"})
    return magihook.run_phase(settings, phase, event, cwd=str(project))


def injecting(command, **fields):
    return dict({"label": "mem", "command": command, "provider_context_injection": True},
                **fields)


def kinds(result):
    return [(e["type"], e["payload"].get("status"), e["payload"]["hook_index"])
            for e in result["events"]]


def audits(result):
    return [e["payload"] for e in result["events"] if e["type"] == "hook_context_injection"]


def audit(status, item_count=0, byte_count=0, max_bytes=4096, hook_index=0, label="mem",
          phase="after_tool", target_tool="bash"):
    return {"schema_version": 1, "phase": phase, "label": label, "target_tool": target_tool,
            "status": status, "item_count": item_count, "byte_count": byte_count,
            "max_bytes": max_bytes, "hook_index": hook_index}


# --- validation: every status, exactly --------------------------------------------------------

USER = '{"role": "user", "content": %s}'


VALIDATION_CASES = [
    # Empty stdout and an empty list are "nothing to add", not errors.
    (b"", "success", 0, 0),
    (b" \n\t\r\n", "success", 0, 0),
    (b'{"context_items": []}', "success", 0, 0),
    (b'{"context_items": [{"role": "user", "content": "hi"}]}\n', "success", 1, 2),
    (b'\n {"context_items": [{"content": "hi", "role": "user"}]} \n', "success", 1, 2),
    (b"not json", "invalid_json", 0, 0),
    (b"\xff\xfe", "invalid_json", 0, 0),
    (b"\xc2\xa0", "invalid_json", 0, 0),  # NBSP is not JSON whitespace
    (b"NaN", "invalid_json", 0, 0),
    (b'{"context_items": []} {"context_items": []}', "invalid_json", 0, 0),
    (b'{"context_items": [' + (USER % '"\\ud800"').encode() + b"]}", "invalid_json", 0, 0),
    (b"[]", "invalid_shape", 0, 0),
    (b"null", "invalid_shape", 0, 0),
    (b'"text"', "invalid_shape", 0, 0),
    (b'{"items": []}', "invalid_shape", 0, 0),
    (b'{"context_items": [], "note": 1}', "invalid_shape", 0, 0),
    (b'{"context_items": {"role": "user", "content": "x"}}', "invalid_shape", 0, 0),
    (b'{"context_items": null}', "invalid_shape", 0, 0),
    (b'{"context_items": ["x"]}', "invalid_shape", 0, 0),
    (b'{"context_items": [{"content": "x"}]}', "invalid_shape", 0, 0),
    (b'{"context_items": [{"role": "user"}]}', "invalid_shape", 0, 0),
    (b'{"context_items": [{"role": "user", "content": "x", "name": "n"}]}',
     "invalid_shape", 0, 0),
    (b'{"context_items": [], "context_items": [{"role": "user", "content": "x"}]}',
     "invalid_shape", 0, 0),
    (b'{"context_items": [{"role": "user", "role": "user", "content": "x"}]}',
     "invalid_shape", 0, 0),
    (b'{"context_items": [{"role": "assistant", "content": "x"}]}', "unsupported_role", 0, 0),
    (b'{"context_items": [{"role": "system", "content": "x"}]}', "unsupported_role", 0, 0),
    (b'{"context_items": [{"role": "User", "content": "x"}]}', "unsupported_role", 0, 0),
    (b'{"context_items": [{"role": null, "content": "x"}]}', "unsupported_role", 0, 0),
    (b'{"context_items": [{"role": "user", "content": ""}]}', "empty_content", 0, 0),
    (b'{"context_items": [{"role": "user", "content": " \\n\\t\\u00a0"}]}',
     "empty_content", 0, 0),
    (b'{"context_items": [{"role": "user", "content": 5}]}', "empty_content", 0, 0),
    (b'{"context_items": [{"role": "user", "content": null}]}', "empty_content", 0, 0),
    (b'{"context_items": [{"role": "user", "content": ["a"]}]}', "empty_content", 0, 0),
    # All or nothing: a valid item before a bad one is not injected either.
    (items("ok", ""), "empty_content", 0, 0),
    # Items are checked in JSON order: the first bad item decides.
    (b'{"context_items": [{"role": "user", "content": ""}, {"role": "x", "content": "y"}]}',
     "empty_content", 0, 0),
    (b'{"context_items": [{"role": "x", "content": ""}, {"role": "user"}]}',
     "unsupported_role", 0, 0),
    # over_limit is judged only on a well-formed list.
    (b'{"context_items": [' + (USER % json.dumps("a" * 5000)).encode()
     + b', {"role": "bot", "content": "c"}]}', "unsupported_role", 0, 0),
    (items("a" * 4097), "over_limit", 0, 4097),
    (items("a" * 4096), "success", 1, 4096),
]


def test_every_status_is_named_and_tested():
    # hook_failed: test_run_core; not_delivered (valid items at an agent's end of turn):
    # test_interop's test_adapt_context_at_the_end_of_a_turn_is_recorded_not_delivered.
    tested = {case[1] for case in VALIDATION_CASES} | {"hook_failed", "not_delivered"}
    assert tested == set(magihook.INJECTION_STATUSES) == {
        "success", "invalid_json", "invalid_shape", "unsupported_role", "empty_content",
        "over_limit", "hook_failed", "not_delivered"}


@pytest.mark.parametrize("stdout, status, count, size", VALIDATION_CASES)
def test_validation_statuses(project, emit, stdout, status, count, size):
    result = run(project, "after_tool", [injecting(emit("h", stdout))])
    assert audits(result) == [audit(status, count, size)]
    assert kinds(result) == [("hook_lifecycle", "started", 0), ("hook_lifecycle", "success", 0),
                             ("hook_context_injection", status, 0)] + [
        ("provider_context_item", None, 0)] * count
    assert len(result["context_items"]) == count
    # Under policy warn, stdout that could not be injected is a warning (issue 16, item 8).
    assert (result["verdict"], result["warnings"]) == ("continue", [] if status == "success" else [
        "hook mem (after_tool #0, bash): its stdout was not injected: %s (expected "
        "{\"context_items\": [{\"role\": \"user\", \"content\": ...}]} within 4096 bytes)" % status])


def test_max_bytes_counts_utf8_bytes_of_content(project, emit):
    # 5 x "é" is 5 characters but 10 bytes; a character count would let 6 of them through.
    exact = run(project, "after_tool", [injecting(emit("h", items("ééééé")),
                                                  provider_context_max_bytes=10)])
    assert audits(exact) == [audit("success", 1, 10, max_bytes=10)]
    over = run(project, "after_tool", [injecting(emit("h", items("éééééé")),
                                                 provider_context_max_bytes=10)])
    assert audits(over) == [audit("over_limit", 0, 12, max_bytes=10)]
    # The limit is per hook, summed over its items; JSON escapes and keys do not count.
    summed = run(project, "after_tool", [injecting(emit("h", items("🙂", "\"\"\"\"\"\"\"")),
                                                   provider_context_max_bytes=11)])
    assert audits(summed) == [audit("success", 2, 11, max_bytes=11)]
    assert run(project, "after_tool", [injecting(emit("h", items("🙂", "\"" * 8)),
                                                 provider_context_max_bytes=11)]
               )["context_items"] == []


def test_global_max_bytes_is_inherited(project, emit):
    result = run(project, "after_tool", [injecting(emit("h", items("abcd")))],
                 provider_context_max_bytes=3)
    assert audits(result) == [audit("over_limit", 0, 4, max_bytes=3)]


# --- stdout is parsed only when the hook succeeded ----------------------------------------------

@pytest.mark.parametrize("command, fields, category", [
    ("./emit.sh good; exit 1", {"failure_policy": "ignore"}, "exit"),
    ("./emit.sh good; exit 1", {}, "exit"),
    ("./emit.sh good", {"stdout_max_bytes": 10}, "output-limit"),
    ("./emit.sh good; sleep 30", {"timeout_seconds": 1}, "timeout"),
    ("echo $HOME", {}, "runner"),
])
def test_failed_hook_injects_nothing(project, emit, command, fields, category):
    emit("good", items("would be valid"))
    result = run(project, "after_tool", [injecting(command, **fields)])
    failed = result["events"][1]["payload"]
    assert (failed["status"], failed["category"]) == ("failed", category)
    assert audits(result) == [audit("hook_failed")]
    assert (result["verdict"], result["context_items"]) == ("continue", [])
    assert "provider_context_item" not in [e["type"] for e in result["events"]]


# --- who injects --------------------------------------------------------------------------------

@pytest.mark.parametrize("globals_, fields", [
    ({"provider_context_injection": True}, {}),
    ({}, {"provider_context_injection": True}),
    ({"provider_context_injection": True}, {"provider_context_injection": True}),
])
def test_before_tool_never_injects_nor_audits(project, emit, globals_, fields):
    command = emit("h", items("from a before hook"))
    result = run(project, "before_tool", [dict({"label": "b", "command": command}, **fields)],
                 **globals_)
    assert kinds(result) == [("hook_lifecycle", "started", 0), ("hook_lifecycle", "success", 0)]
    assert (result["verdict"], result["context_items"]) == ("continue", [])


def test_injection_is_enabled_globally_or_per_hook(project, emit):
    command = emit("h", items("memory"))
    plain = {"label": "mem", "command": command}
    on_globally = run(project, "after_tool", [plain], provider_context_injection=True)
    assert on_globally["context_items"] == [{"role": "user", "content": "memory"}]
    off_here = run(project, "after_tool", [dict(plain, provider_context_injection=False)],
                   provider_context_injection=True)
    assert (kinds(off_here), off_here["context_items"]) == (
        [("hook_lifecycle", "started", 0), ("hook_lifecycle", "success", 0)], [])
    on_here = run(project, "after_tool", [injecting(command)])
    assert on_here["context_items"] == [{"role": "user", "content": "memory"}]
    off = run(project, "after_tool", [plain])
    assert (audits(off), off["context_items"]) == ([], [])


@pytest.mark.parametrize("phase, tool", [("after_assistant", "assistant"),
                                         ("after_reasoning", "reasoning")])
def test_message_phases_inject_like_after_tool(project, emit, phase, tool):
    result = run(project, phase, [injecting(emit("h", items("note")))],
                 event={"text": "hello", "context": {"turn_id": "turn-7"}})
    assert audits(result) == [audit("success", 1, 4, phase=phase, target_tool=tool)]
    assert result["events"][-1]["payload"] == {
        "phase": phase, "target_tool": tool, "tool_call_id": "%s-turn-7" % tool,
        "hook_index": 0, "item_index": 0, "role": "user", "content": "note"}
    assert result["context_items"] == [{"role": "user", "content": "note"}]


# --- order and records --------------------------------------------------------------------------

def test_hooks_append_in_config_order_items_in_json_order(project, emit):
    hooks = [injecting(emit("a", items("a0", "a1")), label="a"),
             injecting("exit 7", label="broken"),
             {"label": "quiet", "command": emit("q", items("never"))},
             injecting(emit("d", items("d0")), label="d")]
    result = run(project, "after_tool", hooks)
    assert kinds(result) == [
        ("hook_lifecycle", "started", 0), ("hook_lifecycle", "success", 0),
        ("hook_context_injection", "success", 0),
        ("hook_lifecycle", "started", 1), ("hook_lifecycle", "failed", 1),
        ("hook_diagnostic", "failed", 1), ("hook_context_injection", "hook_failed", 1),
        ("hook_lifecycle", "started", 2), ("hook_lifecycle", "success", 2),
        ("hook_lifecycle", "started", 3), ("hook_lifecycle", "success", 3),
        ("hook_context_injection", "success", 3),
        ("provider_context_item", None, 0), ("provider_context_item", None, 0),
        ("provider_context_item", None, 3),
    ]
    assert result["context_items"] == [{"role": "user", "content": c} for c in ("a0", "a1", "d0")]
    records = [e for e in result["events"] if e["type"] == "provider_context_item"]
    assert [list(e["payload"]) for e in records] == [ITEM_KEYS] * 3
    assert [(e["payload"]["hook_index"], e["payload"]["item_index"], e["payload"]["content"])
            for e in records] == [(0, 0, "a0"), (0, 1, "a1"), (3, 0, "d0")]
    assert records[0]["payload"] == {"phase": "after_tool", "target_tool": "bash",
                                     "tool_call_id": "call_1", "hook_index": 0, "item_index": 0,
                                     "role": "user", "content": "a0"}
    for record in (e for e in result["events"] if e["type"] == "hook_context_injection"):
        assert list(record) == ["type", "timestamp", "payload"]
        assert list(record["payload"]) == AUDIT_KEYS


def test_audit_never_holds_content(project, emit):
    result = run(project, "after_tool", [injecting(emit("h", items("SECRET-MEMORY-TEXT")))])
    local = [e for e in result["events"] if e["type"] != "provider_context_item"]
    assert "SECRET-MEMORY-TEXT" not in json.dumps(local)
    rejected = run(project, "after_tool", [injecting(emit("h", b'{"context_items": '
                                                               b'[{"role": "bot", "content": '
                                                               b'"SECRET-MEMORY-TEXT"}]}'))])
    assert "SECRET-MEMORY-TEXT" not in json.dumps(rejected)


def test_a_later_failing_hook_leaves_no_items_recorded(project, emit):
    hooks = [injecting(emit("a", items("seen by nobody"))),
             {"label": "gate", "command": "exit 1", "failure_policy": "fail"}]
    result = run(project, "after_tool", hooks)
    assert result["verdict"] == "fail"
    assert result["context_items"] == []
    assert [e["type"] for e in result["events"]] == [
        "hook_lifecycle", "hook_lifecycle", "hook_context_injection", "hook_lifecycle",
        "hook_lifecycle", "hook_diagnostic"]
    assert audits(result) == [audit("success", 1, 14)]


def test_a_failing_injecting_hook_with_policy_fail_is_audited(project):
    result = run(project, "after_tool", [injecting("exit 1", failure_policy="fail")])
    assert result["verdict"] == "fail"
    assert [e["type"] for e in result["events"]] == [
        "hook_lifecycle", "hook_lifecycle", "hook_diagnostic", "hook_context_injection"]
    assert audits(result) == [audit("hook_failed")]


# --- the shipped memory-after example, end to end (README "Provider context injection") ---------

def test_memory_after_example_end_to_end(tmp_path):
    require_tool("jq", "the spec's scripts use jq")
    examples = tmp_path / "examples"
    shutil.copytree(EXAMPLES, examples, ignore=shutil.ignore_patterns(".magi-hooks"))
    (examples / ".magi-hooks").mkdir()
    (examples / ".magi-hooks" / "memory.txt").write_text("The build uses make, not npm.\n")
    session = tmp_path / "sessions" / "s.jsonl"
    result = run_cli("run", "--phase", "after_tool", "--config", "settings.json", "--session",
                     str(session), stdin=(examples / "events" / "after-bash.json").read_bytes(),
                     cwd=examples)
    assert result.returncode == 0
    assert result.json["context_items"] == [
        {"role": "user", "content": "The build uses make, not npm."}]
    lines = [json.loads(line) for line in session.read_text().splitlines()]
    assert lines == result.json["events"]
    assert [(e["type"], e["payload"]["label"] if "label" in e["payload"] else None)
            for e in lines][-2:] == [("hook_context_injection", "memory-after"),
                                     ("provider_context_item", None)]
    assert lines[-2]["payload"] == audit("success", 1, 29, label="memory-after", hook_index=2)
