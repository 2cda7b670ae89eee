"""Settings schema: schema.json == SETTINGS_SCHEMA, and both engines give the same exact answer."""

import copy
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import magihook  # noqa: E402

ENGINES = ("builtin", "jsonschema")
CMD = "./scripts/magi-hooks/secret-audit.sh"  # must never show up in a message

TOOLS_ENUM = (
    "must be one of 'read', 'bash', 'shell', 'hash_edit', 'write', 'ffgrep', "
    "'parallel_subagents', 'web_search', 'code_search'"
)
POLICY_ENUM = "must be one of 'ignore', 'warn', 'block', 'fail'"
PAYLOAD_ENUM = "must be one of 'redacted', 'full'"
DIALECT_ENUM = "must be one of 'magihook', 'claude-code', 'codex', 'gemini'"
AFTER_BLOCK = "'block' is only allowed for before_tool hooks"
INHERITED_BLOCK = (
    "failure_policy 'block' is inherited from $.hooks.failure_policy and is only allowed for "
    "before_tool hooks; set this hook's failure_policy to 'ignore', 'warn' or 'fail'"
)


def dialect_inherited(dialect, agent):
    return (
        "a hook with dialect '%s' receives %s's unredacted hook stdin, so it needs payload "
        "'full'; set this hook's payload to 'full' (the global $.hooks.payload is 'redacted')"
        % (dialect, agent)
    )


def dialect_set(dialect, agent):
    return (
        "a hook with dialect '%s' receives %s's unredacted hook stdin, so its payload must be "
        "'full', not 'redacted'" % (dialect, agent)
    )


def hooks(**fields):
    return {"hooks": fields}


def hook(**fields):
    definition = {"label": "audit", "command": CMD}
    definition.update(fields)
    return definition


def phase(name, *definitions, **global_fields):
    fields = dict(global_fields)
    fields[name] = list(definitions)
    return {"hooks": fields}


SPEC_EXAMPLE = {
    "hooks": {
        "enabled": True,
        "show_in_tui": True,
        "injected_content": {
            "show_in_transcript": False,
            "show_in_activity_tree": False,
            "style": "content",
        },
        "payload": "redacted",
        "timeout_seconds": 5,
        "stdout_max_bytes": 8192,
        "stderr_max_bytes": 8192,
        "provider_context_injection": False,
        "provider_context_max_bytes": 4096,
        "failure_policy": "warn",
        "before_tool": [
            {"label": "audit-before", "command": "./a.sh", "include_tools": ["bash", "write"]},
            {
                "label": "block-dangerous-bash",
                "command": "./b.sh",
                "payload": "full",
                "failure_policy": "block",
                "include_tools": ["bash"],
            },
        ],
        "after_tool": [
            {
                "label": "after-log",
                "command": "./c.sh",
                "failure_policy": "ignore",
                "exclude_tools": ["read", "ffgrep"],
                "provider_context_injection": True,
                "provider_context_max_bytes": 4096,
            }
        ],
        "after_assistant": [{"label": "m", "command": "./d.sh"}],
        "after_reasoning": [{"label": "r", "command": "./e.sh", "dialect": "magihook"}],
    },
    "tools": {"bash": {"absolute_paths": False}},
}

