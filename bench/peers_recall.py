"""magihook's recall on the public scanners' own test data, beside another magihook.py.

Reads gitleaks' rule tests, trufflehog's detector tests and detect-secrets' plugin tests, none of
which is committed here: each is read from a checkout or a git directory given on the command
line (the search tool's `fetch github:gitleaks/gitleaks` gives /work/.mirror/gitleaks+gitleaks/repo):

    python3 bench/peers_recall.py --gitleaks GIT_DIR --trufflehog GIT_DIR [--generated] [--misses]
        [--placeholders] [--base OTHER/magihook.py [--changes]]

gitleaks (cmd/generate/config/rules/*.go, read with `git show HEAD:path`): every string literal
that is a whole element of a rule's `tps` (positive) or `fps` (negative) list; a secret passed as
a literal to GenerateSampleSecrets(id, secret) is written as one of the lines it makes,
`id_token: secret`; tps generated at run time (secrets.NewSecret of a regex) are not read (counted),
unless --generated draws each from its regex (a seeded generator: the same cases every run).
trufflehog (pkg/detectors/NAME/*_test.go, integration tests left out; pkg/detectors/*_test.go
test the package's helpers, not a detector): every `input:` of a test
table that is a literal or a package-level literal variable; positive when its `want:` lists a
result, negative when it is nil or empty.  A positive of either counts as caught when
redact_credentials changes the text (their expected results are not substrings to look for: a
trufflehog result joins an id and a secret), a negative as kept when it does not.

detect-secrets (given as a checkout folder, first argument):

detect-secrets' tests are not committed here: check the repository out (the search tool's
`fetch github:Yelp/detect-secrets`, or `git clone`), and run with an interpreter that has
detect-secrets and pytest installed (its test modules import them):

    git --git-dir /work/.mirror/Yelp+detect-secrets/repo archive HEAD tests testing | tar x -C DIR
    bench/.venv-ds/bin/pip install pytest responses
    bench/.venv-ds/bin/python bench/peers_recall.py DIR [--base OTHER/magihook.py] [--misses]

Every `pytest.mark.parametrize` row of tests/plugins/*_test.py whose payload (`payload` or
`line`) is a string and whose expectation says a secret is there (`should_flag` True, or an
`expected_secret`) is a positive; `should_flag` False or no expected secret, a negative.  A
positive counts as caught when the expected secret is gone from redact_credentials' output (or,
without one, when the output changed); a negative as kept when the output is the input.
"""
import argparse
import codecs
import glob
import importlib
import importlib.util
import inspect
import os
import random
import re
import string
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _functions(module):
    found = [f for _, f in inspect.getmembers(module, inspect.isfunction)]
    for _, cls in inspect.getmembers(module, inspect.isclass):
        found += [f for _, f in inspect.getmembers(cls, inspect.isfunction)]
    return found


def _row_case(name, row):
    line = row.get("payload", row.get("line"))
    if not isinstance(line, str):
        return None
    if "should_flag" in row:
        return (name, line, row["should_flag"] is True, None)
    if "expected_secret" in row:
        return (name, line, bool(row["expected_secret"]), row["expected_secret"] or None)
    return None


def cases(folder):
    sys.path.insert(0, folder)
    found = []
    for path in sorted(glob.glob(os.path.join(folder, "tests", "plugins", "*_test.py"))):
        name = os.path.basename(path)
        try:
            module = importlib.import_module("tests.plugins." + name[:-3])
        except Exception as exc:  # noqa: BLE001 - a test module this interpreter cannot import
            print("skipped %s (%s)" % (name, type(exc).__name__))
            continue
        for function in _functions(module):
            for mark in getattr(function, "pytestmark", []):
                names = mark.args[0] if mark.name == "parametrize" else ""
                names = [n.strip() for n in (names.split(",") if isinstance(names, str) else names)]
                for values in (mark.args[1] if len(names) > 1 else ()):
                    case = _row_case(name, dict(zip(names, values)))
                    if case is not None:
                        found.append(case)
    return found


# -- gitleaks and trufflehog: Go test data read from a fetched git directory, never committed ----

_GO_TOKEN = re.compile(r'`[^`]*`|"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/|[A-Za-z_][A-Za-z0-9_.]*|\S', re.S)


