"""The cost checks that were unit tests: each prints its figure beside the budget the test held it to.

Usage: python3 bench/cost_checks.py [--quick]   (--quick: one round each, a smoke run)

A CPU-time ratio or bound on a busy 2-core machine is not a pass/fail fact (a whole-suite run
broke one of them), so the unit suite keeps only what is true on any machine (the answers, and
hang bounds far past any real cost) and these figures live here.  Each row:

    check                                        figure     budget    ok

Ratios are the smallest of N rounds, each timing both sides back to back in alternating order
(a machine whose speed swings slows both sides of a round alike).  Exit status 0 whatever the
figures: read them.
"""
import os
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import corpus  # noqa: E402

import magihook  # noqa: E402

MIB = 1024 * 1024
ROUNDS = 1 if "--quick" in sys.argv else 5
_BARE = [re.compile(re.escape(lead) + "(?!)") for lead in magihook._prefixed_leads()]
_BARE_DASH = re.compile(" -(?!)")

# Inputs built to make the prefixed rules work hardest (from tests/test_redaction_rules.py).
ADVERSARIAL = {
    "separators": "ab_" * (MIB // 3), "dashes": "ab-cd" * (MIB // 5), "prefixes": "sk_live_" * (MIB // 8),
    "glued": ("ghp_" + "a" * 36 + "_") * (MIB // 41), "sas": "?sig=" + "A%2B" * (MIB // 4),
    "percent": "%3D" * (MIB // 3), "percent_space": "%3D " * (MIB // 4),
    "sas_fakes": ("&sig=" + "a" * 45 + "%3D") * (MIB // 53), "bang": "00D" + "a" * 12 + "!" * (MIB // 2),
    "tilde": "1Q~" * (MIB // 3), "dots": "a." * (MIB // 2), "ado": ("a" * 52 + "JQQJ99") * (MIB // 58),
    "eyJ": "eyJrIjoi" * (MIB // 8),
}


def cpu(fn):
    start = time.process_time()
    fn()
    return time.process_time() - start


def ratio(numerator, denominator, rounds=ROUNDS):
    sides, ratios = (numerator, denominator), []
    for index in range(rounds):
        spent = [0.0, 0.0]
        for side in (0, 1) if index % 2 == 0 else (1, 0):
            spent[side] = cpu(sides[side])
        ratios.append(spent[0] / max(spent[1], 1e-6))
    return min(ratios)


def lead_scan(text):
    """What one pass per lead costs at the least: the engine finds the lead, the pattern fails."""
    for pattern in _BARE:
        for _ in pattern.finditer(text):
            pass


def row(check, figure, budget, ok):
    print("%-58s %10s %10s  %s" % (check, figure, budget, "yes" if ok else "NO"))


def whole_table():
    for kind in list(corpus.KINDS) + ["mixed"]:
        text = corpus.text(kind, MIB)
        found = ratio(lambda text=text: magihook._prefixed_spans(text), lambda text=text: lead_scan(text))
        row("prefixed rules vs the lead scan, 1 MiB %s" % kind, "%.2fx" % found, "<= 4x", found <= 4)


def linear_tokens():
    small, _ = corpus.with_secrets(corpus.text("mixed", MIB, seed=1))
    large, _ = corpus.with_secrets(corpus.text("mixed", 4 * MIB, seed=4))
    growth = ratio(lambda: magihook._prefixed_spans(large), lambda: magihook._prefixed_spans(small),
                   rounds=min(ROUNDS, 3)) * len(small) / len(large)
    row("prefixed rules per char, 4 MiB vs 1 MiB with secrets", "%.2fx" % growth, "<= 1.5x",
        growth <= 1.5)


def adversarial():
    for name in sorted(ADVERSARIAL):
        text = ADVERSARIAL[name]
        found = ratio(lambda text=text: magihook._prefixed_spans(text), lambda text=text: lead_scan(text),
                      rounds=min(ROUNDS, 2))
        row("adversarial %s vs the lead scan" % name, "%.1fx" % found, "<= 100x", found <= 100)
    text = " -passout pass:" * (MIB // 15)
    found = ratio(lambda text=text: magihook._prefixed_spans(text), lambda text=text: lead_scan(text), rounds=min(ROUNDS, 3))
    row("1 MiB of ' -passout pass:' vs the lead scan", "%.1fx" % found, "<= 35x", found <= 35)


def short_text():
    """A short path must not pay for compiling every rule of the leads it holds."""
    path = "/home/dev/my_project/src/some-file.name_v2.py"
    leads = [lead for lead in magihook._prefixed_leads() if lead in path]
    magihook._LEAD_RES.clear()
    magihook._PICKED_CHARS.clear()
    magihook._picked_re.cache_clear()
    re.purge()
    short = cpu(lambda: magihook._prefixed_spans(path))
    re.purge()
    full = cpu(lambda: [magihook._lead_regex(lead, magihook._lead_rules(lead)) for lead in leads])
    found = short / max(full, 1e-6)
    row("a short path vs compiling its leads' rules", "%.3fx" % found, "< 0.1x", found < 0.1)


def syntax():
    base = "export TOKEN_COUNT=5 path=/srv/x user=bob keyboard author session tokens\n" * 28000
    dashed = base.replace("user", "us\u2014r", 1)
    found = ratio(lambda: magihook._lowered(dashed), lambda: magihook._lowered(base))
    row("lowering a text with one em dash vs all ASCII", "%.2fx" % found, "< 4x", found < 4)
    line = "api_key=%s other text and more words here\n"
    small = "".join(line % ("k%07dZq8rT2wLp" % i) for i in range(4000))
    big = "".join(line % ("k%07dZq8rT2wLp" % i) for i in range(16000))
    found = ratio(lambda: magihook.redact_credentials(big), lambda: magihook.redact_credentials(small),
                  rounds=min(ROUNDS, 3))
    row("4x as many distinct named secrets", "%.2fx" % found, "< 8x", found < 8)
    for unit in (" -p x1y2z3w4 ", " -w secretpw ", "mysql -p'"):
        text = unit * (MIB // len(unit))
        found = ratio(lambda text=text: magihook._password_flag_spans(text),
                      lambda text=text: list(_BARE_DASH.finditer(text)), rounds=min(ROUNDS, 3))
        row("1 MiB of %r vs the bare ' -' scan" % unit, "%.0fx" % found, "<= 200x", found <= 200)


def sweep():
    """One payload_ref sweep of a TMPDIR with 2,000 other entries and 50 live-owned folders."""
    with tempfile.TemporaryDirectory() as folder:
        os.environ["TMPDIR"] = folder
        tempfile.tempdir = None
        for index in range(2000):
            open(os.path.join(folder, "other-%d" % index), "w").close()
        tag = magihook._owner_tag(os.getpid()).split(".")[1]
        for index in range(50):
            os.mkdir(os.path.join(folder, "magihook-payload-%d.%s-x%d" % (os.getpid(), tag, index)))
        rounds = 200
        spent = cpu(lambda: [magihook.sweep_payload_folders() for _ in range(rounds)]) / rounds
        row("one sweep: 2,000 other entries, 50 live folders", "%.0f us" % (spent * 1e6), "< 5000 us",
            spent < 0.005)


def main():
    print("%-58s %10s %10s  %s" % ("check", "figure", "budget", "ok"))
    for check in (short_text, whole_table, linear_tokens, adversarial, syntax, sweep):
        check()


if __name__ == "__main__":
    main()
