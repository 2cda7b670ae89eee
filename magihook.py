#!/usr/bin/env python3
"""magihook: local shell hooks around coding-agent tool calls.

One event in (a tool request, a tool result, or an assistant/reasoning message), the matching
hooks of the settings file run as real processes, one result out: the verdict, the tool result
the model sees, and the context items to add.  It implements the magi-code "tool-call hooks"
feature document as a command (`magihook run --phase before_tool`) and as a module you can vendor
by copying this file.  The `run` path uses the standard library only.

Sections, in the order one tool call flows through them:

    1. Constants and defaults
    2. Errors
    3. Settings: schema and validation
    4. Settings: loading
    5. Matching
    6. Input events
    7. Credential redaction
    8. Payload
    9. Preflight
   10. Process runner
   11. Injection
   12. Records and sessions
   13. Display
   14. Pipeline (the Python API)
   15. CLI
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

__version__ = "0.1.0"
__all__ = [
    "MagihookError",
    "SettingsError",
    "InputError",
    "UsageError",
    "Settings",
    "HookDefinition",
    "load_settings",
    "run_phase",
    "main",
]


# =================================================================================================
# 1. Constants and defaults
# =================================================================================================

PHASES = ("before_tool", "after_tool", "after_assistant", "after_reasoning")
TOOL_PHASES = ("before_tool", "after_tool")
MESSAGE_PHASES = ("after_assistant", "after_reasoning")
AFTER_PHASES = ("after_tool", "after_assistant", "after_reasoning")
MESSAGE_TOOLS = MappingProxyType({"after_assistant": "assistant", "after_reasoning": "reasoning"})

BUILTIN_TOOLS = (
    "read", "bash", "hash_edit", "write", "ffgrep", "parallel_subagents", "web_search",
    "code_search",
)
TOOL_ALIASES = MappingProxyType({"shell": "bash"})

HOOK_DEFAULTS = MappingProxyType({
    "payload": "redacted",
    "timeout_seconds": 5,
    "stdout_max_bytes": 8192,
    "stderr_max_bytes": 8192,
    "provider_context_injection": False,
    "provider_context_max_bytes": 4096,
    "failure_policy": "warn",
})
# Global settings that a hook definition inherits when it does not set them.
INHERITED_KEYS = tuple(HOOK_DEFAULTS)

VERDICT_EXIT_CODES = MappingProxyType({"continue": 0, "block": 3, "fail": 4})
EXIT_USAGE = 2
EXIT_INTERNAL = 1

PAYLOAD_SCHEMA = "magi-code.tool_hook"
RESULT_SCHEMA = "magihook.result"
SCHEMA_VERSION = 1

# Hook stdin is capped at 1 MiB (spec "Hard runtime limit").  Bodies that would pass it spill to a
# payload_ref file, up to PAYLOAD_REF_MAX_BYTES; past that the hook gets omitted_too_large.
STDIN_MAX_BYTES = 1024 * 1024
PAYLOAD_REF_MAX_BYTES = 16 * 1024 * 1024
# An input event is read whole before anything runs, so it is bounded too.
EVENT_MAX_BYTES = 32 * 1024 * 1024
EVENT_MAX_DEPTH = 256
SETTINGS_MAX_BYTES = 1024 * 1024
AFFECTED_PATH_MAX_CHARS = 4096

BLOCKED_CONTENT = "This tool call was blocked by local hook policy."
REDACTED_TOOL_OUTPUT = "<redacted:tool-output>"

# Keys whose values redacted mode summarizes instead of sending (spec "payload: redacted").
SUMMARIZED_KEYS = MappingProxyType({
    "command": "command",
    "cmd": "command",
    "content": "content",
    "input": "patch",
    "stdout": "output",
    "stderr": "output",
    "output": "output",
})

HOOK_SHELL = ("/bin/bash", "-lc")
READ_CHUNK = 64 * 1024
# Without pidfd we cannot be woken by the hook's exit, so the loop polls at this interval.
EXIT_POLL_SECONDS = 0.01

LIFECYCLE_KEYS = (
    "phase", "label", "target_tool", "status", "policy", "category", "target_ran",
    "tool_call_id", "activity_id", "hook_index", "elapsed_ms", "message",
)
INJECTION_AUDIT_KEYS = (
    "schema_version", "phase", "label", "target_tool", "status", "item_count", "byte_count",
    "max_bytes", "hook_index",
)
CONTEXT_KEYS = (
    "cwd", "session_id", "session_path", "provider_id", "model_id", "agent_id",
    "invocation_mode", "turn_id", "message_id", "subagent",
)
INVOCATION_MODES = ("print", "shell", "mission_control", "subagent")


# =================================================================================================
# 2. Errors
# =================================================================================================

class MagihookError(Exception):
    """Every error magihook raises on purpose; the CLI turns it into exit code 2."""


class UsageError(MagihookError):
    """Bad command line."""


class SettingsError(MagihookError):
    """The settings file is missing, unreadable, malformed or invalid."""


class InputError(MagihookError):
    """The input event is not valid JSON or not of the documented shape."""


class Interrupted(MagihookError):
    """magihook got SIGTERM or SIGINT while a hook ran; raised so every cleanup runs."""


# =================================================================================================
# 3. Settings: schema and validation
# =================================================================================================
# SETTINGS_SCHEMA is the single source of truth for the settings file (schema.json is a
# byte-for-byte dump of it, kept equal by a test).  schema_error() checks a settings document
# against it with one of two engines that must give the SAME answer:
#   - "jsonschema": the real library (imported lazily: it is optional and costs tens of ms);
#   - "builtin": a tiny stdlib interpreter of exactly the keywords used below, which replays
#     jsonschema's error order and best_match() relevance so a vendored copy without jsonschema
#     reports the same (path, message).
# Messages are never jsonschema's text: those echo instance values, which may hold hook command
# text.  Both engines feed the raw failure (keyword, path, schema fragment, instance) to
# _describe(), the only place messages are written.
#
# Integers: booleans are not integers (both engines), and, as draft 2020-12 says, a float with
# a zero fraction (5.0) IS an integer, so it validates; whoever reads the settings converts it
# with int().  5.5 is rejected.

SETTINGS_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "magihook settings",
    "description": (
        "The agent's whole settings file as magihook reads it: the 'hooks' section and "
        "tools.bash.absolute_paths. Every other top-level key is allowed and ignored."
    ),
    "type": "object",
    "properties": {
        "hooks": {"$ref": "#/$defs/hooks"},
        "tools": {
            "description": "Agent tool settings; magihook reads only tools.bash.absolute_paths.",
            "type": "object",
            "properties": {
                "bash": {
                    "description": "Settings of the bash tool; magihook reads only absolute_paths.",
                    "type": "object",
                    "properties": {
                        "absolute_paths": {
                            "description": (
                                "Whether absolute paths may appear in commands. When false, "
                                "hook command preflight rejects absolute paths."
                            ),
                            "type": "boolean",
                            "default": True,
                        },
                    },
                },
            },
        },
    },
    "$defs": {
        "hooks": {
            "description": "Tool-call hook settings. Unknown keys are errors.",
            "type": "object",
            "properties": {
                "enabled": {
                    "description": "Master switch. false makes hooks inert.",
                    "type": "boolean",
                    "default": False,
                },
                "show_in_tui": {
                    "description": (
                        "Display-only opt-in for hook running/success/failure rows. Does not "
                        "enable hooks and does not control injected-content rows."
                    ),
                    "type": "boolean",
                    "default": False,
                },
                "injected_content": {
                    "description": "Visibility of provider context injection rows (display only).",
                    "type": "object",
                    "properties": {
                        "show_in_transcript": {
                            "description": "Show provider context injection rows in the transcript.",
                            "type": "boolean",
                            "default": False,
                        },
                        "show_in_activity_tree": {
                            "description": (
                                "Show provider context injection rows in the activity tree, under "
                                "the related tool/message activity or as root rows."
                            ),
                            "type": "boolean",
                            "default": False,
                        },
                        "style": {
                            "description": (
                                "'content' shows redacted, truncated injected content; 'metadata' "
                                "shows only label, status, item count and byte count."
                            ),
                            "type": "string",
                            "enum": ["content", "metadata"],
                            "default": "content",
                        },
                    },
                    "additionalProperties": False,
                },
                "payload": {
                    "description": "Default payload mode for hooks.",
                    "type": "string",
                    "enum": ["redacted", "full"],
                    "default": "redacted",
                },
                "timeout_seconds": {
                    "description": "Per-hook process timeout in seconds. A timeout is a hook failure.",
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 60,
                    "default": 5,
                },
                "stdout_max_bytes": {
                    "description": "Max captured stdout bytes. Exceeding it is a hook failure.",
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 65536,
                    "default": 8192,
                },
                "stderr_max_bytes": {
                    "description": "Max captured stderr bytes. Exceeding it is a hook failure.",
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 65536,
                    "default": 8192,
                },
                "provider_context_injection": {
                    "description": (
                        "Default opt-in for successful after_tool/after_assistant/after_reasoning "
                        "hooks to inject stdout context_items as provider-visible user messages."
                    ),
                    "type": "boolean",
                    "default": False,
                },
                "provider_context_max_bytes": {
                    "description": "Max total UTF-8 bytes of injected context content per hook.",
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 16384,
                    "default": 4096,
                },
                "failure_policy": {
                    "description": (
                        "Default handling of hook failures. 'block' is valid only for "
                        "before_tool; after-phase hooks must then set their own policy."
                    ),
                    "type": "string",
                    "enum": ["ignore", "warn", "block", "fail"],
                    "default": "warn",
                },
                "before_tool": {
                    "description": "Hooks run, in order, before a matching tool runs.",
                    "type": "array",
                    "items": {"$ref": "#/$defs/hook"},
                    "default": [],
                },
                "after_tool": {
                    "description": "Hooks run, in order, after a matching tool ran. 'block' is rejected.",
                    "type": "array",
                    "items": {"$ref": "#/$defs/after_phase_hook"},
                    "default": [],
                },
                "after_assistant": {
                    "description": (
                        "Hooks run after a complete assistant message. 'block' is rejected; "
                        "include_tools/exclude_tools do not apply."
                    ),
                    "type": "array",
                    "items": {"$ref": "#/$defs/after_phase_hook"},
                    "default": [],
                },
                "after_reasoning": {
                    "description": (
                        "Hooks run after a complete reasoning summary. 'block' is rejected; "
                        "include_tools/exclude_tools do not apply."
                    ),
                    "type": "array",
                    "items": {"$ref": "#/$defs/after_phase_hook"},
                    "default": [],
                },
            },
            "additionalProperties": False,
            "allOf": [
                {
                    # Rule (b): an after-phase hook without its own policy would inherit
                    # a global 'block', which is not allowed after the tool ran.
                    "if": {
                        "properties": {"failure_policy": {"const": "block"}},
                        "required": ["failure_policy"],
                    },
                    "then": {
                        "properties": {
                            "after_tool": {"items": {"$ref": "#/$defs/rule_inherited_block"}},
                            "after_assistant": {"items": {"$ref": "#/$defs/rule_inherited_block"}},
                            "after_reasoning": {"items": {"$ref": "#/$defs/rule_inherited_block"}},
                        },
                    },
                },
                {
                    # Rule (c), inherited half: unless the global payload is 'full', a hook
                    # with a foreign dialect must set payload itself.
                    "if": {
                        "properties": {"payload": {"const": "full"}},
                        "required": ["payload"],
                    },
                    "else": {
                        "properties": {
                            "before_tool": {"items": {"$ref": "#/$defs/foreign_dialect_payload"}},
                            "after_tool": {"items": {"$ref": "#/$defs/foreign_dialect_payload"}},
                            "after_assistant": {"items": {"$ref": "#/$defs/foreign_dialect_payload"}},
                            "after_reasoning": {"items": {"$ref": "#/$defs/foreign_dialect_payload"}},
                        },
                    },
                },
            ],
        },
        "hook": {
            "description": "One hook definition. Unknown keys are errors.",
            "type": "object",
            "properties": {
                "label": {
                    "description": "Local diagnostic label. An empty label becomes 'hook'.",
                    "type": "string",
                    "default": "hook",
                },
                "command": {
                    "description": "Shell command run after the safety preflight.",
                    "type": "string",
                    "minLength": 1,
                },
                "payload": {
                    "description": "Payload mode of this hook. Defaults to the global hooks.payload.",
                    "type": "string",
                    "enum": ["redacted", "full"],
                },
                "failure_policy": {
                    "description": (
                        "Failure policy of this hook. Defaults to the global hooks.failure_policy. "
                        "'block' only works in before_tool."
                    ),
                    "type": "string",
                    "enum": ["ignore", "warn", "block", "fail"],
                },
                "timeout_seconds": {
                    "description": "Timeout of this hook in seconds. Defaults to the global hooks.timeout_seconds.",
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 60,
                },
                "stdout_max_bytes": {
                    "description": "stdout cap of this hook. Defaults to the global hooks.stdout_max_bytes.",
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 65536,
                },
                "stderr_max_bytes": {
                    "description": "stderr cap of this hook. Defaults to the global hooks.stderr_max_bytes.",
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 65536,
                },
                "provider_context_injection": {
                    "description": (
                        "Context injection opt-in of this hook (after phases only). Defaults to "
                        "the global hooks.provider_context_injection."
                    ),
                    "type": "boolean",
                },
                "provider_context_max_bytes": {
                    "description": (
                        "Injected context byte limit of this hook. Defaults to the global "
                        "hooks.provider_context_max_bytes."
                    ),
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 16384,
                },
                "include_tools": {
                    "description": (
                        "If non-empty, the hook runs only for these tools. No effect for "
                        "after_assistant/after_reasoning."
                    ),
                    "type": "array",
                    "items": {"$ref": "#/$defs/tool_name"},
                    "default": [],
                },
                "exclude_tools": {
                    "description": (
                        "The hook does not run for these tools (applied after include_tools). "
                        "No effect for after_assistant/after_reasoning."
                    ),
                    "type": "array",
                    "items": {"$ref": "#/$defs/tool_name"},
                    "default": [],
                },
                "dialect": {
                    "description": (
                        "Stdin/stdout protocol of the hook script: magihook's own, or that of "
                        "another agent so its scripts run unchanged. A foreign dialect needs "
                        "payload 'full'."
                    ),
                    "type": "string",
                    "enum": ["magihook", "claude-code", "codex", "gemini"],
                    "default": "magihook",
                },
            },
            "required": ["command"],
            "additionalProperties": False,
            # Rule (c), explicit half: "type": "object" keeps the rule off non-objects (the
            # type error reports those).
            "if": {
                "type": "object",
                "properties": {"dialect": {"enum": ["claude-code", "codex", "gemini"]}},
                "required": ["dialect"],
            },
            "then": {"$ref": "#/$defs/rule_dialect_payload_set"},
        },
        "after_phase_hook": {
            "description": "A hook definition of an after phase: failure_policy 'block' is rejected.",
            "$ref": "#/$defs/hook",
            "properties": {
                "failure_policy": {"$ref": "#/$defs/rule_after_phase_no_block"},
            },
        },
        "tool_name": {
            "description": "A built-in tool name (exact, lower case).",
            "type": "string",
            "enum": [
                "read", "bash", "shell", "hash_edit", "write", "ffgrep",
                "parallel_subagents", "web_search", "code_search",
            ],
        },
        # The rule_* definitions are what _describe() recognises custom failures by. Those
        # that fail on a hook object say "type": "object": best_match ranks an error from a
        # schema whose "type" matches the instance below one from a schema without "type",
        # and the hook's own errors (e.g. a missing command) should win, as found first.
        "rule_after_phase_no_block": {
            "description": "Rule: an after-phase hook cannot block; the tool already ran.",
            "not": {"const": "block"},
        },
        "rule_inherited_block": {
            "type": "object",
            "description": (
                "Rule: with a global failure_policy 'block', an after-phase hook must set its "
                "own failure_policy."
            ),
            "required": ["failure_policy"],
        },
        "rule_dialect_payload_set": {
            "type": "object",
            "description": "Rule: a hook with a foreign dialect cannot set payload 'redacted'.",
            "not": {
                "properties": {"payload": {"const": "redacted"}},
                "required": ["payload"],
            },
        },
        "foreign_dialect_payload": {
            "description": "Applies rule_dialect_payload_inherited to hooks with a foreign dialect.",
            "if": {
                "properties": {"dialect": {"enum": ["claude-code", "codex", "gemini"]}},
                "required": ["dialect"],
            },
            "then": {"$ref": "#/$defs/rule_dialect_payload_inherited"},
        },
        "rule_dialect_payload_inherited": {
            "type": "object",
            "description": (
                "Rule: unless the global payload is 'full', a hook with a foreign dialect must "
                "set payload 'full' itself."
            ),
            "required": ["payload"],
        },
    },
}

# Each custom rule's $defs name -> the keyword that fails when the rule is broken.
_RULE_KEYWORDS = {
    "rule_after_phase_no_block": "not",
    "rule_inherited_block": "required",
    "rule_dialect_payload_set": "not",
    "rule_dialect_payload_inherited": "required",
}
_DIALECT_AGENTS = {"claude-code": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI"}
_SHORT_CHARS = 40
_ANNOTATION_KEYWORDS = frozenset(
    ["$schema", "$id", "$comment", "$defs", "title", "description", "default", "examples"]
)

SchemaProblem = Tuple[str, str]  # (json_path, message)


def schema_error(document: object, engine: str = "builtin") -> Optional[SchemaProblem]:
    """Validate a whole settings document; None if valid, else the best (json_path, message)."""
    if engine == "jsonschema":
        return _jsonschema_error(document)
    if engine == "builtin":
        return _builtin_error(document)
    raise ValueError("unknown schema engine %r (use 'builtin' or 'jsonschema')" % (engine,))


def _jsonschema_error(document: object) -> Optional[SchemaProblem]:
    # Imported here only: jsonschema is optional and slow to import.
    import jsonschema

    validator = jsonschema.Draft202012Validator(SETTINGS_SCHEMA)
    error = jsonschema.exceptions.best_match(validator.iter_errors(document))
    if error is None:
        return None
    return _describe(error.validator, error.json_path, error.schema, error.instance)


# -- messages (shared by both engines) --


def _describe(keyword: str, json_path: str, fragment: Any, instance: Any) -> SchemaProblem:
    """Turn one raw failure into (json_path, message) without echoing command text.

    keyword is the failing schema keyword, json_path the instance location, fragment the schema
    object holding the keyword, instance the value it failed on.
    """
    rule = _rule_name(keyword, fragment)
    if rule == "rule_after_phase_no_block":
        return json_path, "'block' is only allowed for before_tool hooks"
    if rule == "rule_inherited_block":
        return json_path, (
            "failure_policy 'block' is inherited from $.hooks.failure_policy and is only "
            "allowed for before_tool hooks; set this hook's failure_policy to 'ignore', "
            "'warn' or 'fail'"
        )
    if rule == "rule_dialect_payload_set":
        return json_path + _json_path_segment("payload"), (
            "%s, so its payload must be 'full', not 'redacted'" % _dialect_reason(instance)
        )
    if rule == "rule_dialect_payload_inherited":
        return json_path, (
            "%s, so it needs payload 'full'; set this hook's payload to 'full' (the global "
            "$.hooks.payload is 'redacted')" % _dialect_reason(instance)
        )
    if keyword == "type":
        return json_path, "expected %s, got %s" % (_expected_types(fragment["type"]), _type_phrase(instance))
    if keyword == "enum":
        return json_path, _enum_message(fragment["enum"], instance)
    if keyword == "const":
        return json_path, "must be %s" % _short(fragment["const"])
    if keyword in ("minimum", "maximum"):
        return json_path, _bounds_message(fragment, instance)
    if keyword == "minLength":
        if fragment["minLength"] == 1:
            return json_path, "must not be empty"
        return json_path, "must be at least %d characters long" % fragment["minLength"]
    if keyword == "required":
        missing = [key for key in fragment["required"] if key not in instance]
        # jsonschema yields one error per missing key, the first one first; same here.
        return json_path, "missing required key %s" % _short(missing[0])
    if keyword == "additionalProperties":
        return _unknown_key_problem(json_path, fragment, instance)
    return json_path, "is not allowed here (%s)" % keyword


def _rule_name(keyword: str, fragment: Any) -> Optional[str]:
    # Custom rules are recognised by the $defs entry that failed (and its rule keyword: a
    # rule's "type" failing is an ordinary type error), never by message text.
    if not isinstance(fragment, dict):
        return None
    defs = SETTINGS_SCHEMA["$defs"]
    for name, rule_keyword in _RULE_KEYWORDS.items():
        if keyword == rule_keyword and fragment == defs[name]:
            return name
    return None


def _dialect_reason(hook: Any) -> str:
    # The rules only fire when dialect is one of the foreign enum values, so it is safe to show.
    dialect = hook.get("dialect") if isinstance(hook, dict) else None
    agent = _DIALECT_AGENTS.get(dialect, "that agent")
    return "a hook with dialect %s receives %s's unredacted hook stdin" % (_short(dialect), agent)


def _article(name: str) -> str:
    return ("an " if name[0] in "aeiou" else "a ") + name


def _expected_types(types: Any) -> str:
    names = [types] if isinstance(types, str) else list(types)
    return " or ".join("null" if name == "null" else _article(name) for name in names)


def _type_phrase(value: Any) -> str:
    """How the user should read the JSON type of value (bool before int: bool is an int)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "an integer" if value.is_integer() else "a non-integer number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return _article(type(value).__name__)  # e.g. a TOML datetime


