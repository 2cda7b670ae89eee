"""Property tests (hypothesis) over generated events and settings, through the Python API.

- The result is always one JSON object of DESIGN.md's shape, whatever the hooks do.
- In redacted mode no string of the request (nor of the result, the message text or the
  context) and no hook output reaches events, warnings, display rows or error messages, except
  the provider context items a hook validly injects, which are recorded by design.
- Any bytes on stdin give a result or one InputError, never another exception.

Strings that must not leak carry a marker of random letters drawn once per run (outside
hypothesis, which would happily shrink it to "aaaa"), at both ends, so a copy of any part of
such a string would show it.
"""

from __future__ import annotations

import json
import random
import re
import string

import pytest
from conftest import write_script
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import magihook

_random = random.SystemRandom()
REQUEST_MARK = "".join(_random.choice(string.ascii_lowercase) for _ in range(16))
OUTPUT_MARK = "".join(_random.choice(string.ascii_lowercase) for _ in range(16))

PROCESS_SETTINGS = settings(max_examples=60, deadline=None,
                            suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                   HealthCheck.too_slow])

RESULT_KEYS = ["schema", "schema_version", "phase", "tool", "verdict", "tool_result",
               "context_items", "events", "warnings", "display"]
EVENT_PAYLOAD_KEYS = {
    "hook_lifecycle": list(magihook.LIFECYCLE_KEYS),
    "hook_diagnostic": list(magihook.LIFECYCLE_KEYS),
    "hook_context_injection": list(magihook.INJECTION_AUDIT_KEYS),
    "provider_context_item": ["phase", "target_tool", "tool_call_id", "hook_index",
                              "item_index", "role", "content"],
}
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
INJECTED = "context from the hook " + OUTPUT_MARK

# The hook menu: every way a hook can behave that does not take a timeout to show.
SCRIPTS = {
    "noisy.sh": "printf '%s' >&2\nprintf '%s'\n" % (OUTPUT_MARK, OUTPUT_MARK),
    "noisy-fail.sh": "printf '%s\\xff\\x00\\x1b[31m' >&2\nprintf '%s'\nexit 9\n"
                     % (OUTPUT_MARK, OUTPUT_MARK),
    "echo-payload.sh": "tee /dev/stderr\n",  # hands the (redacted) payload back, twice
    "inject.sh": "cat >/dev/null\nprintf '%s'\n" % json.dumps(
        {"context_items": [{"role": "user", "content": INJECTED}]}),
    "inject-bad-role.sh": "printf '%s'\n" % json.dumps(
        {"context_items": [{"role": "system", "content": OUTPUT_MARK}]}),
    "inject-too-big.sh": "printf '%s'\n" % json.dumps(
        {"context_items": [{"role": "user", "content": OUTPUT_MARK * 1100}]}),  # > 16384 bytes
    "flood.sh": "head -c 70000 /dev/zero | tr '\\0' 'x'\nprintf '%s'\n" % OUTPUT_MARK,
    "die.sh": "printf '%s'\nkill -KILL $$\n" % OUTPUT_MARK,
}
COMMANDS = ["true", "exit 7", "./missing.sh", "echo $HOME", "cd ..", "kill -KILL 0"] + [
    "./" + name for name in SCRIPTS]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hooks")
    for name, body in SCRIPTS.items():
        write_script(folder, name, "#!/bin/bash\n" + body)
    return folder


# --- strategies ---------------------------------------------------------------------------------

# Text with anything in it: controls, NUL, escapes, non-BMP, lone surrogates.
ANY_TEXT = st.text(st.characters(blacklist_categories=()), max_size=20)


def marked(text: str) -> str:
    return REQUEST_MARK + text + REQUEST_MARK


MARKED = ANY_TEXT.map(marked)
SCALARS = st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats(
    allow_nan=False, allow_infinity=False) | MARKED
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    MARKED, inner, max_size=3), max_leaves=12)
SENSITIVE_KEYS = st.sampled_from(["command", "cmd", "content", "input", "stdout", "stderr",
                                  "output", "path", "token", "password", "authorization"])
REQUESTS = st.dictionaries(SENSITIVE_KEYS | MARKED, JSON_VALUES, max_size=5)
TOOLS = st.sampled_from(list(magihook.BUILTIN_TOOLS) + ["shell", "mcp_fetch"])
CALL_IDS = st.none() | st.sampled_from(["call_1", "call-xyz"])
POLICIES = st.sampled_from(["ignore", "warn", "fail"])


