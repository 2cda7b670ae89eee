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
    with pytest.raises(AttributeError):
        RULES[0].id = "x"
    assert magihook.token_rules() is RULES is magihook.TOKEN_RULES


@pytest.mark.parametrize("rule", RULES, ids=_ids)
def test_rule_is_well_formed(rule):
    assert rule.example and rule.near_miss
    assert isinstance(rule.prefixes, tuple) and all(isinstance(p, str) and p for p in rule.prefixes)
    assert all(rule.lead in prefix for prefix in rule.prefixes)
    magihook._rule_kind(rule)                   # raises when its prefixes lead differently
    re.compile(magihook._rule_branch(rule))
    for part in rule.shape:
        assert isinstance(part, str) or (len(part) == 3 and 0 <= part[1] <= part[2]), part
        if not isinstance(part, str):
            re.compile("[%s]" % part[0])
    assert rule.checksum in ("", "crc32") and isinstance(rule.back, int) and rule.end in (True, False)


@pytest.mark.parametrize("rule", RULES, ids=_ids)
def test_a_rule_without_prefixes_names_its_needles_and_its_example_holds_them(rule):
    # A short text runs only the rules whose needles it holds: a token without one would be missed.
    assert bool(rule.needles) != bool(rule.prefixes), "needles: a rule's prefixes, else its own"
    needles = rule.prefixes or rule.needles
    assert all(isinstance(n, str) and n for n in needles)
    assert any(n in rule.example for n in needles)
    assert rule.lead in rule.example


def test_a_rule_whose_prefixes_lead_differently_is_refused():
    rule = magihook.TokenRule("acme-key", "_", ("acme_", "acme_x-"), (("A-Z", 32, 32),), "x", "y")
    with pytest.raises(ValueError, match="token rule acme-key: its prefixes must lead alike"):
        magihook._rule_kind(rule)


def test_each_lead_compiles_and_names_its_rules_by_id():
    for lead in magihook._PREFIXED_LEADS:
        groups = magihook._prefixed_re(lead).groupindex
        rules = magihook._LEAD_RULES[lead]
        assert [rule.lead for rule in rules] == [lead] * len(rules)
        for rule in rules:
            assert "rule_" + rule.id.replace("-", "_") in groups
    assert sum(map(len, magihook._LEAD_RULES.values())) == len(RULES)


def test_branches_that_start_with_one_letter_are_tried_behind_it_once():
    # At every capital A of an upper-case name each branch of the A lead is one compare: the
    # Azure keys' and Facebook's branches share their first letters (St and Sb, CDb and CR).
    by_id = {rule.id: rule for rule in RULES}
    pattern = magihook._prefixed_re("A").pattern
    assert "|S(?:(?:t(?<=" in pattern and "|C(?:(?:Db(?<=" in pattern and "|A(?:(?<=EAA)" in pattern
    # What cannot be split there stays whole: several prefixes, a pattern with alternatives.
    assert magihook._first_literal(by_id["braintree-access-token"]) == ""
    assert magihook._first_literal(by_id["azure-storage-account-key"]) == "S"
    text = " ".join(by_id[i].example for i in ("azure-storage-account-key", "azure-service-bus-key",
                                                 "azure-cosmosdb-key", "azure-container-registry-key"))
    assert magihook.redact_credentials(text) == " ".join([MARKER] * 4)


def test_free_rules_whose_prefixes_end_with_the_lead_share_one_lookbehind():
    # The K of API_KEY fails one lookbehind for the characters before the lead, not one per rule;
    # a rule alone keeps its own, and each rule under the guard still finds its tokens.
    rules = [magihook.TokenRule("acme-%d" % i, "K", (prefix,), (("A-Z", 20, 20),), "x", "y")
             for i, prefix in enumerate(("ZXlK", "SK", "EZTK"))]
    branches = magihook._free_branches(rules, "K")
    assert len(branches) == 1 and branches[0].startswith("(?<=[STl]K)(?:(?<=ZXlK)")
    assert magihook._free_branches(rules[:1], "K") == ["(?<=ZXlK)[A-Z]{20}(?P<rule_acme_0>)(?![A-Za-z0-9_])"]
    pattern = re.compile("K(?:%s)" % "|".join(branches))
    assert pattern.search("x EZTK" + "Q" * 20).lastgroup == "rule_acme_2"
    assert pattern.search("API_KEY" + "Q" * 20) is None