def _short(value: Any) -> str:
    """A short scalar for a message: quoted strings cut to 40 chars, JSON spelling of literals."""
    if isinstance(value, str):
        cut = value if len(value) <= _SHORT_CHARS else value[:_SHORT_CHARS] + "..."
        return repr(cut)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and len(str(value)) <= _SHORT_CHARS:
        return str(value)
    return "a value"


def _enum_message(allowed: Any, value: Any) -> str:
    message = "must be one of " + ", ".join(_short(each) for each in allowed)
    if isinstance(value, (str, int, type(None))):  # scalars only; enums never guard command text
        got = "got %s" % _short(value)
        suggestion = _suggest(value, allowed) if isinstance(value, str) else None
        if suggestion is not None:
            got += "; did you mean %s?" % _short(suggestion)
        message += " (%s)" % got
    return message


def _bounds_message(fragment: Dict[str, Any], value: Any) -> str:
    if "minimum" in fragment and "maximum" in fragment:
        message = "must be between %s and %s" % (fragment["minimum"], fragment["maximum"])
    elif "minimum" in fragment:
        message = "must be at least %s" % fragment["minimum"]
    else:
        message = "must be at most %s" % fragment["maximum"]
    if type(value) is int and len(str(value)) <= _SHORT_CHARS:
        message += " (got %d)" % value
    return message


