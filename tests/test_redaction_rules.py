"""The vendor token table of the credential redaction (magihook.TOKEN_RULES): every example
redacted, every near miss kept byte for byte, the table well-formed, look-alikes kept."""
import os
import random
import re
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import magihook  # noqa: E402

MARKER = "<redacted:credential>"
RULES = magihook.token_rules()
# Rules whose example is more than the token: a command line or a URL around it.
FRAMED = {"mysql-password-flag", "curl-auth-user", "azure-sas-signature"}


def _ids(rule):
    return rule.id


# ---- the table ------------------------------------------------------------------

def test_the_table_covers_the_public_rule_sets():
    assert len(RULES) >= 160
    ids = [rule.id for rule in RULES]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[0-9a-z]+(?:-[0-9a-z]+)*", i) for i in ids)


def test_every_vendor_the_issue_names_has_a_rule():
    ids = {rule.id for rule in RULES}
    prefixes = {p for rule in RULES for p in rule.prefixes}
    assert {"ntn_", "sgp_", "p8e-", "dckr_pat_", "pscale_tkn_", "sq0csp-", "LTAI", "ABSK",
            "EAA"} <= prefixes
    assert {"microsoft-teams-webhook", "telegram-bot-api-token", "azure-devops-pat",
            "azure-sas-signature", "aws-bedrock-api-key"} <= ids


def test_rules_are_frozen_records():
    with pytest.raises(magihook.FrozenInstanceError):
        RULES[0].id = "x"
    assert magihook.token_rules() is RULES      # built once, on first use


@pytest.mark.parametrize("rule", RULES, ids=_ids)
def test_rule_is_well_formed(rule):
    assert rule.example and rule.near_miss
    assert rule.prefixes or rule.lead, "a rule without a prefix names its lead"
    lead = magihook._rule_lead(rule)
    assert all(lead in prefix for prefix in rule.prefixes)
    magihook._rule_kind(rule)                   # raises when its prefixes lead differently
    re.compile(magihook._rule_branch(rule))
    for part in rule.shape:
        assert isinstance(part, str) or (len(part) == 3 and 0 <= part[1] <= part[2])


def test_leads_stay_few():
    # Every lead is one more pass over every text: new rules reuse the leads there are.
    assert len(magihook._prefixed_leads()) <= 12


def test_a_first_call_reads_off_the_lines_what_the_records_hold():
    # A first call groups the rows by their -- led by "X" headers and reads only their needles
    # off the lines (_row_needles): the records, read column by column, must agree.
    seen = []
    for lead in magihook._prefixed_leads():
        rules = magihook._lead_rules(lead)      # raises for a row under another lead's header
        assert [magihook._rule_lead(rule) for rule in rules] == [lead] * len(rules)
        assert magihook._lead_needles(lead) == tuple(
            magihook._needles(rule.prefixes, lead, rule.pattern) for rule in rules)
        seen.extend(rule.id for rule in rules)
    assert sorted(seen) == sorted(rule.id for rule in RULES)


@pytest.fixture
def table(monkeypatch):
    """Set TOKEN_RULES to a table of one's own, the caches of the old one cleared (and again
    afterwards)."""
    caches = [magihook._token_lines, magihook._lead_blocks, magihook._lead_rows,
              magihook._lead_rules, magihook._row_rule]

    def use(text):
        monkeypatch.setattr(magihook, "TOKEN_RULES", text)
        for cache in caches:
            cache.cache_clear()
    yield use
    monkeypatch.undo()
    for cache in caches:
        cache.cache_clear()


ROW = "acme-key | acme_ | AN{32} | x | y | -"


def test_a_row_under_another_leads_header_is_named_by_its_line(table):
    table('\n-- led by "_" --\n' + ROW + '\n-- led by "-" --\n' + ROW.replace("acme_", "acme-"))
    assert [rule.id for rule in magihook._lead_rules("-")] == ["acme-key"]
    table('\n-- led by "-" --\n# a comment\n' + ROW + "\n")
    with pytest.raises(ValueError, match=r"TOKEN_RULES line 4 \(acme-key\): led by '_', under the header of '-'"):
        magihook._lead_rules("-")
    table("\n" + ROW + '\n-- led by "_" --\n')
    with pytest.raises(ValueError, match="a row before the first"):
        magihook._prefixed_leads.__wrapped__()


# ---- examples and near misses ------------------------------------------------------

