"""Prove a refactor of the credential redaction changed no output: the old magihook (a git
revision) and the new one (this checkout) redact the same texts, and every difference is listed.

Usage: python3 bench/compare_outputs.py [--base REV] [--quick]

Each short text is also measured padded past 16 KiB (before and after a filler), where a long
text's own paths run.

Texts: every string literal of tests/test_redaction*.py (and each pair of neighbouring ones
joined by a space and by a newline), every text and key of tests/data/*.jsonl, every example and
near miss of both rule tables, and bench/corpus.py's kinds at several sizes, with and without
secrets.  Each text goes through redact_credentials, and each list of strings of the corpora
through redact_second_look, in two processes:
  - "fresh": before each text the old module forgets what it redacted before (its per-process
    budgets and compiled leads), as a new process would;
  - "warm": both modules first redact 24 MiB of corpus text and 3,000 short texts, so every
    switch the old module makes after enough text in one process has happened.
Exit status 1 when any output differs.
"""
from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import corpus  # noqa: E402

MIB = 1024 * 1024
DEFAULT_BASE = "421010c"
PAD = "\n" + "# note: a line of output, nothing in it = 1\n" * 400


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _test_sources(base):
    """The redaction test files, now and at BASE (tests removed since still give their texts)."""
    sources = []
    for name in sorted(os.listdir(os.path.join(ROOT, "tests"))):
        if name.startswith("test_redaction") and name.endswith(".py"):
            with open(os.path.join(ROOT, "tests", name), encoding="utf-8") as f:
                sources.append(f.read())
    listed = subprocess.run(["git", "-C", ROOT, "ls-tree", "--name-only", base, "tests/"], check=True,
                            capture_output=True, text=True).stdout.split()
    for path in listed:
        name = os.path.basename(path)
        if name.startswith("test_redaction") and name.endswith(".py"):
            sources.append(subprocess.run(["git", "-C", ROOT, "show", "%s:%s" % (base, path)], check=True,
                                          capture_output=True, text=True).stdout)
    return sources


def _test_literals(base):
    texts = []
    for source in _test_sources(base):
        found = [node.value for node in ast.walk(ast.parse(source))
                 if isinstance(node, ast.Constant) and isinstance(node.value, str)]
        texts.extend(found)
        texts.extend(a + " " + b for a, b in zip(found, found[1:]))
        texts.extend(a + "\n" + b for a, b in zip(found, found[1:]))
    return list(dict.fromkeys(texts))


def _corpus_records():
    texts, lists = [], []
    data = os.path.join(ROOT, "tests", "data")
    for name in sorted(os.listdir(data)):
        if name.endswith(".jsonl"):
            with open(os.path.join(data, name), encoding="utf-8") as f:
                for line in f:
                    record = json.loads(line)
                    strings = [v for v in record.values() if isinstance(v, str)]
                    texts.extend(strings)
                    lists.append(strings)
    return texts, lists


def _rule_texts(module):
    return [text for rule in module.token_rules() for text in (rule.example, rule.near_miss)]


def _bench_texts(quick):
    sizes = (100, 3000, 5000, 20000, 300000) if quick else (100, 1000, 3000, 5000, 10000, 20000, 70000,
                                                             300000, 2 * MIB)
    texts = []
    for kind in list(corpus.KINDS) + ["mixed"]:
        for size in sizes:
            plain = corpus.text(kind, size, seed=size)
            texts.append(plain)
            texts.append(corpus.with_secrets(plain, every=max(256, size // 8), seed=size)[0])
    return texts


def _forget(module):
    """What a fresh process of the old module has not done yet (a new module has none of it)."""
    for name in ("_PICKED_CHARS", "_NAMES_READ", "_LEAD_RES"):
        state = getattr(module, name, None)
        if isinstance(state, dict):
            state.clear()


def _warm_up(module):
    for kind in list(corpus.KINDS) + ["mixed"]:
        module.redact_credentials(corpus.with_secrets(corpus.text(kind, 2 * MIB, seed=7))[0])
    module.redact_credentials(corpus.with_secrets(corpus.text("mixed", 4 * MIB, seed=8))[0])
    for i in range(3000):
        module.redact_credentials(corpus.with_secrets(corpus.text("mixed", 600 + i % 7 * 900, seed=i),
                                                      every=300, seed=i)[0])


def _second_look(module, strings):
    """redacted mode's two steps over a payload made of STRINGS (as items, as an argv, under a
    credential name and in a note), as payload_bodies takes them."""
    original = {"argv": list(strings), "items": list(strings), "note": " ".join(strings),
                "env": [{"name": "API_KEY", "value": value} for value in strings[:2]]}
    if "removals" in inspect.signature(module.redact_tree).parameters:
        removals = {}
        bodies = {"request": module.redact_tree(original, removals)}
        return module.redact_second_look(bodies, {"request": original}, removals)
    return module.redact_second_look({"request": module.redact_tree(original)}, {"request": original})


def run(mode, base_path, base, quick):
    old = _load(base_path, "magihook_old")
    new = _load(os.path.join(ROOT, "magihook.py"), "magihook_new")
    literals = _test_literals(base)
    corpus_texts, lists = _corpus_records()
    short = list(dict.fromkeys(literals + corpus_texts + _rule_texts(old) + _rule_texts(new)))
    # Each short text again past _PICK_TEXT, where a long text's own paths run (the prose forms
    # found by the name passes), after and before a filler that holds no stem.
    texts = list(dict.fromkeys(short + [text + PAD for text in short] + [PAD + text for text in short]
                               + _bench_texts(quick)))
    if mode == "warm":
        _warm_up(old)
        _warm_up(new)
    differences = 0
    for text in texts:
        if mode == "fresh":
            _forget(old)
        if old.redact_credentials(text) != new.redact_credentials(text) \
                or old.sanitize_message(text) != new.sanitize_message(text):
            differences += 1
            print("DIFFERENT (%s): %r" % (mode, text[:200]))
    for strings in lists + [[a, b] for a, b in zip(literals, literals[1:])]:
        if mode == "fresh":
            _forget(old)
        if _second_look(old, strings) != _second_look(new, strings):
            differences += 1
            print("DIFFERENT second look (%s): %r" % (mode, strings))
    print("%s: %d texts, %d string lists, %d MiB, %d differences" % (
        mode, len(texts), len(lists) + len(literals) - 1, sum(map(len, texts)) // MIB, differences))
    return differences


def main():
    args = sys.argv[1:]
    base = args[args.index("--base") + 1] if "--base" in args else DEFAULT_BASE
    quick = "--quick" in args
    if "--mode" in args:
        sys.exit(1 if run(args[args.index("--mode") + 1], args[args.index("--path") + 1], base, quick) else 0)
    source = subprocess.run(["git", "-C", ROOT, "show", "%s:magihook.py" % base], check=True,
                            capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "magihook_old.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        failed = False
        for mode in ("fresh", "warm"):       # each in a process of its own
            command = [sys.executable, os.path.abspath(__file__), "--mode", mode, "--path", path, "--base", base]
            failed |= subprocess.run(command + (["--quick"] if quick else [])).returncode != 0
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