def _unknown_keys(instance: Dict[Any, Any], fragment: Dict[str, Any]) -> list:
    # Same set and order as jsonschema's additionalProperties: keys not in "properties",
    # sorted by str().
    known = fragment.get("properties", {})
    return sorted((key for key in instance if key not in known), key=str)


def _unknown_key_problem(json_path: str, fragment: Dict[str, Any], instance: Any) -> SchemaProblem:
    # jsonschema reports additionalProperties at the object; point at the first unknown key.
    extras = _unknown_keys(instance, fragment)
    key = extras[0]
    message = "unknown key %s" % _short(str(key))
    suggestion = _suggest(str(key), list(fragment.get("properties", {})))
    if suggestion is not None:
        message += " (did you mean %s?)" % _short(suggestion)
    if len(extras) > 1:
        others = ", ".join(_short(str(each)) for each in extras[1:4])
        message += "; also unknown: " + others + (", ..." if len(extras) > 4 else "")
    return json_path + _json_path_segment(key), message


def _suggest(word: str, candidates: Any) -> Optional[str]:
    # difflib is only needed on this error path.
    import difflib

    strings = [each for each in candidates if isinstance(each, str)]
    for each in strings:
        if each.lower() == word.lower():
            return each
    close = difflib.get_close_matches(word, strings, n=1)
    return close[0] if close else None


def _json_path_segment(key: Any) -> str:
    """One step of jsonschema's ValidationError.json_path: [0], .name or ['odd key']."""
    if isinstance(key, int):
        return "[%d]" % key
    if _is_plain_name(key):
        return "." + key
    return "['" + key.replace("\\", "\\\\").replace("'", "\\'") + "']"


def _is_plain_name(key: str) -> bool:
    # jsonschema tests re.match("^[a-zA-Z][a-zA-Z0-9_]*$"); "$" also matches before one
    # final newline, so "abc\n" counts as plain there and here.
    if key.endswith("\n"):
        key = key[:-1]
    if not key or not key.isascii():
        return False
    return key[0].isalpha() and all(char.isalnum() or char == "_" for char in key)


def json_path(path: Sequence[Any]) -> str:
    """`$.hooks.after_tool[0].failure_policy`: the format of jsonschema's `json_path`."""
    return "$" + "".join(_json_path_segment(each) for each in path)


# -- builtin engine: a stdlib interpreter of the keywords SETTINGS_SCHEMA uses --
#
# It walks keywords in each schema object's dict order and descends exactly where jsonschema
# does (properties, items, allOf, $ref, if/then/else), so errors come out in jsonschema's
# iteration order; _relevance() is jsonschema.exceptions.relevance and max() is best_match()
# (our schema has no anyOf/oneOf, so no error has a context to descend into).

RawError = Tuple[Tuple[Any, ...], str, Dict[str, Any], Any]  # (path, keyword, fragment, instance)


def _builtin_error(document: object) -> Optional[SchemaProblem]:
    errors = _iter_errors(SETTINGS_SCHEMA, document, ())
    best = max(errors, key=_relevance, default=None)  # max keeps the first of equals, as jsonschema
    if best is None:
        return None
    path, keyword, fragment, instance = best
    return _describe(keyword, json_path(path), fragment, instance)


def _relevance(error: RawError) -> tuple:
    # jsonschema's key: (-len(path), path, not weak, strong, not matches type). No keyword of
    # ours is weak (anyOf/oneOf) or strong, so those two entries are constants.
    path, _keyword, fragment, instance = error
    return (-len(path), path, True, False, not _fragment_type_matches(fragment, instance))


def _fragment_type_matches(fragment: Dict[str, Any], instance: Any) -> bool:
    # jsonschema's ValidationError._matches_type: the failing schema object's own "type".
    if "type" not in fragment:
        return False
    types = fragment["type"]
    names = [types] if isinstance(types, str) else types
    return any(_is_type(instance, name) for name in names)


def _is_type(value: Any, name: str) -> bool:
    """jsonschema's draft 2020-12 type checker."""
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if isinstance(value, bool):  # bool is an int subclass but never a JSON number
        return False
    if name == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if name == "number":
        import numbers  # jsonschema uses numbers.Number; loaded only when a number is checked

        return isinstance(value, numbers.Number)
    raise ValueError("builtin schema engine: unknown type %r" % (name,))


def _equal(one: Any, two: Any) -> bool:
    """jsonschema._utils.equal: JSON equality, where true is not 1 and false is not 0."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return one == two
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(_equal(a, b) for a, b in zip(one, two))
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(_equal(one[key], two[key]) for key in one)
    if isinstance(one, bool) or isinstance(two, bool):
        return isinstance(one, bool) and isinstance(two, bool) and one == two
    return one == two


def _is_valid(schema: Dict[str, Any], instance: Any) -> bool:
    return next(_iter_errors(schema, instance, ()), None) is None


def _iter_errors(schema: Any, instance: Any, path: Tuple[Any, ...]) -> Iterator[RawError]:
    if not isinstance(schema, dict):
        raise ValueError("builtin schema engine: boolean schemas are not supported")
    for keyword, value in schema.items():
        if keyword in _ANNOTATION_KEYWORDS or keyword in ("then", "else"):
            continue  # annotations; then/else are read by "if"
        check = _KEYWORD_CHECKS.get(keyword)
        if check is None:
            # A schema edit that uses a new keyword must extend this engine, not be skipped.
            raise ValueError("builtin schema engine: unsupported keyword %r" % (keyword,))
        yield from check(value, instance, schema, path)


def _check_type(value, instance, schema, path):
    names = [value] if isinstance(value, str) else value
    if not any(_is_type(instance, name) for name in names):
        yield path, "type", schema, instance


def _check_enum(value, instance, schema, path):
    if all(not _equal(each, instance) for each in value):
        yield path, "enum", schema, instance


def _check_const(value, instance, schema, path):
    if not _equal(instance, value):
        yield path, "const", schema, instance


def _check_minimum(value, instance, schema, path):
    if _is_type(instance, "number") and instance < value:
        yield path, "minimum", schema, instance


def _check_maximum(value, instance, schema, path):
    if _is_type(instance, "number") and instance > value:
        yield path, "maximum", schema, instance


def _check_min_length(value, instance, schema, path):
    if isinstance(instance, str) and len(instance) < value:
        yield path, "minLength", schema, instance


def _check_properties(value, instance, schema, path):
    if isinstance(instance, dict):
        for key, subschema in value.items():
            if key in instance:
                yield from _iter_errors(subschema, instance[key], path + (key,))


def _check_additional_properties(value, instance, schema, path):
    if value is not False:
        raise ValueError("builtin schema engine: only additionalProperties: false is supported")
    if isinstance(instance, dict) and _unknown_keys(instance, schema):
        yield path, "additionalProperties", schema, instance


def _check_required(value, instance, schema, path):
    if isinstance(instance, dict):
        for key in value:
            if key not in instance:
                yield path, "required", schema, instance


def _check_items(value, instance, schema, path):
    if isinstance(instance, list):
        for index, item in enumerate(instance):
            yield from _iter_errors(value, item, path + (index,))


def _check_all_of(value, instance, schema, path):
    for subschema in value:
        yield from _iter_errors(subschema, instance, path)


def _check_ref(value, instance, schema, path):
    yield from _iter_errors(_resolve_ref(value), instance, path)


def _resolve_ref(ref: str) -> Any:
    if not ref.startswith("#/"):
        raise ValueError("builtin schema engine: only local $ref is supported, not %r" % (ref,))
    target: Any = SETTINGS_SCHEMA
    for part in ref[2:].split("/"):
        target = target[part.replace("~1", "/").replace("~0", "~")]
    return target


def _check_if(value, instance, schema, path):
    branch = "then" if _is_valid(value, instance) else "else"
    if branch in schema:
        yield from _iter_errors(schema[branch], instance, path)


def _check_not(value, instance, schema, path):
    if _is_valid(value, instance):
        yield path, "not", schema, instance


_KEYWORD_CHECKS = {
    "type": _check_type,
    "enum": _check_enum,
    "const": _check_const,
    "minimum": _check_minimum,
    "maximum": _check_maximum,
    "minLength": _check_min_length,
    "properties": _check_properties,
    "additionalProperties": _check_additional_properties,
    "required": _check_required,
    "items": _check_items,
    "allOf": _check_all_of,
    "$ref": _check_ref,
    "if": _check_if,
    "not": _check_not,
}


# =================================================================================================
# 4. Settings: loading
# =================================================================================================

@dataclass(frozen=True)
class HookDefinition:
    """One hook with every inherited value filled in."""

    phase: str
    index: int
    label: str
    command: str
    payload: str
    failure_policy: str
    timeout_seconds: int
    stdout_max_bytes: int
    stderr_max_bytes: int
    provider_context_injection: bool
    provider_context_max_bytes: int
    include_tools: Tuple[str, ...]
    exclude_tools: Tuple[str, ...]
    dialect: str

    @property
    def injects(self) -> bool:
        return self.provider_context_injection and self.phase in AFTER_PHASES


@dataclass(frozen=True)
class InjectedContentDisplay:
    show_in_transcript: bool = False
    show_in_activity_tree: bool = False
    style: str = "content"


@dataclass(frozen=True)
class Settings:
    """Validated settings.  `Settings()` is the inert default: no file, hooks disabled."""

    path: Optional[str] = None
    found_by: Optional[str] = None
    enabled: bool = False
    show_in_tui: bool = False
    injected_content: InjectedContentDisplay = InjectedContentDisplay()
    payload: str = "redacted"
    timeout_seconds: int = 5
    stdout_max_bytes: int = 8192
    stderr_max_bytes: int = 8192
    provider_context_injection: bool = False
    provider_context_max_bytes: int = 4096
    failure_policy: str = "warn"
    absolute_paths: bool = True
    before_tool: Tuple[HookDefinition, ...] = ()
    after_tool: Tuple[HookDefinition, ...] = ()
    after_assistant: Tuple[HookDefinition, ...] = ()
    after_reasoning: Tuple[HookDefinition, ...] = ()

    def hooks_for(self, phase: str) -> Tuple[HookDefinition, ...]:
        return getattr(self, phase)


def settings_candidates(env: Mapping[str, str], cwd: str) -> List[Tuple[str, str]]:
    """The discovery order of DESIGN.md after `--config`: (path, how it was found)."""
    found = []
    if env.get("MAGIHOOK_CONFIG"):
        found.append((env["MAGIHOOK_CONFIG"], "$MAGIHOOK_CONFIG"))
    for base, where in ((cwd, "./"), (env.get("HOME") or os.path.expanduser("~"), "~/")):
        for name in ("settings.json", "settings.toml"):
            found.append((os.path.join(base, ".magi-code", name), where + ".magi-code/" + name))
    return found


def discover_settings(
    explicit: Optional[str], env: Mapping[str, str], cwd: str
) -> Tuple[Optional[str], Optional[str]]:
    """Return (path, found_by) of the settings file in force, or (None, None) when none exists.

    A file named explicitly (`--config`, `$MAGIHOOK_CONFIG`) must exist; the usual places may not.
    """
    if explicit is not None:
        return explicit, "--config"
    for path, found_by in settings_candidates(env, cwd):
        if found_by == "$MAGIHOOK_CONFIG" or os.path.exists(path):
            return path, found_by
    return None, None


def read_settings_document(path: str) -> Dict[str, Any]:
    """Parse a settings file (JSON, or TOML by its `.toml` suffix) into a dict."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(SETTINGS_MAX_BYTES + 1)
    except FileNotFoundError:
        raise SettingsError("%s: settings file not found" % path) from None
    except IsADirectoryError:
        raise SettingsError("%s: settings path is a directory" % path) from None
    except OSError as exc:
        raise SettingsError(
            "%s: cannot read settings file (%s)" % (path, _errno_name(exc))) from None
    if len(raw) > SETTINGS_MAX_BYTES:
        raise SettingsError(
            "%s: settings file is larger than %d bytes" % (path, SETTINGS_MAX_BYTES))
    if not raw.strip():
        raise SettingsError("%s: settings file is empty" % path)
    document = _parse_toml(path, raw) if path.endswith(".toml") else _parse_settings_json(path, raw)
    if not isinstance(document, dict):
        raise SettingsError("%s: $: settings must be a JSON object" % path)
    return document