@pytest.mark.parametrize("rule", RULES, ids=_ids)
def test_example_is_redacted(rule):
    out = magihook.redact_credentials(rule.example)
    assert MARKER in out
    assert magihook._prefixed_spans(rule.example), "found by the table, not by a name"
    if rule.id not in FRAMED and not rule.keep_prefix:
        assert out == MARKER


@pytest.mark.parametrize("rule", RULES, ids=_ids)
def test_near_miss_is_kept(rule):
    assert magihook.redact_credentials(rule.near_miss) == rule.near_miss
    assert magihook._prefixed_spans(rule.near_miss) == []


@pytest.mark.parametrize("rule", [r for r in RULES if r.id not in FRAMED and not r.context
                                  and not r.keep_prefix], ids=_ids)
def test_generated_tokens_are_redacted(rule):
    # The shape makes tokens the rule takes (tests/data's corpus is made of them).
    rng = random.Random(7)
    for _ in range(5):
        token = magihook.token_example(rule, rng)
        assert magihook.redact_credentials("x = %s ;" % token) == "x = %s ;" % MARKER, token


def test_generated_tokens_in_context_are_redacted():
    rng = random.Random(3)
    for rule in RULES:
        if rule.keep_prefix and rule.id != "azure-sas-signature":
            token = magihook.token_example(rule, rng)
            out = magihook.redact_credentials("post to https://acme.%s now" % token)
            assert out.endswith("%s now" % MARKER) and token[len(rule.prefixes[0]):] not in out


# ---- look-alikes behind a real prefix, prefixes inside identifiers --------------------

LOOK_ALIKES = [
    "token = ghp_" + "x" * 36,
    "export GH=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
    "the AWS docs use AKIAIOSFODNN7EXAMPLE as a key id",
    "glpat-XXXXXXXXXXXXXXXXXXXX",
    "gho_******",
    "static int hf_servingcellconfigcommonsibelementvalue = -1;",
    "{ &hf_servingcellconfigcommonsibelement, { \"x\" } }",
    "![photo](/images/2018-250-xoxo-indieweb-1.jpg)",
    "npm_" + "0" * 36,
    "sk_live_" + "a" * 24,
    "ghp_1234567890abcdefghijklmnopqrstuvwxyz",
    "see my_ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cD1fH3jL5",
    "use LTAIEXAMPLEEXAMPLEEXAM in tests",
]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_are_kept_byte_for_byte(text):
    assert magihook.redact_credentials(text) == text


def _github_token(random30):
    return "ghp_" + random30 + magihook._crc32_base62(random30)


def test_a_valid_checksum_outweighs_the_look_alike_checks():
    # GitHub's CRC32 proves a real token even when its random part spells a sample word.
    token = _github_token("Example" + "aB3dE5gH7jK9mN1pQ3sT5vX")
    assert magihook._checksum_ok(RULES[0], token[4:])
    assert magihook.redact_credentials(token) == MARKER
    fake = "ghp_" + "Example" + "aB3dE5gH7jK9mN1pQ3sT5vX" + "000000"
    assert magihook.redact_credentials(fake) == fake


def test_a_wrong_checksum_is_still_redacted():
    # Leaked tokens get mangled and test data has none: the checksum only ever keeps more.
    token = "ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cD1fH3jL5"
    assert not magihook._checksum_ok(RULES[0], token[4:])
    assert magihook.redact_credentials(token) == MARKER


def test_examples_with_checksums_carry_valid_ones():
    for rule in RULES:
        if rule.checksum:
            body = rule.example[len(rule.prefixes[0]):]
            assert magihook._checksum_ok(rule, body), rule.id


def test_keep_prefix_keeps_the_host_readable():
    rule = next(r for r in RULES if r.id == "microsoft-teams-webhook")
    out = magihook.redact_credentials(rule.example)
    assert out == "https://acme.webhook.office.com/webhookb2/" + MARKER


def test_sas_signature_needs_a_query():
    rule = next(r for r in RULES if r.id == "azure-sas-signature")
    assert magihook.redact_credentials(rule.example).endswith("&sig=" + MARKER)


def test_base64_of_a_jwt_is_redacted_and_other_base64_kept():
    rule = next(r for r in RULES if r.id == "jwt-base64")
    assert magihook.redact_credentials(rule.example) == MARKER
    blob = "ZXlK" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3" * 3
    assert magihook.redact_credentials(blob) == blob


# ---- a short text compiles only the rules whose prefix it holds -------------------------