def _go_tokens(source):
    """(kind, text) of a Go file: 'str' (the literal's value), 'word', 'punct'; comments dropped."""
    found = []
    for m in _GO_TOKEN.finditer(source):
        t = m.group()
        if t.startswith(("//", "/*")):
            continue
        if t[0] == "`":
            found.append(("str", t[1:-1]))
        elif t[0] == '"':
            try:
                found.append(("str", codecs.decode(t[1:-1].encode("latin-1", "backslashreplace"), "unicode_escape")))
            except (UnicodeError, ValueError):
                found.append(("str", t[1:-1]))
        else:
            found.append(("word" if t[0].isalnum() or t[0] == "_" else "punct", t))
    return found


def _git_files(git_dir, folder, suffix):
    listed = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", "HEAD", folder],
                            check=True, capture_output=True, text=True).stdout.split("\n")
    for path in listed:
        if path.endswith(suffix):
            yield path, subprocess.run(["git", "--git-dir", git_dir, "show", "HEAD:" + path], check=True,
                                       capture_output=True, text=True, errors="replace").stdout


def _block_end(toks, start):
    """Index after the bracketed expression that opens at the first `{` or `(` from START."""
    depth = 0
    start = next((i for i in range(start, len(toks)) if toks[i][1] in ("{", "(")), len(toks))
    for i in range(start, len(toks)):
        kind, t = toks[i]
        if kind == "punct" and t in "({[":
            depth += 1
        elif kind == "punct" and t in ")}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(toks)


def _whole_literals(toks, start, end):
    """The string literals of TOKS[START:END] that are whole elements (not a call's argument, a
    map key or part of a `+`), and those passed as GenerateSampleSecrets' secret, written as
    one of the lines it makes (`{identifier}_token: {secret}`)."""
    found, generated = [], 0
    for i in range(start, end):
        kind, t = toks[i]
        if kind != "str":
            continue
        before, after = toks[i - 1][1], toks[i + 1][1] if i + 1 < len(toks) else ""
        if before == "+" or after in ("+", ":"):
            continue
        if before == "," and toks[i - 2][0] == "str" and toks[i - 3][1] == "(" \
                and toks[i - 4][1].endswith("GenerateSampleSecrets"):
            found.append("%s_token: %s" % (toks[i - 2][1], t))
        elif before in ("{", ",") or (before == ":" and toks[i - 2][0] == "str" and t):
            found.append(t)           # (a path rule's tps map a file name to "": no text to read)
    for i in range(start, end):
        if toks[i][1].endswith("GenerateSampleSecrets") and not (
                toks[i + 2][0] == "str" and toks[i + 4][0] == "str" and toks[i + 5][1] == ")"):
            generated += 1
    return found, generated


def gitleaks_cases(git_dir, generate=False):
    """gitleaks' rule tests: each `tps`/`fps` literal of cmd/generate/config/rules/*.go; with
    GENERATE, also each tps element built at run time (GenerateSampleSecret(s) of a
    secrets.NewSecret(regex), a `+` of literals and generated secrets), generated here
    (_go_expression) with a seeded generator.  Returns the cases and how many tps were not read."""
    found, generated = [], 0
    rng = random.Random(23)
    for path, source in _git_files(git_dir, "cmd/generate/config/rules", ".go"):
        toks = _go_tokens(source)
        for i, (kind, t) in enumerate(toks):
            if kind == "word" and t in ("tps", "fps") and toks[i + 1][1] in (":", "=") and i + 2 < len(toks):
                end = _block_end(toks, i + 2)
                literals, skipped = _whole_literals(toks, i + 2, end)
                if generate and t == "tps":
                    built = _built_elements(toks, i + 2, end, rng)
                    literals += [value for value, _ in built]
                    skipped -= sum(1 for _, call in built if call)
                generated += skipped if t == "tps" else 0
                found.extend((os.path.basename(path), text, t == "tps", None) for text in literals)
    return found, generated


# -- gitleaks' generated test secrets --------------------------------------------------------------

# cmd/generate/config/utils/patterns.go: the character class each helper writes.
_GO_PATTERNS = {"utils.Numeric": "[0-9]", "utils.Hex": "[a-f0-9]", "utils.AlphaNumeric": "[a-z0-9]",
                "utils.AlphaNumericExtendedShort": "[a-z0-9_-]", "utils.AlphaNumericExtended": "[a-z0-9=_\\-]",
                "utils.AlphaNumericExtendedLong": "[a-z0-9\\/=_\\+\\-]"}