def _parse_settings_json(path: str, raw: bytes) -> Any:
    # The BOM is skipped by hand, as utf-8-sig would: that codec is a module import per call.
    try:
        text = (raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsError("%s: not valid UTF-8 at byte %d" % (path, exc.start)) from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise SettingsError(
            "%s: invalid JSON at line %d, column %d: %s" % (path, exc.lineno, exc.colno, exc.msg)
        ) from None
    except (ValueError, RecursionError) as exc:
        raise SettingsError("%s: invalid JSON: %s" % (path, _value_error_text(exc))) from None


def _parse_toml(path: str, raw: bytes) -> Any:
    try:
        import tomllib as toml_reader  # type: ignore[import-not-found]
    except ImportError:
        try:
            import tomli as toml_reader  # type: ignore[import-not-found,no-redef]
        except ImportError:
            raise SettingsError(
                "%s: reading TOML needs Python 3.11+ or the 'tomli' package" % path
            ) from None
    try:
        return toml_reader.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SettingsError("%s: not valid UTF-8 at byte %d" % (path, exc.start)) from None
    except toml_reader.TOMLDecodeError as exc:
        # tomllib messages carry the position ("... (at line 3, column 10)") but no file content.
        raise SettingsError("%s: invalid TOML: %s" % (path, str(exc).splitlines()[0])) from None


def settings_from_document(
    document: Mapping[str, Any], path: Optional[str] = None, found_by: Optional[str] = None,
    engine: str = "builtin",
) -> Settings:
    """Validate a settings document and build the frozen Settings (defaults and inheritance)."""
    error = schema_error(document, engine)
    if error is not None:
        raise SettingsError("%s: %s: %s" % (path or "settings", error[0], error[1]))
    hooks = document.get("hooks") or {}
    tools = document.get("tools") or {}
    bash = tools.get("bash") or {} if isinstance(tools, dict) else {}
    globals_ = {key: hooks.get(key, default) for key, default in HOOK_DEFAULTS.items()}
    shown = hooks.get("injected_content") or {}
    return Settings(
        path=path,
        found_by=found_by,
        enabled=bool(hooks.get("enabled", False)),
        show_in_tui=bool(hooks.get("show_in_tui", False)),
        injected_content=InjectedContentDisplay(
            show_in_transcript=bool(shown.get("show_in_transcript", False)),
            show_in_activity_tree=bool(shown.get("show_in_activity_tree", False)),
            style=shown.get("style", "content"),
        ),
        absolute_paths=bool(bash.get("absolute_paths", True)),
        **{key: _as_int_if_integral(value) for key, value in globals_.items()},
        **{
            phase: tuple(
                _hook_definition(phase, index, raw, globals_)
                for index, raw in enumerate(hooks.get(phase) or ())
            )
            for phase in PHASES
        },
    )


def _hook_definition(
    phase: str, index: int, raw: Mapping[str, Any], globals_: Mapping[str, Any]
) -> HookDefinition:
    values = {key: _as_int_if_integral(raw.get(key, globals_[key])) for key in INHERITED_KEYS}
    return HookDefinition(
        phase=phase,
        index=index,
        label=raw.get("label") or "hook",
        command=raw["command"],
        include_tools=tuple(canonical_tool_name(name) for name in raw.get("include_tools", ())),
        exclude_tools=tuple(canonical_tool_name(name) for name in raw.get("exclude_tools", ())),
        dialect=raw.get("dialect", "magihook"),
        **values,
    )


def _as_int_if_integral(value: Any) -> Any:
    # JSON Schema 2020-12 counts 5.0 as an integer; the runtime wants a real int.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def load_settings(
    path: Optional[str] = None,
    *,
    env: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
    engine: str = "builtin",
) -> Settings:
    """Find, read and validate the settings file; `Settings()` (inert) when there is none.

    `path` wins over discovery; `env` and `cwd` default to the process's own.
    """
    env = os.environ if env is None else env
    cwd = os.getcwd() if cwd is None else cwd
    found, found_by = discover_settings(path, env, cwd)
    if found is None:
        return Settings()
    return settings_from_document(read_settings_document(found), found, found_by, engine)


def settings_document(settings: Settings) -> Dict[str, Any]:
    """The effective settings as a settings file: every default and inherited value filled in."""
    hooks: Dict[str, Any] = {
        "enabled": settings.enabled,
        "show_in_tui": settings.show_in_tui,
        "injected_content": {
            "show_in_transcript": settings.injected_content.show_in_transcript,
            "show_in_activity_tree": settings.injected_content.show_in_activity_tree,
            "style": settings.injected_content.style,
        },
    }
    for key in INHERITED_KEYS:
        hooks[key] = getattr(settings, key)
    for phase in PHASES:
        hooks[phase] = [_hook_document(hook) for hook in settings.hooks_for(phase)]
    return {"hooks": hooks, "tools": {"bash": {"absolute_paths": settings.absolute_paths}}}


def _hook_document(hook: HookDefinition) -> Dict[str, Any]:
    document = {"label": hook.label, "command": hook.command}
    for key in INHERITED_KEYS:
        document[key] = getattr(hook, key)
    document["include_tools"] = list(hook.include_tools)
    document["exclude_tools"] = list(hook.exclude_tools)
    document["dialect"] = hook.dialect
    return document


class SettingsWatcher:
    """The settings in force for a long-lived caller (`run --stream`), re-read only on change.

    Each `current()` call runs discovery again (a few stat calls, so a settings file created,
    removed or shadowed mid-stream takes effect on the next event) and stats the file in force;
    the file is read and validated again only when its identity (path, device, inode, size,
    mtime, ctime) changed.  While the file in force is invalid, every call raises the same
    SettingsError, until the file changes again.
    """

    def __init__(self, path: Optional[str] = None, *, env: Optional[Mapping[str, str]] = None,
                 cwd: Optional[str] = None, engine: str = "builtin") -> None:
        self._explicit = path
        self._env = os.environ if env is None else env
        self._cwd = os.getcwd() if cwd is None else cwd
        self._engine = engine
        self._identity: Optional[tuple] = None
        self._loaded: Any = None  # the Settings, or the SettingsError message, of that identity

    def current(self) -> Settings:
        path, found_by = discover_settings(self._explicit, self._env, self._cwd)
        identity = (path, found_by, _file_identity(path))
        if self._loaded is None or identity != self._identity:
            try:
                self._loaded = Settings() if path is None else settings_from_document(
                    read_settings_document(path), path, found_by, self._engine)
            except SettingsError as exc:
                self._loaded = str(exc)
            self._identity = identity
        if isinstance(self._loaded, str):
            # A new exception each time: re-raising one instance would grow its traceback.
            raise SettingsError(self._loaded)
        return self._loaded


def _file_identity(path: Optional[str]) -> Optional[Tuple[int, ...]]:
    # mtime alone misses an in-place rewrite within the clock tick; size and ctime narrow that,
    # inode and device catch the editors' write-new-then-rename.
    if path is None:
        return None
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


# =================================================================================================
# 5. Matching
# =================================================================================================

def canonical_tool_name(name: str) -> str:
    """`shell` is `bash`; every other name is itself."""
    return TOOL_ALIASES.get(name, name)


def is_wrapped_tool(name: str) -> bool:
    return canonical_tool_name(name) in BUILTIN_TOOLS


def unmatched_reason(hook: HookDefinition, tool: str) -> Optional[str]:
    """Why `hook` does not run for `tool` (canonical name), or None when it runs."""
    if hook.phase in MESSAGE_PHASES:
        return None
    if hook.include_tools and tool not in hook.include_tools:
        return "not in include_tools"
    if tool in hook.exclude_tools:
        return "in exclude_tools"
    return None


def matching_hooks(settings: Settings, phase: str, tool: str) -> List[HookDefinition]:
    """The hooks that run for one call, in array order; none unless hooks are enabled."""
    if not settings.enabled:
        return []
    return [hook for hook in settings.hooks_for(phase) if unmatched_reason(hook, tool) is None]


# =================================================================================================
# 6. Input events
# =================================================================================================

@dataclass(frozen=True)
class ToolEvent:
    """One validated input event: a tool call (before/after) or a message (after_*)."""

    phase: str
    tool_name: str
    call_id: Optional[str]
    wrapped: bool
    request: Mapping[str, Any]
    result: Optional[Mapping[str, Any]]
    context: Mapping[str, Any]


EVENT_KEYS = MappingProxyType({
    "before_tool": ("tool", "request", "context", "phase"),
    "after_tool": ("tool", "request", "result", "context", "phase"),
    "after_assistant": ("text", "request", "context", "phase"),
    "after_reasoning": ("text", "request", "context", "phase"),
})