def _spans_of_every_rule(text):
    spans = []
    for lead in magihook._prefixed_leads():
        for m in magihook._prefixed_re(lead).finditer(text):
            span = magihook._accept_prefixed(text, m)
            if span is not None:
                spans.append(span)
    return sorted(spans)


def _spans_of_picked_rules(text):
    spans = []
    for lead in magihook._prefixed_leads():
        needles = magihook._lead_needles(lead)
        picked = tuple(i for i, ns in enumerate(needles) if any(n in text for n in ns))
        if picked:
            for m in magihook._picked_re(lead, picked).finditer(text):
                span = magihook._accept_prefixed(text, m)
                if span is not None:
                    spans.append(span)
    return sorted(spans)


SHORT_TEXTS = [rule.example for rule in RULES] + [rule.near_miss for rule in RULES] + [
    "/home/dev/my_project/src/some-file.name_v2.py", "curl --user bob:s3cretPassw0rd https://x",
    "%s and %s" % (RULES[0].example, RULES[-1].example), "sk_live_" + RULES[0].example[4:],
]


@pytest.mark.parametrize("text", SHORT_TEXTS)
def test_picking_rules_finds_what_every_rule_finds(text):
    assert _spans_of_picked_rules(text) == _spans_of_every_rule(text)


def test_a_path_compiles_no_token_rule():
    path = "/home/dev/my_project/src/some-file.name_v2.tar.gz"
    leads = [lead for lead in magihook._prefixed_leads() if lead in path]
    assert set(leads) >= {"_", "-", "."}
    for lead in leads:
        needles = magihook._lead_needles(lead)
        picked = [magihook._lead_rules(lead)[i].id for i, ns in enumerate(needles) if any(n in path for n in ns)]
        # A Discord bot token holds no literal but its dots; Airtable's holds "pat" (the
        # literal of the lookbehind its pattern starts with), which the path lacks.
        assert picked in ([], ["discord-bot-token"]), picked


def test_a_rule_whose_pattern_starts_behind_the_lead_is_picked_by_that_literal():
    rule = next(rule for rule in RULES if rule.id == "airtable-pat")
    assert rule.pattern.startswith("(?<=pat")
    assert magihook._needles(rule.prefixes, ".", rule.pattern) == ("pat",)
    assert magihook._needles((), ".", r"(?<=[A-Za-z0-9]{14}\.)x") == (".",)   # no literal: the lead
    assert _spans_of_picked_rules("see " + rule.example) == _spans_of_every_rule("see " + rule.example) != []


def test_a_rule_led_by_its_lead_alone_is_picked_only_where_a_token_can_start(monkeypatch):
    # A Discord bot token's only literal is its dots, a Facebook token's its "|": a path or a
    # grep pattern holds them, and compiling those rules is most of what a write or ffgrep call
    # would pay.  They are picked where _accept_prefixed could take a token at the lead.
    monkeypatch.setattr(magihook, "_LEAD_RES", {})
    monkeypatch.setattr(magihook, "_PICKED_CHARS", {})
    magihook._picked_re.cache_clear()
    for text in ("/home/dev/my_project/src/some-file.name_v2.py", "grep -E 'get_token|refresh' src",
                 "v1.2.3 -> v1.2.4 (see docs/release.notes.md)"):
        assert magihook.redact_credentials(text) == text
    assert magihook._picked_re.cache_info().currsize == 0
    discord = "NSk5e-1SZFskXQMAui3-34id.tH-psp.zPq1Xj_D1oAzAN1KqLaeYoOo7aB8qPJRzOk"
    facebook = "184387161380233|kZoRM910RHPcM7Dz2ehpqKhU_Kl"
    for token in (discord, facebook, "992532001915521%7Cg966HNB-EVQZIQWqlsM13NPFuxE"):
        assert magihook.redact_credentials("a.b|c: %s ok" % token) == "a.b|c: %s ok" % magihook.REDACTION_MARKER
    # Past _START_CHECKS_MAX places of the lead, the rule is picked unread: the token still goes.
    dots = "x." * magihook._START_CHECKS_MAX
    assert magihook.redact_credentials(dots + discord) == dots + magihook.REDACTION_MARKER