# (id, document, expected (json_path, message) or None)
MISSING_COMMAND = "missing command or args: give a shell command, or args: [PROGRAM, ARG...]"
CASES = [
    # -- valid documents --
    ("empty-file", {}, None),
    ("empty-hooks", {"hooks": {}}, None),
    ("spec-complete-example", SPEC_EXAMPLE, None),
    ("other-top-level-keys-ignored", {"model": "gpt", "theme": [1, 2], "hooks": {"enabled": True}}, None),
    ("tools-other-keys-ignored", {"tools": {"read": {"x": 1}, "bash": {"timeout": 3}}}, None),
    ("empty-label-allowed", phase("before_tool", hook(label="")), None),
    ("shell-is-a-tool-name", phase("before_tool", hook(include_tools=["shell"])), None),
    ("float-5.0-is-an-integer", hooks(timeout_seconds=5.0), None),
    ("timeout-edge-1", hooks(timeout_seconds=1), None),
    ("timeout-edge-60", phase("before_tool", hook(timeout_seconds=60)), None),
    ("stdout-edge-65536", hooks(stdout_max_bytes=65536), None),
    ("stderr-edge-1", phase("after_tool", hook(stderr_max_bytes=1)), None),
    ("context-edge-16384", phase("after_tool", hook(provider_context_max_bytes=16384)), None),
    ("before-tool-block-allowed", phase("before_tool", hook(failure_policy="block")), None),
    ("global-block-before-hook-inherits", phase("before_tool", hook(), failure_policy="block"), None),
    ("global-block-after-hook-overrides-warn",
     phase("after_tool", hook(failure_policy="warn"), failure_policy="block"), None),
    ("global-block-no-after-hooks", hooks(failure_policy="block", after_tool=[]), None),
    ("dialect-with-hook-payload-full", phase("before_tool", hook(dialect="gemini", payload="full")), None),
    ("dialect-with-global-payload-full",
     phase("after_tool", hook(dialect="claude-code"), payload="full"), None),
    ("dialect-magihook-redacted", phase("before_tool", hook(dialect="magihook", payload="redacted")), None),
    # -- top level, hooks, tools --
    ("top-level-array", [], ("$", "expected an object, got an array")),
    ("top-level-null", None, ("$", "expected an object, got null")),
    ("hooks-array", {"hooks": []}, ("$.hooks", "expected an object, got an array")),
    ("hooks-string", {"hooks": "on"}, ("$.hooks", "expected an object, got a string")),
    ("tools-not-object", {"tools": "bash"}, ("$.tools", "expected an object, got a string")),
    ("tools-bash-not-object", {"tools": {"bash": []}}, ("$.tools.bash", "expected an object, got an array")),
    ("absolute-paths-string", {"tools": {"bash": {"absolute_paths": "no"}}},
     ("$.tools.bash.absolute_paths", "expected a boolean, got a string")),
    ("absolute-paths-int", {"tools": {"bash": {"absolute_paths": 0}}},
     ("$.tools.bash.absolute_paths", "expected a boolean, got an integer")),
    # -- global fields --
    ("enabled-bool-as-int", hooks(enabled=1), ("$.hooks.enabled", "expected a boolean, got an integer")),
    ("enabled-string", hooks(enabled="true"), ("$.hooks.enabled", "expected a boolean, got a string")),
    ("show-in-tui-null", hooks(show_in_tui=None), ("$.hooks.show_in_tui", "expected a boolean, got null")),
    ("injected-content-not-object", hooks(injected_content=True),
     ("$.hooks.injected_content", "expected an object, got a boolean")),
    ("injected-transcript-int", hooks(injected_content={"show_in_transcript": 1}),
     ("$.hooks.injected_content.show_in_transcript", "expected a boolean, got an integer")),
    ("injected-tree-string", hooks(injected_content={"show_in_activity_tree": "false"}),
     ("$.hooks.injected_content.show_in_activity_tree", "expected a boolean, got a string")),
    ("injected-style-enum", hooks(injected_content={"style": "Metadata"}),
     ("$.hooks.injected_content.style",
      "must be one of 'content', 'metadata' (got 'Metadata'; did you mean 'metadata'?)")),
    ("injected-unknown-key-suggested", hooks(injected_content={"show_in_tree": True}),
     ("$.hooks.injected_content.show_in_tree",
      "unknown key 'show_in_tree' (did you mean 'show_in_activity_tree'?)")),
    ("injected-unknown-key-no-suggestion", hooks(injected_content={"colour": "red"}),
     ("$.hooks.injected_content.colour", "unknown key 'colour'")),
    ("payload-enum", hooks(payload="Full"),
     ("$.hooks.payload", PAYLOAD_ENUM + " (got 'Full'; did you mean 'full'?)")),
    ("payload-bool", hooks(payload=True), ("$.hooks.payload", "expected a string, got a boolean")),
    ("timeout-edge-0", hooks(timeout_seconds=0), ("$.hooks.timeout_seconds", "must be between 1 and 60 (got 0)")),
    ("timeout-edge-61", hooks(timeout_seconds=61), ("$.hooks.timeout_seconds", "must be between 1 and 60 (got 61)")),
    ("timeout-float-61.0", hooks(timeout_seconds=61.0), ("$.hooks.timeout_seconds", "must be between 1 and 60")),
    ("timeout-bool-as-int", hooks(timeout_seconds=True),
     ("$.hooks.timeout_seconds", "expected an integer, got a boolean")),
    ("timeout-float-5.5", hooks(timeout_seconds=5.5),
     ("$.hooks.timeout_seconds", "expected an integer, got a non-integer number")),
    ("timeout-string", hooks(timeout_seconds="5"), ("$.hooks.timeout_seconds", "expected an integer, got a string")),
    ("stdout-edge-65537", hooks(stdout_max_bytes=65537),
     ("$.hooks.stdout_max_bytes", "must be between 1 and 65536 (got 65537)")),
    ("stdout-edge-0", hooks(stdout_max_bytes=0), ("$.hooks.stdout_max_bytes", "must be between 1 and 65536 (got 0)")),
    ("stderr-edge-65537", hooks(stderr_max_bytes=65537),
     ("$.hooks.stderr_max_bytes", "must be between 1 and 65536 (got 65537)")),
    ("injection-string", hooks(provider_context_injection="yes"),
     ("$.hooks.provider_context_injection", "expected a boolean, got a string")),
    ("context-edge-16385", hooks(provider_context_max_bytes=16385),
     ("$.hooks.provider_context_max_bytes", "must be between 1 and 16384 (got 16385)")),
    ("context-edge-0", hooks(provider_context_max_bytes=0),
     ("$.hooks.provider_context_max_bytes", "must be between 1 and 16384 (got 0)")),
    ("policy-enum-suggested", hooks(failure_policy="Block"),
     ("$.hooks.failure_policy", POLICY_ENUM + " (got 'Block'; did you mean 'block'?)")),
    ("policy-enum-no-suggestion", hooks(failure_policy="deny"),
     ("$.hooks.failure_policy", POLICY_ENUM + " (got 'deny')")),
    ("hooks-unknown-key", hooks(enable=True), ("$.hooks.enable", "unknown key 'enable' (did you mean 'enabled'?)")),
    ("hooks-unknown-key-misplaced", hooks(exclude_tools=["read"]),
     ("$.hooks.exclude_tools", "unknown key 'exclude_tools'")),
    ("phase-not-array", hooks(before_tool={"command": CMD}),
     ("$.hooks.before_tool", "expected an array, got an object")),
    # -- hook definitions --
    ("hook-not-object", phase("before_tool", CMD), ("$.hooks.before_tool[0]", "expected an object, got a string")),
    ("hook-missing-command", phase("after_tool", {"label": "x"}),
     ("$.hooks.after_tool[0]", MISSING_COMMAND)),
    ("hook-empty-command", phase("before_tool", hook(command="")),
     ("$.hooks.before_tool[0].command", "must not be empty")),
    ("hook-command-and-args", phase("before_tool", hook(args=["true"])),
     ("$.hooks.before_tool[0]", "gives both command and args: give one (args runs a program with "
      "no shell)")),
    ("hook-args-only", phase("before_tool", {"args": ["/bin/true", "", "$x `y`"]}), None),
    ("hook-args-empty", phase("before_tool", {"args": []}),
     ("$.hooks.before_tool[0].args", "must not be empty")),
    ("hook-args-not-array", phase("before_tool", {"args": "/bin/true"}),
     ("$.hooks.before_tool[0].args", "expected an array, got a string")),
    ("hook-args-not-strings", phase("before_tool", {"args": ["/bin/echo", 5]}),
     ("$.hooks.before_tool[0].args[1]", "expected a string, got an integer")),
    ("hook-args-and-unknown-key", phase("after_tool", {"args": ["x"], "cmd": "y"}),
     ("$.hooks.after_tool[0].cmd", "unknown key 'cmd' (did you mean 'command'?)")),
    ("hook-command-not-string", phase("before_tool", hook(command=["./a.sh"])),
     ("$.hooks.before_tool[0].command", "expected a string, got an array")),
    ("hook-label-int", phase("before_tool", hook(label=7)),
     ("$.hooks.before_tool[0].label", "expected a string, got an integer")),
    ("hook-unknown-key-suggested", phase("before_tool", hook(timeout=5)),
     ("$.hooks.before_tool[0].timeout", "unknown key 'timeout' (did you mean 'timeout_seconds'?)")),
    ("hook-unknown-keys-several", phase("after_reasoning", hook(Label="x", timeout=5)),
     ("$.hooks.after_reasoning[0].Label",
      "unknown key 'Label' (did you mean 'label'?); also unknown: 'timeout'")),
    ("hook-unknown-key-odd-name", phase("before_tool", hook(**{"time-out": 5})),
     ("$.hooks.before_tool[0]['time-out']", "unknown key 'time-out' (did you mean 'timeout_seconds'?)")),
    ("hook-payload-enum", phase("before_tool", hook(payload="redact")),
     ("$.hooks.before_tool[0].payload", PAYLOAD_ENUM + " (got 'redact'; did you mean 'redacted'?)")),
    ("hook-policy-enum", phase("after_tool", hook(failure_policy="warning")),
     ("$.hooks.after_tool[0].failure_policy", POLICY_ENUM + " (got 'warning'; did you mean 'warn'?)")),
    ("hook-timeout-0", phase("after_assistant", hook(timeout_seconds=0)),
     ("$.hooks.after_assistant[0].timeout_seconds", "must be between 1 and 60 (got 0)")),
    ("hook-timeout-61", phase("before_tool", hook(timeout_seconds=61)),
     ("$.hooks.before_tool[0].timeout_seconds", "must be between 1 and 60 (got 61)")),
    ("hook-timeout-5.5", phase("before_tool", hook(timeout_seconds=5.5)),
     ("$.hooks.before_tool[0].timeout_seconds", "expected an integer, got a non-integer number")),
    ("hook-timeout-5.0", phase("before_tool", hook(timeout_seconds=5.0)), None),
    ("hook-stdout-65537", phase("before_tool", hook(stdout_max_bytes=65537)),
     ("$.hooks.before_tool[0].stdout_max_bytes", "must be between 1 and 65536 (got 65537)")),
    ("hook-stderr-0", phase("after_tool", hook(stderr_max_bytes=0)),
     ("$.hooks.after_tool[0].stderr_max_bytes", "must be between 1 and 65536 (got 0)")),
    ("hook-stderr-bool", phase("after_tool", hook(stderr_max_bytes=False)),
     ("$.hooks.after_tool[0].stderr_max_bytes", "expected an integer, got a boolean")),
    ("hook-context-16385", phase("after_tool", hook(provider_context_max_bytes=16385)),
     ("$.hooks.after_tool[0].provider_context_max_bytes", "must be between 1 and 16384 (got 16385)")),
    ("hook-injection-int", phase("after_tool", hook(provider_context_injection=1)),
     ("$.hooks.after_tool[0].provider_context_injection", "expected a boolean, got an integer")),
    ("include-tools-not-array", phase("before_tool", hook(include_tools="bash")),
     ("$.hooks.before_tool[0].include_tools", "expected an array, got a string")),
    ("include-tools-typo", phase("before_tool", hook(include_tools=["read", "Bash"])),
     ("$.hooks.before_tool[0].include_tools[1]", TOOLS_ENUM + " (got 'Bash'; did you mean 'bash'?)")),
    ("exclude-tools-typo", phase("after_tool", hook(exclude_tools=["grep"])),
     ("$.hooks.after_tool[0].exclude_tools[0]", TOOLS_ENUM + " (got 'grep'; did you mean 'ffgrep'?)")),
    ("exclude-tools-int", phase("after_tool", hook(exclude_tools=[3])),
     ("$.hooks.after_tool[0].exclude_tools[0]", "expected a string, got an integer")),
    # -- block in after phases: set, and inherited --
    ("after-tool-block-set", phase("after_tool", hook(failure_policy="block")),
     ("$.hooks.after_tool[0].failure_policy", AFTER_BLOCK)),
    ("after-assistant-block-set", phase("after_assistant", hook(), hook(failure_policy="block")),
     ("$.hooks.after_assistant[1].failure_policy", AFTER_BLOCK)),
    ("after-reasoning-block-set", phase("after_reasoning", hook(failure_policy="block"), failure_policy="warn"),
     ("$.hooks.after_reasoning[0].failure_policy", AFTER_BLOCK)),
    ("after-tool-block-inherited", phase("after_tool", hook(), failure_policy="block"),
     ("$.hooks.after_tool[0]", INHERITED_BLOCK)),
    ("after-assistant-block-inherited",
     phase("after_assistant", hook(failure_policy="fail"), hook(), failure_policy="block"),
     ("$.hooks.after_assistant[1]", INHERITED_BLOCK)),
    ("after-reasoning-block-inherited", phase("after_reasoning", hook(), failure_policy="block"),
     ("$.hooks.after_reasoning[0]", INHERITED_BLOCK)),
    ("after-block-set-under-global-block",
     phase("after_tool", hook(failure_policy="block"), failure_policy="block"),
     ("$.hooks.after_tool[0].failure_policy", AFTER_BLOCK)),
    # -- dialects --
    ("dialect-enum", phase("before_tool", hook(dialect="claude")),
     ("$.hooks.before_tool[0].dialect", DIALECT_ENUM + " (got 'claude'; did you mean 'claude-code'?)")),
    ("dialect-not-string", phase("before_tool", hook(dialect=None)),
     ("$.hooks.before_tool[0].dialect", "expected a string, got null")),
    ("dialect-payload-inherited-default", phase("before_tool", hook(dialect="codex")),
     ("$.hooks.before_tool[0]", dialect_inherited("codex", "Codex"))),
    ("dialect-payload-inherited-explicit",
     phase("after_tool", hook(dialect="claude-code"), payload="redacted"),
     ("$.hooks.after_tool[0]", dialect_inherited("claude-code", "Claude Code"))),
    ("dialect-payload-set-redacted", phase("before_tool", hook(dialect="gemini", payload="redacted")),
     ("$.hooks.before_tool[0].payload", dialect_set("gemini", "Gemini CLI"))),
    ("dialect-payload-set-redacted-global-full",
     phase("after_assistant", hook(dialect="codex", payload="redacted"), payload="full"),
     ("$.hooks.after_assistant[0].payload", dialect_set("codex", "Codex"))),
]