def decode_event(raw: bytes) -> Dict[str, Any]:
    """Bytes of one event into a JSON object, or InputError saying exactly what is wrong."""
    if len(raw) > EVENT_MAX_BYTES:
        raise InputError("input event is larger than %d bytes" % EVENT_MAX_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError("input is not valid UTF-8 (byte %d)" % exc.start) from None
    if not text.strip():
        raise InputError("input is empty: expected one JSON object")
    try:
        document = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise InputError(
            "input is not valid JSON: %s at line %d, column %d" % (exc.msg, exc.lineno, exc.colno)
        ) from None
    except RecursionError:
        raise InputError("input is nested deeper than %d levels" % EVENT_MAX_DEPTH) from None
    except ValueError as exc:
        raise InputError("input is not valid JSON: %s" % _value_error_text(exc)) from None
    if not isinstance(document, dict):
        raise InputError("$: input must be a JSON object, got %s" % json_type(document))
    if _nesting_depth(document) > EVENT_MAX_DEPTH:
        raise InputError("input is nested deeper than %d levels" % EVENT_MAX_DEPTH)
    return document


def _reject_constant(name: str) -> Any:
    raise ValueError("%s is not valid JSON" % name)


def _value_error_text(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    text = str(exc)
    return text if text.endswith("is not valid JSON") else "malformed"


def _nesting_depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > EVENT_MAX_DEPTH:
                return deepest
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return deepest


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _expect(value: Any, kind: type, path: Sequence[Any], what: str, nullable: bool = False) -> Any:
    if value is None and nullable:
        return None
    if isinstance(value, kind) and not (kind is not bool and isinstance(value, bool)):
        return value
    raise InputError("%s: expected %s, got %s" % (json_path(path), what, json_type(value)))


def parse_event(phase: str, document: Mapping[str, Any], cwd: Optional[str] = None) -> ToolEvent:
    """Check an input event's shape (DESIGN.md "The input event") and fill the defaults."""
    if phase not in PHASES:
        raise UsageError("unknown phase %r: expected one of %s" % (phase, ", ".join(PHASES)))
    _expect(document, dict, [], "an object")
    for key in document:
        if key not in EVENT_KEYS[phase]:
            raise InputError("%s: unknown key for phase %s" % (json_path([key]), phase))
    context = _parse_context(document.get("context"), cwd)
    if phase in MESSAGE_PHASES:
        return _message_event(phase, document, context)
    tool = _expect(document.get("tool"), dict, ["tool"], "an object")
    name = _expect(tool.get("name"), str, ["tool", "name"], "a string")
    call_id = _expect(tool.get("call_id"), str, ["tool", "call_id"], "a string", nullable=True)
    request = _expect(document.get("request"), dict, ["request"], "an object")
    result = None
    if phase == "after_tool":
        result = _expect(document.get("result"), dict, ["result"], "an object")
    wrapped = is_wrapped_tool(name)
    return ToolEvent(
        phase=phase,
        tool_name=canonical_tool_name(name) if wrapped else name,
        call_id=call_id,
        wrapped=wrapped,
        request=request,
        result=result,
        context=context,
    )


def _message_event(phase: str, document: Mapping[str, Any], context: Dict[str, Any]) -> ToolEvent:
    if "text" in document:
        text = _expect(document["text"], str, ["text"], "a string")
    else:
        request = _expect(document.get("request"), dict, ["request"], "an object")
        text = _expect(request.get("text"), str, ["request", "text"], "a string")
    tool = MESSAGE_TOOLS[phase]
    return ToolEvent(
        phase=phase,
        tool_name=tool,
        call_id="%s-%s" % (tool, context["turn_id"] or "turn-0"),
        wrapped=True,
        request={"text": text},
        result=None,
        context=context,
    )


def _parse_context(raw: Any, cwd: Optional[str]) -> Dict[str, Any]:
    raw = _expect(raw, dict, ["context"], "an object", nullable=True) or {}
    for key in raw:
        if key not in CONTEXT_KEYS and key != "timestamp":
            raise InputError("%s: unknown context key" % json_path(["context", key]))
    context: Dict[str, Any] = {}
    for key in CONTEXT_KEYS:
        if key == "subagent":
            context[key] = _expect(raw.get(key, False), bool, ["context", key], "a boolean")
        else:
            context[key] = _expect(raw.get(key), str, ["context", key], "a string", nullable=True)
    mode = context["invocation_mode"]
    if mode is not None and mode not in INVOCATION_MODES:
        raise InputError(
            "%s: expected one of %s" % (json_path(["context", "invocation_mode"]),
                                        ", ".join(INVOCATION_MODES))
        )
    base = os.getcwd() if cwd is None else cwd
    context["cwd"] = os.path.join(base, context["cwd"]) if context["cwd"] else base
    return context


# =================================================================================================
# 7. Credential redaction
# =================================================================================================
# (replaced by the credential redaction section)

def is_credential_key(key: str) -> bool:
    return key.lower() in ("password", "token", "api_key", "apikey", "secret", "authorization")


def redact_credentials(text: str) -> str:
    return text


def sanitize_message(text: str, limit: int = 300) -> str:
    cleaned = "".join(ch if ch.isprintable() else " " for ch in text)
    cleaned = redact_credentials(cleaned)
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


# =================================================================================================
# 8. Payload
# =================================================================================================

def utc_timestamp(seconds: Optional[float] = None) -> str:
    """`2026-05-26T00:00:00.000Z`: UTC with milliseconds."""
    now = time.time() if seconds is None else seconds
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + ".%03dZ" % (now % 1 * 1000)


def dump_json(value: Any) -> bytes:
    """Compact UTF-8 JSON; lone surrogates from the input fall back to ASCII escapes."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":"), allow_nan=False).encode("ascii")


def redaction_summary(kind: str, value: Any) -> Dict[str, Any]:
    size = len(value.encode("utf-8", "surrogatepass")) if isinstance(value, str) else len(
        dump_json(value))
    return {"redacted": True, "kind": kind, "bytes": size}


def redact_tree(value: Any) -> Any:
    """Redacted mode for one JSON value: summarize sensitive keys, scrub credential substrings."""
    if isinstance(value, dict):
        redacted = {}
        for key, item in value.items():
            kind = SUMMARIZED_KEYS.get(key.lower()) or (
                "credential" if is_credential_key(key) else None)
            if kind is not None and item is not None:
                redacted[redact_credentials(key)] = redaction_summary(kind, item)
            else:
                redacted[redact_credentials(key)] = redact_tree(item)
        return redacted
    if isinstance(value, list):
        return [redact_tree(item) for item in value]
    if isinstance(value, str):
        return redact_credentials(value)
    return value


def redact_result(result: Mapping[str, Any]) -> Dict[str, Any]:
    """A tool result in redacted mode: its content is never sent, the rest is redacted."""
    return {
        key: REDACTED_TOOL_OUTPUT if key == "content" and value is not None else redact_tree(
            {key: value})[key]
        for key, value in result.items()
    }


def redact_request(request: Mapping[str, Any], phase: str) -> Dict[str, Any]:
    if phase in MESSAGE_PHASES:
        # A message is the payload: its text is kept, only credentials inside it go.
        return {"text": redact_credentials(request["text"])}
    return redact_tree(request)


def payload_bodies(hook: HookDefinition, event: ToolEvent) -> Dict[str, Any]:
    """`request` (and `result` after a tool) in the hook's payload mode."""
    if hook.payload == "full":
        bodies = {"request": event.request}
        if event.result is not None:
            bodies["result"] = event.result
        return bodies
    bodies = {"request": redact_request(event.request, event.phase)}
    if event.result is not None:
        bodies["result"] = redact_result(event.result)
    return bodies


def affected_paths(event: ToolEvent) -> List[Dict[str, str]]:
    """The spec's allowlisted `affected_paths`: only `request.path` of file tools, only if safe."""
    kind = {"read": "read_target", "ffgrep": "read_target", "write": "write_target",
            "hash_edit": "write_target"}.get(event.tool_name)
    path = event.request.get("path") if kind else None
    if not isinstance(path, str) or not _is_contained_path(path, event.context["cwd"]):
        return []
    return [{"path": path, "kind": kind, "source": "request.path"}]


def _is_contained_path(path: str, cwd: str) -> bool:
    if not path or len(path) > AFFECTED_PATH_MAX_CHARS or "\x00" in path:
        return False
    if ".." in path.replace("\\", "/").split("/"):
        return False
    root = os.path.realpath(cwd)
    resolved = os.path.realpath(os.path.join(root, path))
    return resolved == root or resolved.startswith(root.rstrip(os.sep) + os.sep)


def payload_envelope(
    hook: HookDefinition, event: ToolEvent, bodies: Mapping[str, Any],
    payload: Mapping[str, Any], payload_ref: Optional[Mapping[str, Any]],
    legacy: Mapping[str, Any],
) -> Dict[str, Any]:
    """The `magi-code.tool_hook` v1 envelope, in the spec's field order."""
    envelope = {
        "schema": PAYLOAD_SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "phase": event.phase,
        "hook": {"label": hook.label, "index": hook.index, "failure_policy": hook.failure_policy,
                 "payload_mode": hook.payload},
        "tool": {"name": event.tool_name, "call_id": event.call_id},
        "context": dict(event.context, timestamp=utc_timestamp()),
        "affected_paths": affected_paths(event),
        "payload": payload,
        "payload_ref": payload_ref,
        "cwd": event.context["cwd"],
        "payload_mode": hook.payload,
    }
    envelope.update(legacy)
    return envelope


@dataclass
class PreparedPayload:
    """Hook stdin bytes, and the payload_ref folder to remove once the hook has ended."""

    stdin: bytes
    spill_dir: Optional[str] = None

    def cleanup(self) -> None:
        if self.spill_dir is not None:
            _remove_spill_dir(self.spill_dir)
            self.spill_dir = None


def prepare_payload(hook: HookDefinition, event: ToolEvent) -> PreparedPayload:
    """Hook stdin, at most STDIN_MAX_BYTES: inline, else payload_ref, else omitted_too_large."""
    bodies = payload_bodies(hook, event)
    inline = payload_envelope(hook, event, bodies, {"inline": True, "status": "inline",
                                                    "data": bodies}, None, bodies)
    stdin = dump_json(inline)
    if len(stdin) <= STDIN_MAX_BYTES:
        return PreparedPayload(stdin)
    spilled = dump_json(bodies)
    if len(spilled) <= PAYLOAD_REF_MAX_BYTES:
        spill = _write_spill_file(spilled)
        if spill is not None:
            spill_dir, ref = spill
            ref["payload_mode"] = hook.payload
            summaries = _body_summaries(bodies, "moved_to_payload_ref", len(spilled), None)
            envelope = payload_envelope(hook, event, bodies, {"inline": False,
                                        "status": "referenced"}, ref, summaries)
            try:
                return PreparedPayload(_bounded(dump_json(envelope)), spill_dir)
            except PayloadTooLarge:
                _remove_spill_dir(spill_dir)
                raise
        reason = "payload_ref_unavailable"
    else:
        reason = "exceeds_payload_ref_max_bytes"
    summaries = _body_summaries(bodies, "omitted_too_large", len(spilled), reason)
    envelope = payload_envelope(hook, event, bodies, {"inline": False,
                                "status": "omitted_too_large"}, None, summaries)
    return PreparedPayload(_bounded(dump_json(envelope)))


class PayloadTooLarge(MagihookError):
    """Even with the bodies summarized, the envelope (its context strings) passes 1 MiB."""


def _bounded(stdin: bytes) -> bytes:
    if len(stdin) > STDIN_MAX_BYTES:
        raise PayloadTooLarge("hook payload is larger than %d bytes even after summaries"
                              % STDIN_MAX_BYTES)
    return stdin


def _body_summaries(
    bodies: Mapping[str, Any], status: str, original_bytes: int, reason: Optional[str]
) -> Dict[str, Any]:
    summary: Dict[str, Any] = {"status": status, "original_bytes": original_bytes,
                               "omitted_fields": list(bodies)}
    if reason is not None:
        summary["reason"] = reason
    return {field: dict(summary) for field in bodies}


def _write_spill_file(data: bytes) -> Optional[Tuple[str, Dict[str, Any]]]:
    """Write bodies to a fresh private folder; (folder, payload_ref) or None if it can't be."""
    import hashlib
    import tempfile

    try:
        folder = tempfile.mkdtemp(prefix="magihook-payload-")  # 0700 by construction
    except OSError:
        return None
    path = os.path.join(folder, "payload.json")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC, 0o600)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
    except OSError:
        _remove_spill_dir(folder)
        return None
    return folder, {
        "path": path,
        "bytes": len(data),
        "payload_mode": None,
        "media_type": "application/json",
        "digest_sha256": "sha256:" + hashlib.sha256(data).hexdigest(),
    }


def _remove_spill_dir(folder: str) -> None:
    for name in os.listdir(folder) if os.path.isdir(folder) else ():
        try:
            os.unlink(os.path.join(folder, name))
        except OSError:
            pass
    try:
        os.rmdir(folder)
    except OSError:
        pass


_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


# =================================================================================================
# 9. Preflight
# =================================================================================================

PREFLIGHT_CHARACTERS = "$~`{}"
_SHELL_BREAKS = " \t\n\r;&|()<>\"'="


def preflight_rejection(command: str, absolute_paths: bool) -> Optional[str]:
    """Why the spec's conservative preflight rejects a hook command string, or None.

    The reason names the rule, never the command text.
    """
    if not command.strip():
        return "command is empty"
    if "\x00" in command:
        return "command contains a NUL byte"
    for character in PREFLIGHT_CHARACTERS:
        if character in command:
            return "command contains %r" % character
    words = _command_words(command)
    if "cd" in words:
        return "command uses cd"
    for word in words:
        if ".." in word.split("/"):
            return "command has a '..' path component"
        if not absolute_paths and word.startswith("/"):
            return "command has an absolute path and tools.bash.absolute_paths is false"
    return None


def _command_words(command: str) -> List[str]:
    """Split at blanks, quotes and shell operators, so `x&&cd y` and `a="/etc"` are seen too."""
    words, current = [], []
    for character in command:
        if character in _SHELL_BREAKS:
            if current:
                words.append("".join(current))
                current = []
        else:
            current.append(character)
    if current:
        words.append("".join(current))
    return words


# =================================================================================================
# 10. Process runner
# =================================================================================================

@dataclass(frozen=True)
class HookOutcome:
    """How one hook process ended.  `category` is None on success."""

    category: Optional[str]
    message: Optional[str]
    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: Optional[int] = None
    elapsed_ms: int = 0


def run_hook_process(
    command: str,
    cwd: str,
    stdin: bytes,
    timeout_seconds: float,
    stdout_max_bytes: int,
    stderr_max_bytes: int,
    env: Optional[Mapping[str, str]] = None,
) -> HookOutcome:
    """Run `/bin/bash -lc command` in its own process group and classify how it ended.

    The whole group is killed when the hook exits, times out or passes a cap, so neither a
    sleeping grandchild nor one that holds a pipe can outlive or stall the call.  Any exception
    (SIGTERM turned into Interrupted, say) still kills the group on its way out.
    """
    import subprocess

    started = time.monotonic()
    try:
        process = subprocess.Popen(
            HOOK_SHELL + (command,), cwd=cwd, env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            close_fds=True,
        )
    except (OSError, ValueError) as exc:
        return HookOutcome("runner", _spawn_failure(exc, cwd), elapsed_ms=_elapsed_ms(started))
    try:
        return _communicate(process, stdin, started, timeout_seconds,
                            (stdout_max_bytes, stderr_max_bytes))
    finally:
        _end_process_group(process)


def _communicate(
    process: Any, stdin: bytes, started: float, timeout: float, caps: Tuple[int, int]
) -> HookOutcome:
    """One selector loop over stdin, stdout, stderr and the hook's exit (CPython's pattern).

    Differences from subprocess._communicate: reads stop at the byte caps, the loop ends when the
    hook exits (not when the pipes close, which a grandchild can delay forever), and stdin writes
    are non-blocking so a hook that never reads cannot stall us past the deadline.
    """
    import selectors

    deadline = started + timeout
    streams = {process.stdout.fileno(): 0, process.stderr.fileno(): 1}
    captured: List[List[bytes]] = [[], []]
    sizes = [0, 0]
    stdin_error: Optional[OSError] = None
    view = memoryview(stdin)
    exit_fd = _open_pidfd(process.pid)
    with selectors.DefaultSelector() as selector:
        for fd in streams:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        if view:
            os.set_blocking(process.stdin.fileno(), False)
            selector.register(process.stdin.fileno(), selectors.EVENT_WRITE)
        else:
            process.stdin.close()
        if exit_fd is not None:
            selector.register(exit_fd, selectors.EVENT_READ)
        try:
            exited = False
            while not exited:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    _kill_group(process.pid)
                    return HookOutcome("timeout", "hook timed out after %g s" % timeout,
                                       elapsed_ms=_elapsed_ms(started))
                wait = remaining if exit_fd is not None else min(remaining, EXIT_POLL_SECONDS)
                for key, _ in selector.select(wait):
                    fd = key.fd
                    if fd == exit_fd:
                        exited = True
                    elif fd in streams:
                        if not _read_into(fd, streams[fd], captured, sizes, selector):
                            continue
                    else:
                        try:
                            written = os.write(fd, view[:READ_CHUNK])
                            view = view[written:]
                        except BlockingIOError:
                            written = 0
                        except BrokenPipeError:
                            # The hook stopped reading; that alone is not a failure (spec).
                            view = view[:0]
                        except OSError as exc:
                            stdin_error, view = exc, view[:0]
                        if not view:
                            selector.unregister(fd)
                            process.stdin.close()
                over = _over_cap(sizes, caps)
                if over is not None:
                    _kill_group(process.pid)
                    return HookOutcome(
                        "output-limit",
                        "hook %s exceeded %d bytes" % (("stdout", "stderr")[over], caps[over]),
                        elapsed_ms=_elapsed_ms(started))
                exited = exited or _has_exited(process.pid)
            # The hook is gone.  End what it left in its group (so nothing more is written), then
            # take what is still in the pipes, bounded by the caps: a detached (setsid)
            # grandchild may keep writing.
            _kill_group(process.pid)
            for fd, index in streams.items():
                while (fd in selector.get_map() and _over_cap(sizes, caps) is None
                       and _read_into(fd, index, captured, sizes, selector)):
                    pass
        finally:
            if exit_fd is not None:
                os.close(exit_fd)
    status = _reap(process)
    elapsed = _elapsed_ms(started)
    over = _over_cap(sizes, caps)
    if over is not None:
        return HookOutcome("output-limit",
                           "hook %s exceeded %d bytes" % (("stdout", "stderr")[over], caps[over]),
                           elapsed_ms=elapsed)
    stdout, stderr = b"".join(captured[0]), b"".join(captured[1])
    if status != 0:
        return HookOutcome("exit", _exit_message(status), stdout, stderr, status, elapsed)
    if stdin_error is not None:
        return HookOutcome("stdin", "writing hook stdin failed (%s)" % _errno_name(stdin_error),
                           stdout, stderr, status, elapsed)
    return HookOutcome(None, None, stdout, stderr, 0, elapsed)


def _read_into(fd: int, index: int, captured: List[List[bytes]], sizes: List[int],
               selector: Any) -> bool:
    """Read what is there; False at EOF or when nothing is ready (the pipe is then done)."""
    try:
        data = os.read(fd, READ_CHUNK)
    except BlockingIOError:
        return False
    if not data:
        selector.unregister(fd)
        return False
    sizes[index] += len(data)
    captured[index].append(data)
    return True


def _over_cap(sizes: List[int], caps: Tuple[int, int]) -> Optional[int]:
    for index in (0, 1):
        if sizes[index] > caps[index]:
            return index
    return None


def _open_pidfd(pid: int) -> Optional[int]:
    try:
        return os.pidfd_open(pid)  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return None


def _has_exited(pid: int) -> bool:
    """Whether the hook has exited, without reaping it: its pid (the group id) stays ours."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _reap(process: Any) -> int:
    """Reap the exited (or killed) hook: its exit status, or minus the signal that ended it."""
    try:
        _, status = os.waitpid(process.pid, 0)
    except ChildProcessError:
        status = 0
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    process.returncode = code  # so Popen does not try to reap it again later
    return code


def _exit_message(status: int) -> str:
    if status < 0:
        import signal

        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = "signal %d" % -status
        return "hook was killed by %s" % name
    return "hook exited with status %d" % status


def _kill_group(pgid: int) -> None:
    import signal

    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _end_process_group(process: Any) -> None:
    """Kill whatever is left of the hook's group, reap the hook, close our pipe ends.

    The group is killed before the leader is reaped: until then its pid, the group id, cannot
    be reused by an unrelated process.
    """
    if process.returncode is None:
        _kill_group(process.pid)
        _reap(process)
    for pipe in (process.stdin, process.stdout, process.stderr):
        try:
            pipe.close()
        except OSError:
            pass


def _spawn_failure(exc: BaseException, cwd: str) -> str:
    if isinstance(exc, OSError) and exc.filename == cwd:
        if isinstance(exc, NotADirectoryError):
            return "hook could not start: working directory is not a directory"
        if isinstance(exc, FileNotFoundError):
            return "hook could not start: working directory does not exist"
        return "hook could not start: working directory unusable (%s)" % _errno_name(exc)
    if isinstance(exc, OSError):
        return "hook could not start: shell unavailable (%s)" % _errno_name(exc)
    return "hook could not start"


def _errno_name(exc: OSError) -> str:
    import errno

    return errno.errorcode.get(exc.errno or 0, "error")


def _elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


# =================================================================================================
# 11. Injection
# =================================================================================================

@dataclass(frozen=True)
class Injection:
    """The validated outcome of one injecting hook: an audit status and its accepted items."""

    status: str
    items: Tuple[Dict[str, str], ...] = ()
    byte_count: int = 0


def parse_context_items(stdout: bytes, max_bytes: int) -> Injection:
    """The spec's all-or-nothing `{"context_items": [{"role": "user", "content": ...}]}` check.

    Empty or blank stdout means the hook had nothing to add: `success` with no items.
    """
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError:
        return Injection("invalid_json")
    if not text.strip():
        return Injection("success")
    try:
        document = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return Injection("invalid_json")
    if not isinstance(document, dict) or set(document) != {"context_items"}:
        return Injection("invalid_shape")
    items = document["context_items"]
    if not isinstance(items, list):
        return Injection("invalid_shape")
    accepted = []
    total = 0
    for item in items:
        if not isinstance(item, dict) or set(item) != {"role", "content"}:
            return Injection("invalid_shape")
        if item["role"] != "user":
            return Injection("unsupported_role")
        content = item["content"]
        if not isinstance(content, str) or not content.strip():
            return Injection("empty_content")
        total += len(content.encode("utf-8", "surrogatepass"))
        accepted.append({"role": "user", "content": content})
    if total > max_bytes:
        return Injection("over_limit", (), total)
    return Injection("success", tuple(accepted), total)


# =================================================================================================
# 12. Records and sessions
# =================================================================================================

def session_event(kind: str, payload: Mapping[str, Any]) -> Dict[str, Any]:
    """One session event as it is printed and written: `{"type", "timestamp", "payload"}`."""
    return {"type": kind, "timestamp": utc_timestamp(), "payload": dict(payload)}


def hook_activity_id(hook: HookDefinition, event: ToolEvent) -> str:
    return "hook:%s:%s:%d" % (event.call_id or event.tool_name, hook.phase, hook.index)


def lifecycle_payload(
    hook: HookDefinition, event: ToolEvent, status: str,
    outcome: Optional[HookOutcome] = None,
) -> Dict[str, Any]:
    """A `hook_lifecycle` / `hook_diagnostic` payload: exactly the spec's allowlist."""
    failed = outcome is not None and outcome.category is not None
    return {
        "phase": hook.phase,
        "label": sanitize_message(hook.label, 80),
        "target_tool": event.tool_name,
        "status": status,
        "policy": hook.failure_policy,
        "category": outcome.category if failed else None,
        "target_ran": hook.phase != "before_tool",
        "tool_call_id": event.call_id,
        "activity_id": hook_activity_id(hook, event),
        "hook_index": hook.index,
        "elapsed_ms": outcome.elapsed_ms if outcome is not None else None,
        "message": sanitize_message(outcome.message) if failed and outcome.message else None,
    }


def injection_audit_payload(
    hook: HookDefinition, event: ToolEvent, injection: Injection
) -> Dict[str, Any]:
    """A `hook_context_injection` payload: exactly the spec's allowlist, never the content."""
    return {
        "schema_version": SCHEMA_VERSION,
        "phase": hook.phase,
        "label": sanitize_message(hook.label, 80),
        "target_tool": event.tool_name,
        "status": injection.status,
        "item_count": len(injection.items),
        "byte_count": injection.byte_count,
        "max_bytes": hook.provider_context_max_bytes,
        "hook_index": hook.index,
    }


def context_item_payload(
    hook: HookDefinition, event: ToolEvent, item_index: int, item: Mapping[str, str]
) -> Dict[str, Any]:
    """A `provider_context_item` payload: the one validated item it records, and where from."""
    return {
        "phase": hook.phase,
        "target_tool": event.tool_name,
        "tool_call_id": event.call_id,
        "hook_index": hook.index,
        "item_index": item_index,
        "role": item["role"],
        "content": item["content"],
    }


def failure_warning(hook: HookDefinition, event: ToolEvent, outcome: HookOutcome) -> str:
    """The one sanitized warning line for a failed hook under policy `warn`."""
    return sanitize_message(
        "hook %s (%s #%d, %s) failed: %s: %s" % (
            hook.label, hook.phase, hook.index, event.tool_name, outcome.category,
            outcome.message or "failed"),
        400,
    )


class SessionFile:
    """Appends events to a JSON Lines session file, one locked write per event.

    The lock (flock) makes each line whole when several magihook processes share the file.  A
    line torn by a writer that was killed mid-write is closed with a newline before the next
    append, so it stays one corrupt line that readers skip instead of swallowing the next record.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd: Optional[int] = None

    def append(self, event: Mapping[str, Any]) -> None:
        import fcntl

        line = dump_json(event) + b"\n"
        if self._fd is None:
            self._fd = self._open()
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            end = os.lseek(self._fd, 0, os.SEEK_END)
            if end and os.pread(self._fd, 1, end - 1) != b"\n":
                line = b"\n" + line
            _write_all(self._fd, line)
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _open(self) -> int:
        folder = os.path.dirname(self.path)
        if folder:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | _O_CLOEXEC
        return os.open(self.path, flags, 0o600)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


# =================================================================================================
# 13. Display
# =================================================================================================

DISPLAY_SEPARATOR = " · "
INJECTED_CONTENT_MAX_CHARS = 200


def lifecycle_row(payload: Mapping[str, Any]) -> Dict[str, Any]:
    """The display row for one `hook_lifecycle` record (`started` shows as `running`)."""
    status = "running" if payload["status"] == "started" else payload["status"]
    parts = [payload["phase"], payload["label"], payload["target_tool"], status]
    row = {
        "phase": payload["phase"],
        "label": payload["label"],
        "target_tool": payload["target_tool"],
        "status": status,
        "activity_id": payload["activity_id"],
        "parent_activity_id": payload["tool_call_id"],
    }
    if status == "failed":
        row["category"] = payload["category"]
        row["policy"] = payload["policy"]
        parts += [payload["category"], payload["policy"]]
    row["text"] = DISPLAY_SEPARATOR.join(str(part) for part in parts)
    return row


def injection_rows(
    audit: Mapping[str, Any], contents: Sequence[str], shown: InjectedContentDisplay,
    parent_activity_id: Optional[str],
) -> List[Dict[str, Any]]:
    """Rows for one `hook_context_injection` audit, one per enabled surface."""
    count = audit["item_count"]
    text = DISPLAY_SEPARATOR.join((
        "provider context injection", audit["label"], audit["status"],
        "%d item%s" % (count, "" if count == 1 else "s"), "%d bytes" % audit["byte_count"]))
    rows = []
    for surface, on in (("transcript", shown.show_in_transcript),
                        ("activity_tree", shown.show_in_activity_tree)):
        if not on:
            continue
        row = {
            "surface": surface,
            "phase": audit["phase"],
            "label": audit["label"],
            "target_tool": audit["target_tool"],
            "status": audit["status"],
            "item_count": count,
            "byte_count": audit["byte_count"],
            "parent_activity_id": parent_activity_id if surface == "activity_tree" else None,
            "text": text,
        }
        if shown.style == "content" and contents:
            row["content"] = [_display_content(content) for content in contents]
        rows.append(row)
    return rows


def _display_content(content: str) -> str:
    cleaned = sanitize_message(content, INJECTED_CONTENT_MAX_CHARS)
    return cleaned


# =================================================================================================
# 14. Pipeline (the Python API)
# =================================================================================================

class PhaseRun:
    """Everything one `run_phase` call produces, gathered in the order it happens."""

    def __init__(self, settings: Settings, session: Optional[SessionFile],
                 on_row: Optional[Callable[[Mapping[str, Any]], None]]) -> None:
        self.settings = settings
        self.session = session
        self.on_row = on_row
        self.events: List[Dict[str, Any]] = []
        self.warnings: List[str] = []
        self.display: List[Dict[str, Any]] = []
        self.context_items: List[Dict[str, str]] = []

    def record(self, kind: str, payload: Mapping[str, Any]) -> None:
        event = session_event(kind, payload)
        self.events.append(event)
        if self.session is not None:
            self.session.append(event)

    def show(self, rows: Sequence[Dict[str, Any]]) -> None:
        for row in rows:
            self.display.append(row)
            if self.on_row is not None:
                self.on_row(row)

    def lifecycle(self, hook: HookDefinition, event: ToolEvent, status: str,
                  outcome: Optional[HookOutcome] = None) -> None:
        payload = lifecycle_payload(hook, event, status, outcome)
        self.record("hook_lifecycle", payload)
        if self.settings.show_in_tui:
            self.show([lifecycle_row(payload)])


def run_phase(
    settings: Settings,
    phase: str,
    event: Mapping[str, Any],
    *,
    session_path: Optional[str] = None,
    cwd: Optional[str] = None,
    on_row: Optional[Callable[[Mapping[str, Any]], None]] = None,
) -> Dict[str, Any]:
    """Run one phase's matching hooks for one event; return the result dict the CLI prints.

    `event` is the DESIGN.md input object.  Raises InputError for a malformed event.  With
    `session_path`, every event is also appended to that JSON Lines file.  `on_row` is called
    with each display row as it happens (live drawing).
    """
    tool_event = parse_event(phase, event, cwd)
    hooks = matching_hooks(settings, phase, tool_event.tool_name) if tool_event.wrapped else []
    session = SessionFile(session_path) if session_path and hooks else None
    run = PhaseRun(settings, session, on_row)
    try:
        verdict = _run_hooks(run, hooks, tool_event)
    finally:
        if session is not None:
            session.close()
    return result_document(run, tool_event, verdict)


def _run_hooks(run: PhaseRun, hooks: Sequence[HookDefinition], event: ToolEvent) -> str:
    """Run hooks in array order until one blocks or fails the turn; return the verdict."""
    pending: List[Tuple[HookDefinition, Tuple[Dict[str, str], ...]]] = []
    verdict = "continue"
    for hook in hooks:
        outcome = _run_one_hook(run, hook, event)
        if outcome.category is not None:
            verdict = _apply_failure_policy(run, hook, event, outcome)
        if hook.injects:
            injection = (parse_context_items(outcome.stdout, hook.provider_context_max_bytes)
                         if outcome.category is None else Injection("hook_failed"))
            audit = injection_audit_payload(hook, event, injection)
            run.record("hook_context_injection", audit)
            run.show(injection_rows(audit, [item["content"] for item in injection.items],
                                    run.settings.injected_content, event.call_id))
            if injection.items:
                pending.append((hook, injection.items))
        if verdict != "continue":
            return verdict
    # Items reach the provider only when the whole phase continues, so they are recorded last.
    for hook, items in pending:
        for index, item in enumerate(items):
            run.record("provider_context_item", context_item_payload(hook, event, index, item))
            run.context_items.append(dict(item))
    return verdict


def _run_one_hook(run: PhaseRun, hook: HookDefinition, event: ToolEvent) -> HookOutcome:
    run.lifecycle(hook, event, "started")
    outcome = _execute(hook, event, run.settings)
    run.lifecycle(hook, event, "success" if outcome.category is None else "failed", outcome)
    return outcome


def _execute(hook: HookDefinition, event: ToolEvent, settings: Settings) -> HookOutcome:
    """Preflight, payload, process: every way a hook can fail ends as a HookOutcome."""
    started = time.monotonic()
    rejection = preflight_rejection(hook.command, settings.absolute_paths)
    if rejection is not None:
        return HookOutcome("runner", "command rejected by preflight: " + rejection,
                           elapsed_ms=_elapsed_ms(started))
    try:
        prepared = prepare_payload(hook, event)
    except PayloadTooLarge as exc:
        return HookOutcome("stdin", str(exc), elapsed_ms=_elapsed_ms(started))
    except (ValueError, TypeError, RecursionError, OSError):
        return HookOutcome("stdin", "hook payload envelope could not be built",
                           elapsed_ms=_elapsed_ms(started))
    try:
        return run_hook_process(hook.command, event.context["cwd"], prepared.stdin,
                                hook.timeout_seconds, hook.stdout_max_bytes, hook.stderr_max_bytes)
    finally:
        prepared.cleanup()


def _apply_failure_policy(run: PhaseRun, hook: HookDefinition, event: ToolEvent,
                          outcome: HookOutcome) -> str:
    """The spec's failure policy table: what a failed hook does to the call."""
    policy = hook.failure_policy
    if policy == "ignore":
        return "continue"
    run.record("hook_diagnostic", lifecycle_payload(hook, event, "failed", outcome))
    if policy == "warn":
        run.warnings.append(failure_warning(hook, event, outcome))
        return "continue"
    return "block" if policy == "block" and event.phase == "before_tool" else "fail"


def result_document(run: PhaseRun, event: ToolEvent, verdict: str) -> Dict[str, Any]:
    """The one JSON result (DESIGN.md "The result")."""
    if event.phase == "after_tool":
        tool_result: Any = event.result
    elif verdict == "block":
        tool_result = {"tool_name": event.tool_name, "call_id": event.call_id, "success": False,
                       "blocked": True, "content": BLOCKED_CONTENT}
    else:
        tool_result = None
    return {
        "schema": RESULT_SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "phase": event.phase,
        "tool": {"name": event.tool_name, "call_id": event.call_id},
        "verdict": verdict,
        "tool_result": tool_result,
        "context_items": run.context_items if verdict == "continue" else [],
        "events": run.events,
        "warnings": run.warnings,
        "display": run.display,
    }


def exit_code_for(result: Mapping[str, Any]) -> int:
    return VERDICT_EXIT_CODES[result["verdict"]]


# =================================================================================================
# 15. CLI
# =================================================================================================

USAGE = """\
usage: magihook run --phase PHASE [--config PATH] [--session PATH] [--explain]
       magihook run --stream [--config PATH] [--session PATH]
       magihook validate [--config PATH]
       magihook config [--config PATH] [--format json|toml]
       magihook schema
       magihook replay SESSION.jsonl [--config PATH] [--json]
       magihook --version"""

# Per command: option -> True when it takes a value, False for a flag; and positional count.
COMMAND_OPTIONS = MappingProxyType({
    "run": ({"--phase": True, "--config": True, "--session": True, "--stream": False,
             "--explain": False, "--tui": False}, 0),
    "validate": ({"--config": True}, 0),
    "config": ({"--config": True, "--format": True}, 0),
    "schema": ({}, 0),
    "replay": ({"--config": True, "--json": False}, 1),
})


def parse_command_line(argv: Sequence[str]) -> Tuple[str, Dict[str, Any], List[str]]:
    """A tiny parser (argparse costs every tool call its import): (command, options, args)."""
    command = argv[0]
    if command not in COMMAND_OPTIONS:
        raise UsageError("unknown command %r" % command)
    spec, positional_count = COMMAND_OPTIONS[command]
    options: Dict[str, Any] = {}
    positionals: List[str] = []
    words = list(argv[1:])
    while words:
        word = words.pop(0)
        name, has_inline, inline = word.partition("=")
        if word.startswith("--") and name in spec:
            if name in options:
                raise UsageError("%s given twice" % name)
            if spec[name]:
                if has_inline:
                    options[name] = inline
                elif words:
                    options[name] = words.pop(0)
                else:
                    raise UsageError("%s needs a value" % name)
            elif has_inline:
                raise UsageError("%s takes no value" % name)
            else:
                options[name] = True
        elif word.startswith("-") and word != "-":
            raise UsageError("unknown option %r for %s" % (word, command))
        else:
            positionals.append(word)
    if len(positionals) != positional_count:
        raise UsageError("%s takes %d argument%s" % (
            command, positional_count, "" if positional_count == 1 else "s"))
    return command, options, positionals


class Output:
    """The CLI's one way out: JSON or text lines to stdout or stderr, and a vanished reader."""

    def __init__(self, stdout: Any = None, stderr: Any = None) -> None:
        self.stdout = stdout if stdout is not None else sys.stdout.buffer
        self.stderr = stderr if stderr is not None else sys.stderr.buffer
        self.reader_gone = False  # stdout's reader closed its end: a --stream stops

    def json(self, value: Any) -> None:
        self._write(self.stdout, dump_json(value) + b"\n")

    def text(self, line: str) -> None:
        self._write(self.stdout, line.encode("utf-8", "replace") + b"\n")

    def error(self, line: str) -> None:
        self._write(self.stderr, line.encode("utf-8", "replace") + b"\n")

    def _write(self, stream: Any, data: bytes) -> None:
        try:
            stream.write(data)
            stream.flush()
        except BrokenPipeError:
            self.reader_gone = self.reader_gone or stream is self.stdout
            # The reader went away: say nothing more, and keep the interpreter's final flush
            # from printing a traceback about it.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)


def cli_run(options: Mapping[str, Any], out: Output) -> int:
    if options.get("--stream"):
        return cli_run_stream(options, out)
    phase = options.get("--phase")
    if phase is None:
        raise UsageError("run needs --phase PHASE")
    if phase not in PHASES:
        raise UsageError("unknown phase %r: expected one of %s" % (phase, ", ".join(PHASES)))
    settings = load_settings(options.get("--config"))
    raw = sys.stdin.buffer.read(EVENT_MAX_BYTES + 1)
    result = run_phase(settings, phase, decode_event(raw), session_path=options.get("--session"))
    out.json(result)
    return exit_code_for(result)


def cli_run_stream(options: Mapping[str, Any], out: Output) -> int:
    """`run --stream`: one NDJSON event a line in, one result (or `{"error"}`) line out each.

    Every line goes through the same steps as `run` (settings, decode_event, run_phase); a bad
    line, or a settings file that became invalid, gives one error line and the stream goes on.
    The stream ends at end of input (exit 0) or when the reader of stdout goes away.
    """
    for other in ("--phase", "--explain"):
        if other in options:
            raise UsageError("--stream cannot be combined with %s (each line names its phase)"
                             % other)
    watcher = SettingsWatcher(options.get("--config"))
    session_path = options.get("--session")
    for line in stream_lines(sys.stdin.buffer):
        if not line.strip(b" \t\r"):
            continue
        try:
            settings = watcher.current()
            document = decode_event(line)
            result = run_phase(settings, stream_phase(document), document,
                               session_path=session_path)
        except Interrupted:
            raise
        except MagihookError as exc:
            out.json({"error": error_text(exc)})
        else:
            out.json(result)
        if out.reader_gone:
            break
    return 0


def stream_lines(stream: Any) -> Iterator[bytes]:
    """Lines of a binary stream without their newline, as they arrive.

    A line is read up to EVENT_MAX_BYTES + 1 bytes: longer, it is yielded cut there (so
    decode_event rejects it for its size) and the rest of it is skipped.
    """
    while True:
        line = stream.readline(EVENT_MAX_BYTES + 1)
        if not line:
            return
        if line.endswith(b"\n"):
            line = line[:-1]
        elif len(line) > EVENT_MAX_BYTES:
            while True:
                rest = stream.readline(READ_CHUNK)
                if not rest or rest.endswith(b"\n"):
                    break
        yield line


def stream_phase(document: Mapping[str, Any]) -> str:
    """The `"phase"` field that a --stream event carries (run_phase accepts the key itself)."""
    if "phase" not in document:
        raise InputError("$.phase: missing (each --stream event names its phase: %s)"
                         % ", ".join(PHASES))
    phase = document["phase"]
    if not isinstance(phase, str) or phase not in PHASES:
        raise InputError("$.phase: expected one of %s" % ", ".join(PHASES))
    return phase


def error_text(exc: MagihookError) -> str:
    """The sanitized text of an error: the exit-2 stderr line and a --stream error line."""
    return sanitize_message(str(exc), 500)


def cli_validate(options: Mapping[str, Any], out: Output) -> int:
    env, cwd = os.environ, os.getcwd()
    path, found_by = discover_settings(options.get("--config"), env, cwd)
    if path is None:
        raise SettingsError("no settings file found (looked at --config, $MAGIHOOK_CONFIG, "
                            "./.magi-code/ and ~/.magi-code/)")
    settings_from_document(read_settings_document(path), path, found_by, _best_engine())
    out.text("ok: %s (found by %s)" % (path, found_by))
    return 0


def cli_config(options: Mapping[str, Any], out: Output) -> int:
    form = options.get("--format", "json")
    if form not in ("json", "toml"):
        raise UsageError("--format must be json or toml")
    document = settings_document(load_settings(options.get("--config"), engine=_best_engine()))
    if form == "toml":
        try:
            import tomli_w  # type: ignore[import-not-found]
        except ImportError:
            raise UsageError("--format toml needs the 'tomli-w' package") from None
        out.text(tomli_w.dumps(document).rstrip("\n"))
    else:
        out.text(json.dumps(document, indent=2))
    return 0


def cli_schema(options: Mapping[str, Any], out: Output) -> int:
    out.text(json.dumps(SETTINGS_SCHEMA, indent=2))
    return 0


def _best_engine() -> str:
    """jsonschema when it is installed (commands off the hot path), else the built-in check."""
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        return "builtin"
    return "jsonschema"


COMMANDS: Mapping[str, Callable[[Mapping[str, Any], Output], int]] = MappingProxyType({
    "run": cli_run,
    "validate": cli_validate,
    "config": cli_config,
    "schema": cli_schema,
})


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The CLI boundary: the only place errors become exit codes."""
    argv = list(sys.argv[1:] if argv is None else argv)
    out = Output()
    if argv == ["--version"]:
        out.text("magihook %s" % __version__)
        return 0
    if not argv or argv[0] in ("-h", "--help"):
        (out.text if argv else out.error)(USAGE)
        return 0 if argv else EXIT_USAGE
    restore = _terminate_on_signals()
    try:
        command, options, _ = parse_command_line(argv)
        return COMMANDS[command](options, out)
    except UsageError as exc:
        out.error("magihook: %s (see magihook --help)" % sanitize_message(str(exc), 300))
        return EXIT_USAGE
    except Interrupted as exc:
        out.error("magihook: interrupted by %s; hook processes were ended" % exc)
        return 128 + _signal_number(str(exc))
    except MagihookError as exc:
        out.error("magihook: %s" % error_text(exc))
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - the boundary: a bug, reported without a traceback
        out.error("magihook: internal error (%s); please report it" % type(exc).__name__)
        return EXIT_INTERNAL
    finally:
        restore()


def _terminate_on_signals() -> Callable[[], None]:
    """SIGTERM and SIGINT raise Interrupted, so the runner's cleanup kills the hook's group and
    removes payload_ref files before magihook exits.  Returns a function restoring the old
    handlers (main() may be called from a host program)."""
    # The C module: `import signal` builds its enums, ~0.5 ms of every call's start-up.
    import _signal

    names = {_signal.SIGTERM: "SIGTERM", _signal.SIGINT: "SIGINT"}

    def interrupt(signum: int, frame: Any) -> None:
        raise Interrupted(names[signum])

    previous = {}
    for signum in names:
        try:
            previous[signum] = _signal.signal(signum, interrupt)
        except ValueError:  # not the main thread: leave the host's handlers alone
            pass

    def restore() -> None:
        for signum, handler in previous.items():
            _signal.signal(signum, handler)

    return restore


def _signal_number(name: str) -> int:
    import signal

    return int(getattr(signal, name, signal.SIGTERM))


if __name__ == "__main__":
    sys.exit(main())