def _built_elements(toks, start, end, rng):
    """The tps elements of TOKS[START:END] that use secrets.NewSecret, built (the lines
    GenerateSampleSecrets / GenerateSampleSecret make are written as in _whole_literals), each
    with whether it is a GenerateSampleSecrets call (_whole_literals counts those as not read)."""
    found, i = [], start
    while i < end:
        call = toks[i][1] == "utils.GenerateSampleSecrets"
        if call or toks[i][1] == "utils.GenerateSampleSecret" or (
                toks[i][0] == "str" and toks[i - 1][1] in ("{", ",")):
            value, after = _go_expression(toks, i, rng)
            if value is not None and "secrets.NewSecret" in [t for _, t in toks[i:after]]:
                found.append((value, call))
                i = after
                continue
        i += 1
    return found


def _go_expression(toks, i, rng):
    """(value, index after) of the string expression at TOKS[I] (terms joined by `+`), or
    (None, I) when a term is not one _go_term builds."""
    value, i = _go_term(toks, i, rng)
    while value is not None and toks[i][1] == "+":
        more, i = _go_term(toks, i + 1, rng)
        value = None if more is None else value + more
    return value, i


def _go_term(toks, i, rng):
    kind, t = toks[i]
    if kind == "str":
        return t, i + 1
    if toks[i + 1][1] != "(":
        return None, i
    if t in _GO_PATTERNS and toks[i + 2][0] == "str" and toks[i + 3][1] == ")":
        return "%s{%s}" % (_GO_PATTERNS[t], toks[i + 2][1]), i + 4
    if t == "utils.Hex8_4_4_4_12" and toks[i + 2][1] == ")":
        return "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", i + 3
    args, j = [], i + 2
    while True:
        value, j = _go_expression(toks, j, rng)
        if value is None:
            return None, i
        args.append(value)
        if toks[j][1] != ",":
            break
        j += 1
    if toks[j][1] != ")":
        return None, i
    j += 1 + (toks[j + 1][1] == "...")
    if t == "secrets.NewSecret" and len(args) == 1:
        return _sample(args[0], rng), j
    if t == "utils.GenerateSampleSecrets" and len(args) == 2:
        return "%s_token: %s" % tuple(args), j
    if t == "utils.GenerateSampleSecret" and len(args) == 2:
        return '%s_api_token = "%s"' % tuple(args), j
    if t == "fmt.Sprintf" and args[0].count("%s") == len(args) - 1 and "%" not in args[0].replace("%s", ""):
        return args[0] % tuple(args[1:]), j
    return None, i


def _sample(pattern, rng):
    """A string PATTERN matches, drawn with RNG (an open repeat takes its least count)."""
    try:
        import re._parser as sre_parse  # Python 3.11+
    except ImportError:
        import sre_parse  # type: ignore[no-redef]
    return "".join(_sample_items(sre_parse.parse(pattern), rng))


_CATEGORY_CHARS = {"CATEGORY_DIGIT": "0123456789", "CATEGORY_WORD": string.ascii_letters + string.digits + "_",
                   "CATEGORY_SPACE": " "}


def _sample_items(items, rng):
    out = []
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(arg))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, sub = arg
            for _ in range(low if high > low + 64 else rng.randint(low, high)):
                out.extend(_sample_items(sub, rng))
        elif name == "SUBPATTERN":
            out.extend(_sample_items(arg[-1], rng))
        elif name == "BRANCH":
            out.extend(_sample_items(rng.choice(arg[1]), rng))
        elif name == "IN":
            out.append(rng.choice(_class_chars(arg)))
        elif name == "ANY":
            out.append(rng.choice(string.ascii_letters))
        elif name == "CATEGORY":
            out.append(rng.choice(_CATEGORY_CHARS.get(str(arg), "x")))
    return out


def _class_chars(arg):
    chars = []
    for op, value in arg:
        name = str(op)
        if name == "LITERAL":
            chars.append(chr(value))
        elif name == "RANGE":
            chars.extend(chr(c) for c in range(value[0], value[1] + 1))
        elif name == "CATEGORY":
            chars.extend(_CATEGORY_CHARS.get(str(value), ""))
    return chars or ["x"]