def test_leads_stay_few():
    # Every lead is one more pass over every text: new rules reuse the leads there are.  (The
    # 13th, Tableau's "==:", is a literal of three characters that no other rule holds.)  A lead
    # of _SKIPPING_LEAD characters or more (GitLab's GR1348941) is no pass: `in` looks for it,
    # skipping most of the text.
    passes = [lead for lead in magihook._PREFIXED_LEADS if len(lead) < magihook._SKIPPING_LEAD]
    assert len(passes) <= 13
    long_text = "build_step-1 ok: wrote dist/app_v2.tar.gz (A-Z, x.y~1|2) dapi ==: 00!\n" * 100
    assert "GR1348941" not in magihook._leads_in(long_text, magihook._PREFIXED_LEADS)
    assert "dapi" in magihook._leads_in(long_text.replace("dapi", "d"), magihook._PREFIXED_LEADS)


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
    # A commit's time and hash (git log --format='%ct|%H'), a run of one case after an id and "|".
    "1764806400|9e68433f7a43c5e11dc057071e2b0cf6128e6e96 Merge pull request #12",
    "| 42|ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLMN |",
    # GitLab's runner registration prefix before too few or too many token characters.
    "GR1348941helloWord0 and GR1348941PREfix_helloworld380_testin_pretty_long_token_long_",
    # New Relic's tail after what is no license key: a word, a hex run glued to a longer word.
    "see release-notes-2024-FFFFNRAL and x9209dcb468e07e032fd0db161b56bb9aFFFFNRAL",
    # Mailgun's key- before an MD5 (a cache key), and a key- that ends a longer hyphenated name.
    "restored key-d41d8cd98f00b204e9800998ecf8427e from cache",
    "bucket: my-cache-key-0a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p",
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
    checked = [rule for rule in RULES if rule.checksum]
    # GitHub's and npm's tokens end in a CRC32: a table that lost its checksums fails here.
    assert {rule.id for rule in checked} >= {"github-pat", "npm-access-token"}
    for rule in checked:
        body = rule.example[len(rule.prefixes[0]):]
        assert magihook._checksum_ok(rule, body), rule.id


def test_keep_prefix_keeps_the_host_readable():
    rule = next(r for r in RULES if r.id == "microsoft-teams-webhook")
    out = magihook.redact_credentials(rule.example)
    assert out == "https://acme.webhook.office.com/webhookb2/" + MARKER


def test_octopus_keys_of_every_length_are_redacted_and_a_notion_page_id_kept():
    for key in ("API-C6NH4QOQESUORR9Q3RHW81PLNH", "API-ZNRMR7SL6L3ATMOIK7GKJDKLPYQ7Z2",
                "API-V2X9QK7LMN3PRT8WZ4YB6HJC5DFG1SAE"):
        assert magihook.redact_credentials("rotated %s today" % key) == "rotated %s today" % MARKER
    page = "https://fog-ringer-f42.notion.site/API-BD80F56CDC1441E6BF6011AB6D852875"
    assert magihook.redact_credentials(page) == page


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
    for lead in magihook._PREFIXED_LEADS:
        for m in magihook._prefixed_re(lead).finditer(text):
            span = magihook._accept_prefixed(text, m)
            if span is not None:
                spans.append(span)
    return sorted(spans)


def _spans_of_picked_rules(text):
    spans = []
    for lead in magihook._PREFIXED_LEADS:
        needles = magihook._lead_needles(lead)
        picked = tuple(i for i, (ns, _) in enumerate(needles) if any(n in text for n in ns))
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


PAGE = "".join("2026-12-01 build_step-%d ok: wrote dist/app_v2.tar.gz (A-Z, x.y~1|2)\n" % i for i in range(20))


