"""magihook's recall on detect-secrets' own plugin tests, beside another magihook.py.

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
import glob
import importlib
import importlib.util
import inspect
import os
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


def caught(module, case):
    out = module.redact_credentials(case[1])
    return case[3] not in out if case[3] else out != case[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--module", default=os.path.join(os.path.dirname(HERE), "magihook.py"))
    parser.add_argument("--base")
    parser.add_argument("--misses", action="store_true")
    args = parser.parse_args()
    found = cases(os.path.abspath(args.folder))
    modules = [("magihook", load_module(args.module, "candidate"))]
    if args.base:
        modules.append(("base", load_module(args.base, "base")))
    positives = [case for case in found if case[2]]
    negatives = [case for case in found if not case[2]]
    for label, module in modules:
        hits = [case for case in positives if caught(module, case)]
        kept = [case for case in negatives if module.redact_credentials(case[1]) == case[1]]
        print("%s: recall %d/%d = %.3f; negatives kept %d/%d" % (
            label, len(hits), len(positives), len(hits) / len(positives), len(kept), len(negatives)))
        if args.misses and label == "magihook":
            for case in positives:
                if not caught(module, case):
                    print("  missed %s: %r" % (case[0], case[1][:100]))


if __name__ == "__main__":
    main()