# Several errors at once: both engines must pick the same one (jsonschema's best_match:
# shallowest path first; among equally deep paths the greatest path; then a type mismatch;
# then the first error found).
MULTI_ERROR_CASES = [
    ("shallow-unknown-key-beats-deep-errors",
     hooks(enable=True, before_tool=[hook(command="")], timeout_seconds=0),
     ("$.hooks.enable", "unknown key 'enable' (did you mean 'enabled'?)")),
    ("global-field-beats-hook-field",
     hooks(before_tool=[hook(timeout_seconds=0)], payload="Full"),
     ("$.hooks.payload", PAYLOAD_ENUM + " (got 'Full'; did you mean 'full'?)")),
    ("greater-sibling-key-wins", hooks(enabled="x", timeout_seconds=0),
     ("$.hooks.timeout_seconds", "must be between 1 and 60 (got 0)")),
    ("later-array-index-wins", phase("before_tool", hook(command=""), hook(command=5)),
     ("$.hooks.before_tool[1].command", "expected a string, got an integer")),
    ("missing-command-beats-inherited-block", phase("after_tool", {"label": "x"}, failure_policy="block"),
     ("$.hooks.after_tool[0]", MISSING_COMMAND)),
    ("missing-command-beats-dialect-rule", phase("before_tool", {"dialect": "codex"}),
     ("$.hooks.before_tool[0]", MISSING_COMMAND)),
    ("type-beats-enum-at-same-path", phase("after_tool", hook(failure_policy=5)),
     ("$.hooks.after_tool[0].failure_policy", "expected a string, got an integer")),
    ("hook-level-beats-its-fields", phase("before_tool", hook(timeout=1, payload="x")),
     ("$.hooks.before_tool[0].timeout", "unknown key 'timeout' (did you mean 'timeout_seconds'?)")),
    ("inherited-block-and-dialect-both-at-hook-first-wins",
     phase("after_tool", hook(dialect="codex"), failure_policy="block"),
     ("$.hooks.after_tool[0]", INHERITED_BLOCK)),
    ("invalid-global-payload-beats-dialect-rule",
     phase("before_tool", hook(dialect="codex"), payload="ful"),
     ("$.hooks.payload", PAYLOAD_ENUM + " (got 'ful'; did you mean 'full'?)")),
    ("hooks-beats-tools-at-depth", {"tools": {"bash": {"absolute_paths": 1}}, "hooks": {"enabled": 1}},
     ("$.hooks.enabled", "expected a boolean, got an integer")),
]