def test_start_checks_are_read_off_the_rows_as_the_records_say():
    for lead in magihook._prefixed_leads():
        checks = [magihook._row_start_check(number) for number in magihook._lead_rows(lead)]
        for rule, check in zip(magihook._lead_rules(lead), checks):
            expected = None if rule.prefixes else magihook._START_CHECKS.get(rule.context)
            assert check is expected, rule.id
    assert sum(magihook._row_start_check(number) is not None for lead in magihook._prefixed_leads()
               for number in magihook._lead_rows(lead)) == 3


def test_many_short_texts_end_up_on_the_full_regex(monkeypatch):
    # Picking costs a text its length plus _PICK_COST; once a lead has spent _PICK_BUDGET on
    # it, the next text compiles all its rules.
    monkeypatch.setattr(magihook, "_LEAD_RES", {})
    monkeypatch.setattr(magihook, "_PICKED_CHARS", {})
    texts = ["file_%04d.txt" % i for i in range(1000)]
    picks = -(-magihook._PICK_BUDGET // (len(texts[0]) + magihook._PICK_COST))
    for text in texts[:picks]:
        magihook.redact_credentials(text)
    assert "_" not in magihook._LEAD_RES
    magihook.redact_credentials(texts[picks])
    assert "_" in magihook._LEAD_RES


def test_a_page_of_output_picks_its_rules_and_a_longer_text_compiles_them(monkeypatch):
    # A tool's output of a few pages compiles only the rules whose needle it holds (compiling
    # all of "_" and "-" costs a fresh process ~20 ms); from _PICK_TEXT on, a lead compiles all.
    monkeypatch.setattr(magihook, "_LEAD_RES", {})
    monkeypatch.setattr(magihook, "_PICKED_CHARS", {})
    line = "2026-12-01 build_step-%d ok: wrote dist/app_v2.tar.gz\n"
    page = "".join(line % i for i in range(magihook._PICK_TEXT // 60))
    assert magihook._SHORT_TEXT < len(page) < magihook._PICK_TEXT
    token = "ghp_" + "CzAbbbWoQoEyJT8UPgzunzF2vSHHkJ3puRuF"
    assert magihook.redact_credentials(page + token) == page + magihook.REDACTION_MARKER
    assert magihook._LEAD_RES == {}
    longer = page * 2
    assert len(longer) >= magihook._PICK_TEXT
    assert magihook.redact_credentials(longer + token) == longer + magihook.REDACTION_MARKER
    assert {"_", "-", "."} <= set(magihook._LEAD_RES)


# ---- cost: the benches still run; hang bounds only (figures: bench/cost_checks.py) ------------

sys.path.insert(0, os.path.join(os.path.dirname(HERE), "bench"))

MIB = 1024 * 1024




ADVERSARIAL = {
    "separators": "ab_" * (MIB // 3), "dashes": "ab-cd" * (MIB // 5), "prefixes": "sk_live_" * (MIB // 8),
    "glued": ("ghp_" + "a" * 36 + "_") * (MIB // 41), "sas": "?sig=" + "A%2B" * (MIB // 4),
    "percent": "%3D" * (MIB // 3),
    "percent_space": "%3D " * (MIB // 4),
    "sas_fakes": ("&sig=" + "a" * 45 + "%3D") * (MIB // 53), "bang": "00D" + "a" * 12 + "!" * (MIB // 2),
    "tilde": "1Q~" * (MIB // 3),
    "dots": "a." * (MIB // 2), "ado": ("a" * 52 + "JQQJ99") * (MIB // 58), "eyJ": "eyJrIjoi" * (MIB // 8),
}


# CPU seconds 1 MiB of hostile text may cost the prefixed rules: a hang detector (a rule that
# backtracks quadratically takes minutes), never a speed check.  Figures: bench/cost_checks.py.
HANG_CPU_SECONDS = 20


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_input_never_hangs(name):
    text = ADVERSARIAL[name]
    start = time.process_time()
    magihook._prefixed_spans(text)
    assert time.process_time() - start < HANG_CPU_SECONDS


def test_a_context_rule_is_taken_only_on_its_commands_line():
    # 1 MiB of openssl's " -passout pass:" is 65,536 matches of mysql's -p rule, with no mysql.
    text = " -passout pass:" * (MIB // 15)
    start = time.process_time()
    assert magihook._prefixed_spans(text) == []
    assert time.process_time() - start < HANG_CPU_SECONDS
    # The command still counts on its own line, and only there.
    assert magihook.redact_credentials("mysql -u app -pQE8FQumlIlKM5LLO\n" + text[:64]) == \
        "mysql -u app -p<redacted:credential>\n" + text[:64]