@pytest.mark.parametrize("rule", RULES, ids=_ids)
def test_a_page_picks_by_the_pairs_beside_its_leads_what_every_rule_finds(rule):
    # From _PAIRS_TEXT on, a needle is looked for only where its pair stands beside a lead.
    for text in (PAGE + rule.example + " end", rule.near_miss + "\n" + PAGE, PAGE + "x" + rule.example):
        assert magihook._PAIRS_TEXT <= len(text) < magihook._PICK_TEXT
        assert sorted(magihook._prefixed_spans(text)) == _spans_of_every_rule(text)
    assert magihook._prefixed_spans(PAGE + rule.example + " end") != []


def test_a_path_compiles_no_token_rule():
    path = "/home/dev/my_project/src/some-file.name_v2.tar.gz"
    leads = [lead for lead in magihook._PREFIXED_LEADS if lead in path]
    assert set(leads) >= {"_", "-", "."}
    for lead in leads:
        needles = magihook._lead_needles(lead)
        picked = [magihook._LEAD_RULES[lead][i].id for i, (ns, _) in enumerate(needles) if any(n in path for n in ns)]
        # A Discord bot token holds no literal but its dots; Airtable's holds "pat" (the
        # literal its pattern's lookbehind starts with), which the path lacks.
        assert picked in ([], ["discord-bot-token"]), picked


def test_a_rule_whose_pattern_starts_behind_the_lead_is_picked_by_that_literal():
    rule = next(rule for rule in RULES if rule.id == "airtable-pat")
    assert rule.pattern.startswith("(?<=pat") and rule.needles == ("pat",)
    assert _spans_of_picked_rules("see " + rule.example) == _spans_of_every_rule("see " + rule.example) != []


def test_a_rule_led_by_its_lead_alone_is_picked_only_where_a_token_can_start():
    # A Discord bot token's only literal is its dots, a Facebook token's its "|": a path or a
    # grep pattern holds them, and compiling those rules is most of what a write or ffgrep call
    # would pay.  They are picked where _accept_prefixed could take a token at the lead.
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


def test_the_rules_read_behind_a_guarded_lead_go_under_its_guard():
    # Airtable's and Discord's patterns start with a lookbehind and read the "." lead's guard
    # right after the lead: under the guard, most dots of code fail in one step instead of
    # entering each rule.  Azure's client secret starts behind its "~" too, but its body holds
    # "~" and ".", which that lead's guard does not take.
    behind = [rule for rule in RULES if magihook._rule_kind(rule) == "behind"]
    assert [rule.id for rule in behind] == ["airtable-pat", "discord-bot-token"]
    for rule in behind:
        alphabet, fewest, _ = rule.shape[-1]
        chars = [chr(code) for code in range(32, 127) if re.fullmatch("[%s]" % alphabet, chr(code))]
        assert chars and all(re.match(magihook._GUARDS[rule.lead], char * fewest) for char in chars)
    assert magihook._rule_kind(next(rule for rule in RULES if rule.id == "azure-ad-client-secret")) == "free"
    source = magihook._prefixed_re(".").pattern
    order = [source.index(magihook._GUARDS["."])] + [source.index("(?P<rule_%s>)" % name) for name in (
        "discord_bot_token", "vault_service_token", "airtable_pat", "mapbox_secret_token")]
    assert order == sorted(order)
    assert source.count(magihook._GUARDS["."]) == 1


@pytest.mark.parametrize("middle", ["tH-hvs", "ab-hvb", "x-ya29"])
def test_a_discord_bot_token_led_by_its_second_dot_wins_that_dot(middle):
    # The rule is led by the token's second dot, where the rules whose prefix ends with a dot
    # (hvs., ya29.) could match too: it comes before them, as when it was led by the
    # first dot and its match held the second.
    token = "NSk5e-1SZFskXQMAui3-34id.%s.zPq1Xj_D1oAzAN1KqLaeYoOo7aB8qPJRzOk" % middle
    for text in ("see %s ok" % token, PAGE + token + " end"):
        assert magihook.redact_credentials(text) == text.replace(token, MARKER)