def _ids(cases):
    return [case[0] for case in cases]


def test_schema_json_equals_embedded_schema():
    with open(ROOT / "schema.json", encoding="utf-8") as handle:
        assert json.load(handle) == magihook.SETTINGS_SCHEMA
    # Byte for byte, key order too (`magihook schema` prints the same): the schema is built.
    text = (ROOT / "schema.json").read_text(encoding="utf-8")
    assert text == json.dumps(magihook.SETTINGS_SCHEMA, indent=2) + "\n"


def test_schema_is_valid_draft_2020_12():
    jsonschema.Draft202012Validator.check_schema(magihook.SETTINGS_SCHEMA)
    assert magihook.SETTINGS_SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def _declared_properties():
    """Every property the settings file may contain (rule sub-schemas are not declarations)."""
    schema = magihook.SETTINGS_SCHEMA
    defs = schema["$defs"]
    tools = schema["properties"]["tools"]
    yield "$", schema["properties"]
    yield "$.tools", tools["properties"]
    yield "$.tools.bash", tools["properties"]["bash"]["properties"]
    yield "$.hooks", defs["hooks"]["properties"]
    yield "$.hooks.injected_content", defs["hooks"]["properties"]["injected_content"]["properties"]
    yield "hook", defs["hook"]["properties"]