@st.composite
def contexts(draw, cwd):
    context = {"cwd": cwd}
    for key in ("session_id", "session_path", "provider_id", "model_id", "agent_id",
                "message_id"):
        if draw(st.booleans()):
            context[key] = draw(MARKED)
    context["turn_id"] = draw(st.sampled_from(["turn-0", "turn-7"]))
    context["invocation_mode"] = draw(st.none() | st.sampled_from(magihook.INVOCATION_MODES))
    context["subagent"] = draw(st.booleans())
    return context


@st.composite
def events(draw, phase, cwd):
    event = {"context": draw(contexts(cwd))}
    if phase in magihook.MESSAGE_PHASES:
        text = draw(MARKED)
        event.update({"text": text} if draw(st.booleans()) else {"request": {"text": text}})
        return event
    event["tool"] = {"name": draw(TOOLS), "call_id": draw(CALL_IDS)}
    event["request"] = draw(REQUESTS)
    if phase == "after_tool":
        event["result"] = draw(st.dictionaries(
            st.sampled_from(["tool_name", "success", "content", "metadata"]) | MARKED,
            JSON_VALUES, max_size=4))
    return event


@st.composite
def hook_definitions(draw, phase, payload):
    hook = {"command": draw(st.sampled_from(COMMANDS)), "label": draw(st.sampled_from(
        ["audit", "", "gate ✓"]))}
    policies = ["ignore", "warn", "fail"] + (["block"] if phase == "before_tool" else [])
    optional = {
        "failure_policy": st.sampled_from(policies),
        "payload": st.just(payload) if payload else st.sampled_from(["redacted", "full"]),
        "stdout_max_bytes": st.sampled_from([1, 64, 8192, 65536]),
        "stderr_max_bytes": st.sampled_from([1, 8192, 65536]),
        "provider_context_injection": st.booleans(),
        "provider_context_max_bytes": st.sampled_from([1, 4096, 16384]),
        "include_tools": st.lists(TOOLS.filter(lambda name: name != "mcp_fetch"), max_size=2),
        "exclude_tools": st.lists(TOOLS.filter(lambda name: name != "mcp_fetch"), max_size=1),
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            hook[key] = draw(strategy)
    if payload:
        hook["payload"] = payload
    return hook


@st.composite
def settings_documents(draw, phase, payload=None):
    hooks = {
        "enabled": draw(st.booleans() | st.just(True)),
        "show_in_tui": draw(st.booleans()),
        "injected_content": {"show_in_transcript": draw(st.booleans()),
                             "show_in_activity_tree": draw(st.booleans()),
                             "style": draw(st.sampled_from(["content", "metadata"]))},
        "failure_policy": draw(POLICIES),
        "provider_context_injection": draw(st.booleans()),
        "payload": payload or draw(st.sampled_from(["redacted", "full"])),
        phase: draw(st.lists(hook_definitions(phase, payload), max_size=3)),
    }
    return {"hooks": hooks}


@st.composite
def cases(draw, cwd, payload=None):
    phase = draw(st.sampled_from(magihook.PHASES))
    document = draw(settings_documents(phase, payload))
    return phase, magihook.settings_from_document(document), draw(events(phase, cwd))


# --- properties ---------------------------------------------------------------------------------

def assert_result_shape(result, phase, event):
    line = magihook.dump_json(result)
    assert b"\n" not in line
    parsed = json.loads(line)
    assert isinstance(parsed, dict) and list(parsed) == RESULT_KEYS
    assert (parsed["schema"], parsed["schema_version"], parsed["phase"]) == (
        "magihook.result", 1, phase)
    verdict = result["verdict"]
    assert verdict in (("continue", "block", "fail") if phase == "before_tool" else
                       ("continue", "fail"))
    assert magihook.exit_code_for(result) == {"continue": 0, "block": 3, "fail": 4}[verdict]
    tool = result["tool"]
    if phase in magihook.MESSAGE_PHASES:
        name = magihook.MESSAGE_TOOLS[phase]
        turn = (event.get("context") or {}).get("turn_id") or "turn-0"
        assert tool == {"name": name, "call_id": "%s-%s" % (name, turn)}
    else:
        assert tool == {"name": magihook.canonical_tool_name(event["tool"]["name"]),
                        "call_id": event["tool"].get("call_id")}
    if phase == "after_tool":
        assert result["tool_result"] == event["result"]
    elif verdict == "block":
        assert result["tool_result"] == {
            "tool_name": tool["name"], "call_id": tool["call_id"], "success": False,
            "blocked": True, "content": magihook.BLOCKED_CONTENT}
    else:
        assert result["tool_result"] is None
    if verdict != "continue":
        assert result["context_items"] == []
    for item in result["context_items"]:
        assert item == {"role": "user", "content": INJECTED}
    for record in result["events"]:
        assert list(record) == ["type", "timestamp", "payload"]
        assert TIMESTAMP.match(record["timestamp"])
        assert list(record["payload"]) == EVENT_PAYLOAD_KEYS[record["type"]]
        if "target_ran" in record["payload"]:
            assert record["payload"]["target_ran"] is (phase != "before_tool")
    assert all(isinstance(line, str) and "\n" not in line for line in result["warnings"])
    assert all(isinstance(row, dict) and isinstance(row["text"], str) for row in result["display"])


@PROCESS_SETTINGS
@given(data=st.data())
def test_result_is_always_one_json_object_of_the_documented_shape(workdir, data):
    phase, hook_settings, event = data.draw(cases(str(workdir)))
    result = magihook.run_phase(hook_settings, phase, event)
    assert_result_shape(result, phase, event)


def without_injected_content(result):
    """Events, warnings and display with what the design lets through taken out: the validly
    injected items (recorded as provider_context_item, shown as display content)."""
    events = [record for record in result["events"] if record["type"] != "provider_context_item"]
    display = [{key: value for key, value in row.items() if key != "content"}
               for row in result["display"]]
    return json.dumps([events, result["warnings"], display], ensure_ascii=False)


@PROCESS_SETTINGS
@given(data=st.data())
def test_redacted_mode_leaks_no_request_string_and_no_hook_output(workdir, data):
    phase, hook_settings, event = data.draw(cases(str(workdir), payload="redacted"))
    result = magihook.run_phase(hook_settings, phase, event)
    visible = without_injected_content(result)
    assert REQUEST_MARK not in visible
    assert OUTPUT_MARK not in visible
    recorded = [record["payload"]["content"] for record in result["events"]
                if record["type"] == "provider_context_item"]
    assert recorded == [item["content"] for item in result["context_items"]]
    for row in result["display"]:
        assert REQUEST_MARK not in json.dumps(row.get("content", []), ensure_ascii=False)


# --- errors -------------------------------------------------------------------------------------

# Keys of the event's own objects are structure, and an unknown one is named in the error
# ("$.context.shell: unknown context key"), so wrong-typed objects get plain keys.
def assert_one_line(exc):
    # As main() prints it: an unknown key holding a newline is named, so the line is sanitized.
    assert "\n" not in magihook.sanitize_message(str(exc), 500)


WRONG = st.none() | st.booleans() | st.integers() | MARKED | st.lists(MARKED, max_size=2) | (
    st.dictionaries(st.sampled_from(["name", "text", "x"]), MARKED, max_size=2))


@st.composite
def broken_events(draw, cwd):
    """A valid event with one field, at any level, replaced by a value of another type."""
    phase = draw(st.sampled_from(magihook.PHASES))
    event = draw(events(phase, cwd))
    paths = [()] + [(key,) for key in event] + [
        (key, inner) for key, value in event.items() if isinstance(value, dict)
        for inner in value]
    path = draw(st.sampled_from(paths))
    value = draw(WRONG)
    if not path:
        return phase, value
    target = event
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return phase, event


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_errors_never_echo_request_strings(tmp_path, data):
    phase, event = data.draw(broken_events(str(tmp_path)))
    inert = magihook.Settings()
    try:
        result = magihook.run_phase(inert, phase, event)
    except magihook.InputError as exc:
        assert REQUEST_MARK not in str(exc)
        assert_one_line(exc)
    else:
        assert_result_shape(result, phase, event)


JSON_TEXT = JSON_VALUES.map(lambda value: json.dumps(value, ensure_ascii=False))


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")  # a lone surrogate makes invalid UTF-8


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=64) | JSON_TEXT.map(encode) | st.builds(
    lambda text, cut, junk: encode(text)[:cut] + junk,
    JSON_TEXT, st.integers(0, 200), st.binary(max_size=4)))
def test_any_input_bytes_give_a_result_or_one_input_error(raw):
    try:
        document = magihook.decode_event(raw)
        result = magihook.run_phase(magihook.Settings(), "before_tool", document)
    except magihook.InputError as exc:
        assert_one_line(exc)
    else:
        assert_result_shape(result, "before_tool", document)
