"""The vendor token table of the credential redaction (magihook.TOKEN_RULES): every example
redacted, every near miss kept byte for byte, the table well-formed, look-alikes kept."""
import os
import random
import re
import sys

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
            "EAAM", "EAAC"} <= prefixes
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