def test_every_property_has_a_description():
    for where, properties in _declared_properties():
        for name, subschema in properties.items():
            target = subschema
            if "$ref" in target:
                target = magihook._resolve_ref(target["$ref"])
            assert target.get("description"), where + "." + name


def test_spec_defaults():
    defs = magihook.SETTINGS_SCHEMA["$defs"]
    found = {name: sub.get("default") for name, sub in defs["hooks"]["properties"].items()}
    assert found == {
        "enabled": False, "show_in_tui": False, "injected_content": None, "payload": "redacted",
        "timeout_seconds": 5, "stdout_max_bytes": 8192, "stderr_max_bytes": 8192,
        "provider_context_injection": False, "provider_context_max_bytes": 4096,
        "failure_policy": "warn", "before_tool": [], "after_tool": [], "after_assistant": [],
        "after_reasoning": [],
    }
    injected = defs["hooks"]["properties"]["injected_content"]["properties"]
    assert {name: sub["default"] for name, sub in injected.items()} == {
        "show_in_transcript": False, "show_in_activity_tree": False, "style": "content",
    }
    hook_defaults = {name: sub["default"] for name, sub in defs["hook"]["properties"].items() if "default" in sub}
    assert hook_defaults == {"label": "hook", "include_tools": [], "exclude_tools": [], "dialect": "magihook"}
    bash = magihook.SETTINGS_SCHEMA["properties"]["tools"]["properties"]["bash"]
    assert bash["properties"]["absolute_paths"]["default"] is True