def test_many_short_texts_never_compile_a_whole_lead():
    # Which rules run is decided by the text alone: a thousand short texts before it change
    # nothing, neither what a text compiles nor what it redacts.
    magihook._prefixed_re.cache_clear()
    token = "ghp_" + "CzAbbbWoQoEyJT8UPgzunzF2vSHHkJ3puRuF"
    first = magihook.redact_credentials("file_0000.txt " + token)
    for i in range(1000):
        assert magihook.redact_credentials("file_%04d.txt" % i) == "file_%04d.txt" % i
    assert magihook.redact_credentials("file_0000.txt " + token) == first == "file_0000.txt " + MARKER
    assert magihook._prefixed_re.cache_info().currsize == 0


def test_a_page_of_output_picks_its_rules_and_a_longer_text_compiles_them():
    # A tool's output of a few pages compiles only the rules whose needle it holds (compiling
    # all of "_" and "-" costs a fresh process more than the rest: bench/README.md); from
    # _PICK_TEXT on, a lead compiles all.
    magihook._prefixed_re.cache_clear()
    line = "2026-12-01 build_step-%d ok: wrote dist/app_v2.tar.gz\n"
    page = "".join(line % i for i in range(magihook._PICK_TEXT // 60))
    assert magihook._SHORT_TEXT < len(page) < magihook._PICK_TEXT
    token = "ghp_" + "CzAbbbWoQoEyJT8UPgzunzF2vSHHkJ3puRuF"
    assert magihook.redact_credentials(page + token) == page + magihook.REDACTION_MARKER
    assert magihook._prefixed_re.cache_info().currsize == 0
    longer = page * 2
    assert len(longer) >= magihook._PICK_TEXT
    assert magihook.redact_credentials(longer + token) == longer + magihook.REDACTION_MARKER
    assert magihook._prefixed_re.cache_info().currsize >= 3     # "_", "-" and "." at least


# ---- cost: the benches still run; hang bounds only (figures: bench/cost_checks.py) ------------

sys.path.insert(0, os.path.join(os.path.dirname(HERE), "bench"))

MIB = 1024 * 1024



# ---- adversarial input: finished, and redacted as ordinary text is ------------------------
# (Its cost per MiB is a bench figure: bench/bench_redact.py, bench/README.md.)

KIB64 = 64 * 1024
MARKERS = {"sas": "?sig=" + MARKER, "tilde": MARKER + "~1Q~1Q~1Q~1Q~1Q~1Q~1Q~1Q~",
           "sas_fakes": ("&sig=" + MARKER) * (KIB64 // 53)}
ADVERSARIAL = {
    "separators": "ab_" * (KIB64 // 3), "dashes": "ab-cd" * (KIB64 // 5), "prefixes": "sk_live_" * (KIB64 // 8),
    "glued": ("ghp_" + "a" * 36 + "_") * (KIB64 // 41), "sas": "?sig=" + "A%2B" * (KIB64 // 4),
    "percent": "%3D" * (KIB64 // 3),
    "percent_space": "%3D " * (KIB64 // 4),
    "sas_fakes": ("&sig=" + "a" * 45 + "%3D") * (KIB64 // 53), "bang": "00D" + "a" * 12 + "!" * (KIB64 // 2),
    "tilde": "1Q~" * (KIB64 // 3),
    "dots": "a." * (KIB64 // 2), "ado": ("a" * 52 + "JQQJ99") * (KIB64 // 58), "eyJ": "eyJrIjoi" * (KIB64 // 8),
    "passout": " -passout pass:" * (KIB64 // 15),
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


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_input_is_kept_or_loses_only_its_secret_shaped_part(name):
    text = ADVERSARIAL[name]
    assert magihook.redact_credentials(text) == MARKERS.get(name, text)


def test_a_context_rule_counts_its_command_on_its_own_line_only():
    text = " -passout pass:" * 8
    assert magihook.redact_credentials("mysql -u app -pQE8FQumlIlKM5LLO\n" + text) == \
        "mysql -u app -p<redacted:credential>\n" + text