def _go_strings(toks):
    """Package-level `name = "literal"` (and `+`-joined literals) of a test file."""
    values = {}
    for i in range(1, len(toks) - 1):
        if toks[i][1] == "=" and toks[i - 1][0] == "word" and toks[i + 1][0] == "str":
            j, parts = i + 1, []
            while j < len(toks) and toks[j][0] == "str":
                parts.append(toks[j][1])
                if j + 1 < len(toks) and toks[j + 1][1] == "+":
                    j += 2
                else:
                    break
            values[toks[i - 1][1]] = "".join(parts)
    return values


def _go_value(toks, i, values):
    kind, t = toks[i]
    if kind == "str" and toks[i + 1][1] != "+":
        return t
    if t == "fmt.Sprintf" and toks[i + 1][1] == "(" and toks[i + 2][0] == "str":
        return _go_sprintf(toks, i + 2, values)
    return values.get(t) if kind == "word" and toks[i + 1][1] in (",", "}") else None


def _go_sprintf(toks, i, values):
    """fmt.Sprintf(FORMAT, a, b...) whose arguments are literals or literal variables, with %s
    and %v only (None otherwise)."""
    form, args = toks[i][1], []
    while toks[i + 1][1] == ",":
        kind, t = toks[i + 2]
        value = t if kind == "str" else values.get(t)
        if value is None or toks[i + 3][1] not in (",", ")"):
            return None
        args.append(value)
        i += 2
    pieces = re.split(r"%([sv%])", form)
    if toks[i + 1][1] != ")" or len(pieces) // 2 != len(args) + form.count("%%"):
        return None
    out, used = [pieces[0]], iter(args)
    for verb, text in zip(pieces[1::2], pieces[2::2]):
        out.append("%" if verb == "%" else next(used))
        out.append(text)
    return "".join(out)


def trufflehog_cases(git_dir):
    """trufflehog's detector tests: each `input:` of a test table, positive when its `want:` lists
    a secret, negative when it is nil or empty; inputs built at run time (fmt.Sprintf) are not read."""
    found, skipped = [], 0
    for path, source in _git_files(git_dir, "pkg/detectors", "_test.go"):
        # pkg/detectors/*_test.go test the package's helpers (an entropy function's `input:`
        # "aaaa…" and "" with a float `want:`), not a detector: only pkg/detectors/NAME/ is read.
        if path.endswith("_integration_test.go") or path.count("/") < 3:
            continue
        toks = _go_tokens(source)
        values = _go_strings(toks)
        for i in range(len(toks) - 2):
            if toks[i][1] != "input" or toks[i + 1][1] != ":":
                continue
            text = _go_value(toks, i + 2, values)
            want = next((j for j in range(i + 3, min(len(toks) - 2, i + 400))
                         if toks[j][1] in ("want", "input") and toks[j + 1][1] == ":"), None)
            if text is None or want is None or toks[want][1] != "want":
                skipped += 1
                continue
            expect = toks[want + 2][1]
            positive = expect not in ("nil", "[]string{}") and not (
                expect == "[" and toks[want + 5][1] == "{" and toks[want + 6][1] == "}")
            found.append((path.split("/")[-2], text, positive, None))
    return found, skipped


def caught(module, case):
    out = module.redact_credentials(case[1])
    return case[3] not in out if case[3] else out != case[1]


# --placeholders: a positive whose secret is a placeholder is left out (magihook keeps such values
# on purpose). The secret is the expected one (detect-secrets) or, without one, a word of eight or
# more characters of the case: a run of six of one character, or a word that says it is no real
# secret. A domain or a path of the documentation (api.example.com, user@example.com,
# /v1/example) is no secret at all, so it decides nothing.
_PLACEHOLDER = re.compile(r"(.)\1{5,}|example|fake|dummy|xxxx", re.I)
_DOCUMENTATION = re.compile(r"[\w.-]*\bexample\.(?:com|org|net)\b|/examples?\b", re.I)
_WORD = re.compile(r"[\w+/=.:-]{8,}")


def _placeholder_case(case):
    if case[3]:
        return bool(_PLACEHOLDER.search(case[3]))
    return any(_PLACEHOLDER.search(word) for word in _WORD.findall(_DOCUMENTATION.sub(" ", case[1])))


# Positives judged to hold no secret, counted apart as the cases changed one's mind on: (source
# file's rule or detector name, the text, why).
NOT_SECRETS = (
    ("gcp.go", '"type": "service_account"',
     "the marker of a service-account file, with no key in it (gitleaks' rule finds the file)"),
)