def test_table_is_big_enough():
    assert len(CASES) >= 40
    assert len({case[0] for case in CASES + MULTI_ERROR_CASES}) == len(CASES) + len(MULTI_ERROR_CASES)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name,document,expected", CASES, ids=_ids(CASES))
def test_table(engine, name, document, expected):
    before = copy.deepcopy(document)
    assert magihook.schema_error(document, engine) == expected
    assert document == before  # validation never mutates the settings


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name,document,expected", MULTI_ERROR_CASES, ids=_ids(MULTI_ERROR_CASES))
def test_multi_error_documents(engine, name, document, expected):
    assert magihook.schema_error(document, engine) == expected


def test_verdicts_agree_with_plain_jsonschema():
    validator = jsonschema.Draft202012Validator(magihook.SETTINGS_SCHEMA)
    for _name, document, expected in CASES + MULTI_ERROR_CASES:
        assert validator.is_valid(document) == (expected is None)


def test_messages_never_echo_command_text():
    for _name, _document, expected in CASES + MULTI_ERROR_CASES:
        if expected is not None:
            assert "secret-audit" not in expected[0] + expected[1]


def test_unknown_engine_is_rejected():
    with pytest.raises(ValueError):
        magihook.schema_error({}, "fastjsonschema")


def test_builtin_refuses_unknown_keywords():
    with pytest.raises(ValueError, match="pattern"):
        list(magihook._iter_errors({"type": "string", "pattern": "^a"}, "b", ()))
    with pytest.raises(ValueError):
        list(magihook._iter_errors({"$ref": "https://example.com/x"}, "b", ()))


@pytest.mark.parametrize("key", ["abc", "a_1", "abc\n", "1abc", "with space", "it's", "back\\slash", "é", "-", "A"])
def test_json_path_format_matches_jsonschema(key):
    document = {"hooks": {"before_tool": [hook(**{key: 1})]}}
    error = next(jsonschema.Draft202012Validator(magihook.SETTINGS_SCHEMA).iter_errors(document))
    assert magihook.json_path(tuple(error.absolute_path)) == error.json_path
    assert magihook.schema_error(document, "builtin") == magihook.schema_error(document, "jsonschema")
    assert magihook.schema_error(document)[0] == error.json_path + magihook._json_path_segment(key)


def _random_value(rng, depth=0):
    pool = [None, True, False, 0, 1, 5, 5.0, 5.5, 60, 61, 65536, 65537, 16384, 16385, -1, "",
            "x", "full", "redacted", "block", "warn", "ignore", "fail", "bash", "Bash", "codex",
            "claude-code", "gemini", "magihook", "content", "metadata"]
    if depth < 2 and rng.random() < 0.15:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 2))]
    if depth < 2 and rng.random() < 0.1:
        return {"k": _random_value(rng, depth + 1)}
    return rng.choice(pool)


def _mutate(rng, document):
    """Replace, delete or add one random value somewhere in a copy of document."""
    document = copy.deepcopy(document)
    containers = []

    def collect(node):
        if isinstance(node, dict):
            containers.append(node)
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            containers.append(node)
            for value in node:
                collect(value)

    collect(document)
    target = rng.choice(containers)
    keys = list(target) if isinstance(target, dict) else list(range(len(target)))
    action = rng.random()
    if keys and action < 0.5:
        target[rng.choice(keys)] = _random_value(rng)
    elif keys and action < 0.65:
        del target[rng.choice(keys)]
    elif isinstance(target, dict):
        names = list(magihook.SETTINGS_SCHEMA["$defs"]["hook"]["properties"])
        names += list(magihook.SETTINGS_SCHEMA["$defs"]["hooks"]["properties"]) + ["timeout", "Payload"]
        target[rng.choice(names)] = _random_value(rng)
    else:
        target.append(rng.choice([hook(), hook(dialect="codex"), _random_value(rng)]))
    return document


def test_engines_agree_on_random_mutations():
    rng = random.Random(20260526)
    seeds = [SPEC_EXAMPLE] + [case[1] for case in CASES if isinstance(case[1], dict) and case[1]]
    seeds.append(phase("after_tool", hook(dialect="codex", payload="full", failure_policy="fail")))
    for _ in range(3000):
        document = rng.choice(seeds)
        for _ in range(rng.randint(1, 4)):
            document = _mutate(rng, document)
        builtin = magihook.schema_error(document, "builtin")
        assert builtin == magihook.schema_error(document, "jsonschema"), document
        if builtin is not None:
            assert "secret-audit" not in builtin[0] + builtin[1]


def test_module_works_without_jsonschema_and_imports_nothing_heavy():
    code = (
        "import sys; sys.modules['jsonschema'] = None\n"
        "import magihook\n"
        "assert magihook.schema_error({'hooks': {'enabled': True}}) is None\n"
        "assert 'difflib' not in sys.modules\n"
        "print(magihook.schema_error({'hooks': {'enabled': 1}}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=str(ROOT), capture_output=True, text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True,
    )
    assert result.stdout.strip() == "('$.hooks.enabled', 'expected a boolean, got an integer')"


# -- the table of inherited settings: one source for the schema, defaults, records, documents --

# A made-up setting: nothing but this row knows it, so each place it shows up was derived.
GRACE = magihook.InheritedSetting(
    "grace_seconds", "integer", 2, "Seconds a hook gets to end after SIGTERM.",
    "Grace period of this hook", minimum=0, maximum=9)
WIDE_TABLE = magihook.INHERITED_SETTINGS + (GRACE,)
RECORD_TYPES = {"integer": "int", "boolean": "bool", "string": "str"}


def _widened(record, **extra):
    """`record` as an instance of a subclass that also has the fields `extra` (class values):
    a stand-in for a record with the new field, as HookDefinition and Settings would get."""
    wide = type("Wide" + type(record).__name__, (type(record),), extra)
    return wide(**{name: getattr(record, name) for name in type(record).__record_fields__})


def test_adding_a_row_is_the_whole_change():
    schema = magihook.settings_schema(WIDE_TABLE)
    defs = schema["$defs"]
    assert defs["hooks"]["properties"]["grace_seconds"] == {
        "description": "Seconds a hook gets to end after SIGTERM.", "type": "integer",
        "minimum": 0, "maximum": 9, "default": 2}
    assert defs["hook"]["properties"]["grace_seconds"] == {
        "description": "Grace period of this hook. Defaults to the global hooks.grace_seconds.",
        "type": "integer", "minimum": 0, "maximum": 9}
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"hooks": {"grace_seconds": 9, "before_tool": [
        {"command": "true", "grace_seconds": 0}]}})
    assert not validator.is_valid({"hooks": {"after_tool": [{"command": "true", "grace_seconds": 10}]}})
    assert not jsonschema.Draft202012Validator(magihook.SETTINGS_SCHEMA).is_valid(
        {"hooks": {"grace_seconds": 2}})

    defaults = magihook.setting_defaults(WIDE_TABLE)
    assert defaults == dict(magihook.HOOK_DEFAULTS, grace_seconds=2)
    assert magihook.inherited_values(WIDE_TABLE, {}, defaults)["grace_seconds"] == 2
    global_values = magihook.inherited_values(WIDE_TABLE, {"grace_seconds": 7.0}, defaults)
    assert global_values["grace_seconds"] == 7 and type(global_values["grace_seconds"]) is int
    assert magihook.inherited_values(WIDE_TABLE, {"command": "true"}, global_values)["grace_seconds"] == 7
    assert magihook.inherited_values(WIDE_TABLE, {"grace_seconds": 1}, global_values)["grace_seconds"] == 1

    settings = magihook.settings_from_document(
        {"hooks": {"enabled": True, "after_tool": [{"command": "true"}]}})
    hook = _widened(settings.after_tool[0], grace_seconds=7)
    wide = magihook.replace_fields(_widened(settings, grace_seconds=7), after_tool=(hook,))
    document = magihook.settings_document(wide, WIDE_TABLE)
    assert document["hooks"]["grace_seconds"] == 7
    assert document["hooks"]["after_tool"][0]["grace_seconds"] == 7
    validator.validate(document)
    assert document == magihook.settings_document(wide, WIDE_TABLE) != magihook.settings_document(wide)