def judged(found):
    """FOUND with the positives of NOT_SECRETS made negatives, and how many they were."""
    texts = {(name, text) for name, text, _ in NOT_SECRETS}
    out = [(c[0], c[1], False, None) if c[2] and (c[0], c[1]) in texts else c for c in found]
    return out, sum(1 for a, b in zip(found, out) if a != b)


def report(label, module, found, misses, placeholders=False):
    if placeholders:
        left_out = [case for case in found if case[2] and _placeholder_case(case)]
        found = [case for case in found if case not in left_out]
        label += " (%d placeholder positives left out)" % len(left_out)
    positives = [case for case in found if case[2]]
    negatives = [case for case in found if not case[2]]
    hits = [case for case in positives if caught(module, case)]
    kept = [case for case in negatives if module.redact_credentials(case[1]) == case[1]]
    print("  %s: recall %d/%d = %.3f; negatives kept %d/%d" % (
        label, len(hits), len(positives), len(hits) / max(len(positives), 1), len(kept), len(negatives)))
    if misses:
        for case in positives:
            if not caught(module, case):
                print("    missed %s: %r" % (case[0], case[1][:160]))
    return len(hits), len(positives)


def changes(name, found, module, base):
    """The cases on which MODULE and BASE disagree: positives caught by one only, negatives
    changed by one only (how many cases a change of the rules changed its mind on)."""
    verdicts = {"gained": [], "lost": [], "newly changed": [], "newly kept": []}
    for case in found:
        if case[2]:
            now, before = caught(module, case), caught(base, case)
            key = "gained" if now else "lost"
        else:
            now = module.redact_credentials(case[1]) != case[1]
            before = base.redact_credentials(case[1]) != case[1]
            key = "newly changed" if now else "newly kept"
        if now != before:
            verdicts[key].append(case)
    print("  %s against base: %s" % (name, ", ".join("%s %d" % (k, len(v)) for k, v in verdicts.items())))
    for key in ("lost", "newly changed"):
        for case in verdicts[key]:
            print("    %s %s: %r" % (key, case[0], case[1][:160]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", nargs="?", help="a detect-secrets checkout (its tests/ and testing/)")
    parser.add_argument("--gitleaks", help="gitleaks' git directory")
    parser.add_argument("--trufflehog", help="trufflehog's git directory")
    parser.add_argument("--module", default=os.path.join(os.path.dirname(HERE), "magihook.py"))
    parser.add_argument("--base")
    parser.add_argument("--misses", action="store_true")
    parser.add_argument("--generated", action="store_true",
                        help="also gitleaks' tps built at run time (secrets.NewSecret of a regex), generated here")
    parser.add_argument("--changes", action="store_true", help="with --base: the cases the two judge apart")
    parser.add_argument("--placeholders", action="store_true",
                        help="leave out positives whose secret is a placeholder (_placeholder_case)")
    args = parser.parse_args()
    sources = []
    if args.gitleaks:
        found, generated = gitleaks_cases(args.gitleaks, args.generated)
        sources.append(("gitleaks", found, "%d generated tps not read" % generated))
    if args.trufflehog:
        found, skipped = trufflehog_cases(args.trufflehog)
        sources.append(("trufflehog", found, "%d inputs built at run time not read" % skipped))
    if args.folder:
        sources.append(("detect-secrets", cases(os.path.abspath(args.folder)), ""))
    for i, (name, found, note) in enumerate(sources):
        found, changed = judged(found)
        if changed:
            note = ", ".join(filter(None, (note, "%d judged no secret" % changed)))
        sources[i] = (name, found, note)
    modules = [("magihook", load_module(args.module, "candidate"))]
    if args.base:
        modules.append(("base", load_module(args.base, "base")))
    for label, module in modules:
        total = [0, 0]
        print("%s:" % label)
        for name, found, note in sources:
            hits, positives = report(name + (" (%s)" % note if note else ""), module, found,
                                     args.misses and label == "magihook", args.placeholders)
            total[0] += hits
            total[1] += positives
        print("  all: recall %d/%d = %.3f" % (total[0], total[1], total[0] / max(total[1], 1)))
    if args.changes and args.base:
        print("changes:")
        for name, found, _ in sources:
            changes(name, found, modules[0][1], modules[1][1])


if __name__ == "__main__":
    main()