def test_the_schema_and_defaults_are_the_tables():
    assert magihook.SETTINGS_SCHEMA == magihook.settings_schema(magihook.INHERITED_SETTINGS)
    assert dict(magihook.HOOK_DEFAULTS) == magihook.setting_defaults(magihook.INHERITED_SETTINGS)
    assert magihook.INHERITED_KEYS == tuple(s.key for s in magihook.INHERITED_SETTINGS)
    assert dict(magihook.INHERITED_SETTINGS_BY_KEY) == {s.key: s for s in magihook.INHERITED_SETTINGS}
    # Rows whose key is not in the table are the frame's: none of them is an inherited setting.
    defs = magihook.SETTINGS_SCHEMA["$defs"]
    assert [key for key in defs["hooks"]["properties"] if key in magihook.HOOK_DEFAULTS] == list(
        magihook.INHERITED_KEYS)
    assert sorted(key for key in defs["hook"]["properties"] if key in magihook.HOOK_DEFAULTS) == sorted(
        magihook.INHERITED_KEYS)


@pytest.mark.parametrize("record", [magihook.HookDefinition, magihook.Settings])
def test_record_fields_are_pinned_to_the_table(record):
    """`record` reads the class annotations, so the records list these fields by hand: each
    table row is a field of the record's type (and, in Settings, with the row's default)."""
    annotations = record.__annotations__
    for setting in magihook.INHERITED_SETTINGS:
        assert setting.key in record.__record_fields__
        assert annotations[setting.key] == RECORD_TYPES[setting.schema_type], setting.key
    if record is magihook.Settings:
        inert = magihook.Settings()
        assert {s.key: getattr(inert, s.key) for s in magihook.INHERITED_SETTINGS} == dict(
            magihook.HOOK_DEFAULTS)


def test_claude_code_import_keeps_to_the_tables_timeout_bounds():
    bounds = magihook.INHERITED_SETTINGS_BY_KEY["timeout_seconds"]
    handlers = [{"type": "command", "command": "true", "timeout": timeout} for timeout in (10 ** 6, 0.001)]
    handlers.append({"type": "command", "command": "true"})
    converted, report = magihook.import_claude_code(
        {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": handlers}]}})
    assert [hook["timeout_seconds"] for hook in converted["hooks"]["before_tool"]] == [
        bounds.maximum, bounds.minimum, bounds.maximum]
    assert "(magihook allows %d to %d)" % (bounds.minimum, bounds.maximum) in report[0]
    assert magihook.schema_error(converted) is None


def _documented_inherited_rows():
    """The rows of docs/settings.md's global settings table marked *inherited*."""
    text = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.startswith("| `") and "(*inherited*)" in line:
            key, kind, default, bounds = (cell.strip() for cell in line.strip("|").split("|"))
            yield key.strip("`"), kind, default.strip("`"), bounds


def test_the_docs_table_matches_the_table():
    rows = list(_documented_inherited_rows())
    assert [row[0] for row in rows] == list(magihook.INHERITED_KEYS)
    for (key, kind, default, bounds), setting in zip(rows, magihook.INHERITED_SETTINGS):
        assert (kind, json.loads(default)) == (setting.schema_type, setting.default), key
        if setting.minimum is not None:
            assert bounds.startswith("%d–%d " % (setting.minimum, setting.maximum)), key
        for value in setting.enum or ():
            assert "`%s`" % value in bounds, key
