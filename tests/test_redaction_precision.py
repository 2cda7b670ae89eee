"""Precision on ordinary tool output (issue 23): each category of collateral redaction that
bench/precision.py found is kept, the prose and pair forms of a credential are redacted."""

from __future__ import annotations

import json

import pytest

import magihook

M = magihook.REDACTION_MARKER
SECRET = "sk9Xq2LmP4vR7tW1zY3b"
COMMIT = "3f9a2b7c8d1e4f5061728394a5b6c7d8e9f0a1b2"

KEPT = {
    "a function under a credential name": "withCredentials: defaultToConfig2,\ncancelToken: defaultToConfig2,\n",
    "a name in code with words that read, a few without a vowel": "token: getHttpUrl,\nauthToken: toSqlDb\n",
    "a variable or a template's word under a credential name": (
        "connect(host=host, password=passwd)\nauth(token=access_token, key=apiKey)\n"
        "export POETRY_HTTP_BASIC_REPO_PASSWORD=secret\nPASSWORD=DEFAULT_PASSWORD\n"
        "//registry.example.com/:_authToken=MYTOKEN1\n"),
    "a label in strong emphasis before words": "**Custom Auth:** see below\n**Password:** required\n"
                                                 "**API key:** stored in the vault\n",
    "a list of words printed over lines": ('[\n  "password",\n  "hello world"\n]\n[\n  "token",\n  "refresh"\n]\n'
                                           "    'ssh2_auth_password',\n    'ssh2_auth_pubkey_file',\n"
                                           '"required": [\n  "AccountId",\n  "AccessGrantsLocationId"\n]\n'
                                           "[\n '_token',\n '_tokenStartCharIndex'\n]\n"
                                           '__all__ = [\n    "OAuth1Auth",\n    "AsyncOAuth1Client",\n]\n'),
    "a variable with a digit under a credential name": (
        "exports.Socks5Auth = Socks5Auth;\npassword: password2\ntoken = sha256Token\n"
        "secretKey: secretKey256\nauth: OAuth2Auth\n"),
    "coloured output with nothing in it": "\x1b[32mok\x1b[0m all \x1b[1mgood\x1b[0m, 3 passed\n",
    "a JSON object or list on the line after a credential name": (
        '{\n  "token":\n    {\n      "type": "jwt"\n    },\n  "passwords":\n    [\n      "x"\n    ]\n}\n'),
    "a header pair's scheme alone": 'f("Authorization", "Basic realm")\n("password", "basic auth is off")\n',
    "a slug of words and numbers": "password_hint: created_at_2024\ntoken_file: release-20240101.txt\n",
    "an expression": "request.withCredentials = !!_config.withCredentials;\n",
    "a type annotation": "  token: CancelToken;\n",
    "a flag about credentials": ("withCredentials = 'same-origin',\n"
                                 "const isCredentialsSupported = \"credentials\" in x;\n"),
    "an identifier list": "'PKPaymentToken', 'PKPushCredentials', 'PKPushPayload', 'TKTokenAuthOperation'",
    "AWS pagination token": '{"NextToken": "eyJOZXh0VG9rZW4iOiBudWxsLCAiYm90b190cnVuY2F0ZV9hbW91bnQiOiAyfQ=="}',
    "AWS idempotency token": '{"ClientToken": "d7320dc1-e02a89b3d3e2", "ChangeToken": "abcd12f2-46da"}',
    "AWS account id": '{"AWSAccountId": "111122223333", "Arn": "arn:aws:kms:us-west-2:111122223333:key/mrk-1"}',
    "an ARN's parts": '"ARN": "arn:aws:secretsmanager:us-east-1:448960724199:secret:prod/db-password-9c9441"',
    "a key spec": '"CustomerMasterKeySpec": "SYMMETRIC_DEFAULT"',
    "git config keys": "credential.https://github.com.helper=!/usr/bin/gh auth git-credential\n",
    "sudoers": "node ALL=(root) NOPASSWD: /usr/local/bin/init-firewall.sh\n",
    "prose headings": "**Custom Auth:** see below\nresolved secrets: scope-conflict\n",
    "Actions permissions": "permissions:\n  id-token: write\n  contents: read\njobs:\n  x:\n    secrets: inherit\n",
    "a Secret's non-secret fields": ('kind: Secret\nstringData:\n  host: pg.default.svc\n  port: "5432"\n'
                                     "  database: app\n  sslmode: require\n"),
    "a secret's namespace": 'secretNamespace: "default"\n',
    "prose without a secret": "The password is correct.\n",
    # The second precision pass (bench/README.md, *Precision and recall, second pass*).
    "a ternary under a credential name": 'duplex:"half",credentials:A?y:void 0})',
    "array indexing after a bare key=": "const key=u8array[i+2]|(u8array[i+3]<<8);",
    "a dotted function after key=": "ordered = sorted(candidates, key=TokenTransformBase.sortby)\n",
    "namespaced symbols": ('"passwd:dir",\n"passwd:gecos",\n"passwd:gid",\n'
                           "auth-string OAuth:auth-string params OAuth:params call OAuth:gen-nonce"),
    "class names in a list": ("'ASAuthorizationRequest', 'ASAuthorizationSingleSignOnCredential', "
                              "'NSHTTPCookie', 'NSHTTPCookieStorage', 'NSHTTPURLResponse'"),
    "a prompt string": 'password = self.secret("Password:")\n',
    "a scheme word alone": "options.headers['Proxy-Authorization'] = 'Basic ' + base64;\n",
    "a value naming its kind": "password: 'password',\nPOETRY_PYPI_TOKEN_FOO=my-token\n",
    "a variable in a string": 'docker run --rm --name pacotest -v \\"$PWD\\":/tmp -w /tmp node:latest\n',
    "short literals compared with a token": "if token == '(':\nelif token.string == \",\":\n",
    "a database's key": '"primary_key": "5f3a9c2b7d6e4a10",\ncache_key: "node-modules-3f2a9c8b7d6e5f4a3b2c"\n',
    "a slug of words under a key, one with a digit inside": 'key = "deploy-k8s-cluster-main"\n',
    "a masked key": "key = AQBfxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx==\n",
    "an S3 object key": '{"Key": "logs/2024/01/app-7f3a9c2b1d.log.gz"}',
    "Bundler's mirror": "BUNDLE_MIRROR__RUBYGEMS__ORG=https://gems.example.com/\n",
    # Found by a red team on the rules above.
    "cache keys": ("Cache restored from key: Linux-node-{h}\n- key: v1-deps-{h}\n"
                   "cache_key = node-cache-Linux-x64-npm-{h}\n").format(h=COMMIT),
    "a commit hash under a key": "commit {h}\n    Bump key = {h}\n".format(h=COMMIT),
    "a name in code with a bit width under a key": 'key = "readUInt32BigEndian"\nkey = "writeInt16LE"\n',
    "names and values chained under a key name": "a_key=a_key=a_key=b_key=c2_key=d3_key=e4_key=f5\n",
    "quoted words, labels and cache keys after a bare key and a colon": (
        '- key: "node-role.kubernetes.io/control-plane"\n  key: "{h}"\n'
        '  key: "v1-deps-{h}"\n  {{ key: "readUInt32BigEndian", value: function f() {{}} }}\n').format(h=COMMIT),
    "words and hashes under a secret's word glued to key": "?tokenkey=auth_token_storage_v2&k=1\ntokenkey={h}\n".format(
        h=COMMIT),
    "template fields in braces after curl's user flag": (
        'curl -u "{apiKey}:{apiSecret2}" https://api.example.test/\ncurl --user admin:{Pass123Word} x\n'),
    "a transpiled class's method names after a bare key and a colon": (
        '  _createClass(Select, [{\n    key: "UNSAFE_componentWillReceiveProps",\n'
        '    value: function UNSAFE_componentWillReceiveProps(nextProps) {\n'
        '    key: "renderMenuItemsV2",\n  {key: "-NxYz3abcDEF12gHiJkL"}, {key: "V1StGXR8_Z5jdHi6B-myT"}\n'),
    "a dotted module path whose first part has 26 characters": (
        "from configuration_manager_base.models.ConfigurationManagerSerializer2 import x\n"),
    "a key compared with a word or a hash": ('if sortKey == "createdAtTimestamp" {{\n'
                                             'if key == "{h}" {{\n').format(h=COMMIT),
    "cache keys led by a version tag": "restore_key = v1-deps-{h}\nkey = v3-gems-Linux-{h}\n".format(h=COMMIT),
    "an integrity string under a key name": "integrity_key: sha512-abcDEF1234567890abcdefGHIJ==\n",
    "S3 object keys without an extension": ('{"Key": "uploads/3f9a2b7c8d1e4f5061728394"}\n'
                                            "Key=uploads/3f9a2b7c8d1e4f5061728394\n"),
    "lexer and test comparisons": ('if token == "#include":\n    assert token.text == "a + b * c"\n'
                                   'if secret == "projects/123/secrets/db/versions/1":\n'),
    "a dotted index after key=": "for(let i=0;i<l;++i){const key=this.keysAndCardinalities[i*4]|0}",
    "ids under key names": ('{"runKey": "a1b2c3d4-e5f6-7890-abcd-ef1234567890",\n'
                            ' "taskKey": "c3ab8ff13720e8ad9047dd39466b3c89"}\n'
                            'forKey:@"AbCdEf0123456789"\nBUNDLE_LOCAL__RACK=/home/u/rack\nif token == "<<=>>=!=":\n'),
    # Found by a red team on the rules above.
    "public keys, ids and digests under key names": (
        "gpgkey=https://download.docker.com/linux/centos/gpg\nuser.signingkey=3AA5C34371567BD2\n"
        "?GoogleAccessId=svc@proj.iam.gserviceaccount.com&Expires=1700000000\naws_access_id = 12345\n"
        '<div data-sitekey="6LeIxAcTAAAAAJcZVRqyHh71UMIEGNQ_MXjiZKhI"></div>\nmonkey = \'a1b2c3d4e5f6a7b8c9d0\'\n'
        "storagekey: 'todos-vuejs-2.0'\nkey: ubuntu22-04-x64-node18\nkey: 7EA0A9C3F273FCD8\n"
        "solarwinds_site_key = 'a1B2c3D4e5F6g7H8i9J0'\napi-internal-user-data-sync-notification\n"),
    # Found by a second red team.
    "a brace after a credential name": ('my $pw = $password{"alice"};\nm := map[string]Credential{"prod": {}}\n'
                                        'echo(f"Rotated {n} password{\'s\' if n != 1 else \'\'}")\n'
                                        "class TokenManager {\n  constructor() {}\n.token {\n  color: red;\n}\n"),
    "a transpiled class's method names": '  }, {\n    key: "readUInt32BigEndian",\n    value: function f() {',
    "flags with key names and no random value": (
        "aws s3api get-object --key uploads/3f9a2b7c8d1e4f5061728394.png out\n"
        "--cache-key node-cache-Linux-x64-npm-%s --storagekey todos-vuejs-2.0\n"
        "gpg --signingkey 3AA5C34371567BD2 --recv-keys 7EA0A9C3F273FCD8\n" % COMMIT),
    # Found by a red team on the flags above: object keys, ids, public keys and their copies.
    "object keys, ids and public keys after key flags": (
        "aws s3api put-object --bucket b --key Invoice12345.pdf --body Invoice12345.pdf\n"
        "restore --key 01HZX3K5Q7V8W9ABCDEFGHJKMN\norder 01HZX3K5Q7V8W9ABCDEFGHJKMN shipped\n"
        "apt-key adv --recv-keys 0xF1656F24C74CD1D8\n"
        "gpg --default-key 0x3AA5C34371567BD2 --signingkey 0x3AA5C34371567BD2\n"
        "wg set wg0 --peer-key xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=\n"),
    "a duo is no vendor, an MD5 after a salt no Tableau token": (
        'duo_key: duo\nduoKey: "duoQueue"\nDUO_IKEY=DIWJ8X6AEYOR5OMC6TQ1\n'
        "enc:XUFAKrxLKna5cZ2REBfFkg==:9dd4e461268c8034f5c8564e155c67a6\n"
        "IgP/58waM+Dx3A5idNoDCD==:84YrNbuBhOwc8fjOWOrOwd8S7Ba16j7p/abc+\n"),
    # Found by a second red team.
    "a sort key's ULID, an upper-case MD5 after a salt, a 0x MD5": (
        '{"pkey": "01HGW2N7EXJ3G3B2Q6X9ZC8Y4T", "skey": "01HGW2N7EXJ3G3B2Q6X9ZC8Y5V"}\n'
        "user1,c2FsdHNhbHRzYWx0c2FsdA==:9E107D9D372BB6826BD81D3542A419D6\n"
        "--gpgkey 0x9E107D9D372BB6826BD81D3542A419D6\n"),
    "an AWS secret's name": 'client.get_secret_value(SecretId="MyDbSecret01")\n"SecretId": "MyTestSecret22"',
    "a ConfigMap's data after a Secret": ("kind: Secret\ndata: {}\n---\nkind: ConfigMap\ndata:\n  # logging\n"
                                          "  LOG_LEVEL: debug\n"),
    "an index, an access id of a row, a glued key of a cache": (
        "token[i] = x;\naccess_id = 12345\nuser.access_id: 8a7b6c5d4e3f2a1b\ncachekey: a1B2c3D4e5F6g7H8i9J0\n"
        "DB_PASSWORD=\nDB_HOST=localhost\n"),
    "pagination and trace keys": '"nextKey": "a1B2c3D4e5F6g7H8i9J0", "traceKey": "1-5759e988-bd862e3fe1be46a9"',
    # A literal compared with a name that has no word (it raised IndexError, which failed the call).
    "a comparison with a nameless name": 'if "value1" == _: pass\nx = "abc" === $;\ntest "abcdefgh" == _1\n',
    # Issue 23, a held-out sample (bench/README.md): Debian changelogs name flags in prose.
    "a flag named in prose": ("\t--show-session-key.  Remove meanwhile superfluous NULL-ptr test.\n"
                              "\tgpg: Fix regression for non-default --passphrase-repeat option.\n"
                              "\tAlso handle --check-sym-passphrase-pattern here.\n"
                              "\tgpg --passphrase-repeat 2\n"),
    # npm's global packages (undici): regular expressions, private fields, kConstants.
    "regular expression literals under credential names": (
        "const invalidTokenRegex = /[^^_`a-zA-Z\\-0-9!#$%&'*+.|~]/\n"
        "const UNEXPECTED_TOKEN = /^Unexpected token '?(.)'?(,)? /i\n"
        "    msg.match(/^Unexpected end of JSON.*/i)\n"),
    "a private field under a credential name": "    const cookies = this.#headersList.cookies\n",
    "a kConstant under a credential name": "  getSetCookie: kEnumerableProperty,\n  append: kEnumerableProperty,\n",
    # Python's standard library: a call after a bare key=.
    "a call after a bare key=": "        stats_list.sort(key=cmp_to_key(TupleComp(sort_tuple)).compare))\n",
    # npm's CLI output: a setting named by a slug of the name's own word.
    "a slug holding the name's word": "two-factor auth: auth-and-writes\n  auth: auth-only\n",
    # trufflehog's YAML: a scanner's rule under a credential name, a key file's path.
    "a regular expression under a credential name": (
        '    generic-api-key: "(?i)(?:key|api|token|secret)(?:[0-9a-z\\\\-_\\\\t .]{0,20})"\n'
        'password_regex: "^[a-zA-Z0-9]{8,}$"\n'),
    "a path under a credentials variable": (
        "        -e GOOGLE_APPLICATION_CREDENTIALS=/tmp/keys/GCP_SA_TRUFFLE_RELEASE_BOT.json \\\n"
        "        -v ${{ steps.auth.outputs.credentials_file_path }}:/tmp/keys/GCP_SA_TRUFFLE_RELEASE_BOT.json:ro \\\n"),

    "quoted words and calls in prose": ('The token is `string`; the password is "correct".\n'
                                        "my token is `getToken()`\nPassword for 'https://bob@github.com': \n"),
    "a reference in prose": ("The password is process.env.DB_PASSWORD.\nAPI key: config.apiKey\n"
                             "Your API key: os.environ.OPENAI_API_KEY\n"),
    "a branch name led by a ticket key that starts like a token": (
        "git checkout -b feature/sk-1234-fix-login-redirect-v2\nGITHUB_HEAD_REF=sk-42-add-api-docs\n"),
    "a bare noun's colon and a word": "token: string\nAPI key: required\nSecret key: see below\n",
    "where a secret is kept, in prose": (
        "Secret key: ~/.ssh/id_ed25519\nAPI key: op://Private/OpenAI/credential2\nYour API key: config.yaml#L12\n"
        "The password is env:DB_PASSWORD2\nYour API key: ****abcd1234\nAPI key: ./secrets/api-key-2024.txt\n"
        "The password is /etc/ssl/private/server2024.key\nYour API key: keyring:openai/default2\n"),
    # What a tool shows masked on purpose: `aws configure list`, `gh auth status`, a dashboard's
    # last four, a document's ellipsis.
    "a value shown masked": (
        "access_key     ****************ABCD shared-credentials-file\n"
        "  - Token: gho_************************************\nYour token: ****abcd1234\n"
        "OPENAI_API_KEY=sk-...abcd\napi_key: sk-proj-****************************wxyz\n"
        "token: gho_\u2022\u2022\u2022\u2022\u2022\u2022\u2022\u2022abcd\n"
        'char password[] = "\u2026";\n`os.environ["API_TOKEN"] = "\u2026"`\n'),
    # A command's --help, which agents read often: argparse, click, cobra and Go's flag package.
    "a flag's metavariable in a command's help": (
        "  --api-key KEY        Your API key\n  --password PASSWORD  the password\n"
        "  --client-secret CLIENT_SECRET\n  --auth-token AUTH_TOKEN\n  -p PASS, --password PASS\n"
        "  --password TEXT  (click)\n      --token string   API token (cobra)\n"
        "  -password string\n    \tpassword (Go's flag)\n  --token TOKEN_FILE\n"
        "  --password=PASS   set both ftp and http password to PASS\n  --load-cookies=FILE\n"
        "  --private-key=FILE   private key file\n  --augment-creds=BOOL  Extend credential data\n"
        "  -A, --auth=METHOD   default authentication method\n"
        "  --enforce-passphrase-constraints   do not allow bypassing the passphrase policy\n"
        "  --no-ask-password   Do not prompt for password\n  --token GITHUB_TOKEN\n  --db-password DB_PASS\n"
        "  --private-key PEM_FILE\n  --password P\n  -password val\n  --client-key=keyfile\n"),
    "a label's word after a two-word noun": (
        "Secret key: AES-256-GCM\nAPI key: HMAC-SHA256 signed\nSecret key: secp256k1\n"),
}


@pytest.mark.parametrize("text", list(KEPT.values()), ids=list(KEPT))
def test_ordinary_output_is_kept(text):
    assert magihook.redact_credentials(text) == text


REDACTED = {
    "your API key:": ("Your API key: %s" % SECRET, "Your API key: %s" % M),
    "password for a user:": ("Password for bob: Tr0ub4dor-x9Q", "Password for bob: %s" % M),
    "password for user <name>:": ("password for user bob: Tr0ub4dor-x9Q", "password for user bob: %s" % M),
    "API key: without a possessive": ("API key: %s" % SECRET, "API key: %s" % M),
    "Secret key: without a possessive": ("Secret key: %s" % SECRET, "Secret key: %s" % M),
    "the password is": ("The password is Tr0ub4dor-x9Q.", "The password is %s." % M),
    "your api key is": ("your api key is %s" % SECRET, "your api key is %s" % M),
    "a quoted value after the token is": ('My token is "Tr0ub4dor-x9Q".', 'My token is "%s".' % M),
    "a backquoted value after your API key:": ("Your API key: `%s`" % SECRET, "Your API key: `%s`" % M),
    "git's prompt, password for a quoted URL:": ("Password for 'https://bob@github.com': Tr0ub4dor-x9Q",
                                                 "Password for 'https://bob@github.com': %s" % M),
    "a value also found under a name": ("TOKEN=%s\ncurl -H %s" % (SECRET, SECRET), "TOKEN=%s\ncurl -H %s" % (M, M)),
    "a random value after a bare key": ("[DEBUG] using key = 81a1411a7e276fd88819df3137eb406e0f",
                                        "[DEBUG] using key = %s" % M),
    "a random value after a vendor's key": ('clinchpad_key: "3v1xo5r03ghc538iwzbzeddwqulnun8h"',
                                            'clinchpad_key: "%s"' % M),
    "a Go name ending in Key": ('solarwindsKey := "Xwl4ViaAFDLrAmFX9g1blkUVC5dJj2he3a1tzkpJ4"',
                                'solarwindsKey := "%s"' % M),
    "a slug with a random part": ("PGANALYZE_READ_KEY=pgar_1f3a9c2b7d6e5f4a3b2c1d0e9f8",
                                  "PGANALYZE_READ_KEY=%s" % M),
    "a slug of random groups in a log line": ("[DEBUG] Using alegra Key=wdvn-usa87a-fxp9ioas",
                                              "[DEBUG] Using alegra Key=%s" % M),
    "letters only, mixed case": ('convertkit_key: "hfCnuVcYOgiRjlDEmAoRbN"', 'convertkit_key: "%s"' % M),
    "Vault's secret_id": ("secret_id = '87654321-4321-4321-4321-cba987654321'", "secret_id = '%s'" % M),
    "a comparison": ('if (api_key == "m{{h}o)p${e]nob(ody}}") {', 'if (api_key == "%s") {' % M),
    "a strict comparison": ("if (db_pass !== 'Tr0ub4dor-x9Q') {", "if (db_pass !== '%s') {" % M),
    "a reversed comparison": ('if ("m{{h}o)p${e]nob(ody}}" === private_key) {', 'if ("%s" === private_key) {' % M),
    "Objective-C's @": ('password = @"Tr0ub4dor-x9Q";', 'password = @"%s";' % M),
    "a statement": ('password "Tr0ub4dor-x9Q";', 'password "%s";' % M),
    "a name ending in _pw": ("cloudant_pw='abcd1234abcd1234'", "cloudant_pw='%s'" % M),
    "an unsigned JWT": ("x eyJ0eXAiOiJKV1QiLCJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0NTY3ODkwIn0 y", "x %s y" % M),
    "curl's quoted user and password": ("curl --user kevin:'pRf7vG2h1L8nQkW9' -X PATCH",
                                        "curl --user kevin:'%s' -X PATCH" % M),
    "curl's empty user": ('curl -u ":d2LkV78zLx!t" https://localhost:9200',
                          'curl -u ":%s" https://localhost:9200' % M),
    "Bundler's credentials for a gem host": ("export BUNDLE_GEMS__CONTRIBSYS__COM=cafe1234:beef5678 && ls",
                                              "export BUNDLE_GEMS__CONTRIBSYS__COM=%s && ls" % M),
    "SonarQube's sonar.login": ('SONAR.LOGIN ?= "sqa_4f2a9c8b7d6e5f4a3b2c1d0e"', 'SONAR.LOGIN ?= "%s"' % M),
    "a typed password holding its kind's word": (
        "DB_PASSWORD=supersecret123\npassword: secret123\nspring.datasource.password=mypass2024",
        "DB_PASSWORD=%s\npassword: %s\nspring.datasource.password=%s" % (M, M, M)),
    "a setting's letters-only password holding its kind's word": (
        "POSTGRES_PASSWORD=mysecretpassword\n  SECRET: topsecret",
        "POSTGRES_PASSWORD=%s\n  SECRET: %s" % (M, M)),
    "a password that reads as a word in a connection string, a query or a setting": (
        "Server=db;User Id=sa;Password=SuperSecret;\njdbc:mysql://db/app?user=root&password=MyDbPass\n"
        "PASSWORD=MyS3cretPwd",
        "Server=db;User Id=sa;Password=%s;\njdbc:mysql://db/app?user=root&password=%s\nPASSWORD=%s" % (M, M, M)),
    "a label in Markdown's strong emphasis": (
        "**API key:** %s\n**Password**: Tr0ub4dor-x9Q\n- **Token:** %s" % (SECRET, SECRET),
        "**API key:** %s\n**Password**: %s\n- **Token:** %s" % (M, M, M)),
    "a header pair whose value has a scheme": (
        '[["Authorization", "token %s"], ["Authorization", "Basic dXNlcjpwYXNzd29yZA=="]]' % SECRET,
        '[["Authorization", "token %s"], ["Authorization", "Basic %s"]]' % (M, M)),
    "a pair printed over lines, as json.dumps(indent=2) and jq print it": (
        '{\n  "headers": [\n    [\n      "X-Api-Key",\n      "%s"\n    ]\n  ],\n  "env": [\n    {\n'
        '      "name": "API_KEY",\n      "value": "%s"\n    }\n  ]\n}' % (SECRET, SECRET),
        '{\n  "headers": [\n    [\n      "X-Api-Key",\n      "%s"\n    ]\n  ],\n  "env": [\n    {\n'
        '      "name": "API_KEY",\n      "value": "%s"\n    }\n  ]\n}' % (M, M)),
    "a pair in a JSON string's escaped JSON": (
        '{"body": "{\\"headers\\": [[\\"X-Api-Key\\", \\"%s\\"]]}"}' % SECRET,
        '{"body": "{\\"headers\\": [[\\"X-Api-Key\\", \\"%s\\"]]}"}' % M),
    "coloured output": (
        "\x1b[35m.env\x1b[m:\x1b[01;31mAPI_KEY\x1b[m=%s\n"
        "\x1b[1;34m\"password\"\x1b[0m: \x1b[0;32m\"Tr0ub4dor-x9Q\"\x1b[0m" % SECRET,
        ".env:API_KEY=%s\n\"password\": \"%s\"" % (M, M)),
    "a credential inside or after an escape that is no colour code": (
        "\x1b]0;title\napi_key=%s\n\x1bPq\npassword: %s\n\x1b]8;;https://bob:Tr0ub4dor-x9Q@host/\x07a\x1b]8;;\x07"
        % (SECRET, SECRET),
        "\x1b]0;title\napi_key=%s\n\x1bPq\npassword: %s\n\x1b]8;;https://bob:%s@host/\x07a\x1b]8;;\x07" % (M, M, M)),
    "a JSON value wrapped to the line after its name": (
        '{\n  "password":\n    "%s"\n}' % SECRET, '{\n  "password":\n    "%s"\n}' % M),
    "a vendor's word, a dash and a random part in prose": (
        "Your API key: sk-4f3c2b1a9d8e7f6a\nThe password is abc_4f3c2b1a9d8e7f6a.",
        "Your API key: %s\nThe password is %s." % (M, M)),
    "a weak password is still one": ('password=pass\n"password": "pass"', 'password=%s\n"password": "%s"' % (M, M)),
    "a lower-case secret after a bare colon, once": ("user=admin password:letmein", "user=admin password:%s" % M),
    "a base64 key with a / in a query": ("https://s3.test/o?key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzKEY1",
                                         "https://s3.test/o?key=%s" % M),
    "a secret with ? and : in it": ("TOKEN=AbC?DeF:GhIjKlMnOpQr123", "TOKEN=%s" % M),
    "a shell test": ('[ "$password" = "Tr0ub4dor&3" ]', '[ "$password" = "%s" ]' % M),
    "a lower-case secret after a bare colon": ("token:kdjfhgqpwoeirutyzmxn", "token:%s" % M),
    "a flag and a colon": ("--password:correct-horse-battery-staple", "--password:%s" % M),
    "a Java system property": ("mvn sonar:sonar -Dsonar.login=3v1xA9kQm2Zr8TqW4pLs3v1x",
                               "mvn sonar:sonar -Dsonar.login=%s" % M),
    "a reversed comparison with a key name": ('if ("3v1xA9kQm2Zr8TqW4pLs" == clinchpad_key)',
                                              'if ("%s" == clinchpad_key)' % M),
    "curl's quoted password with a space": ("curl -u deploy:'arJy RbjSKE6dA1G2izQ' https://x/",
                                            "curl -u deploy:'%s' https://x/" % M),
    "a value longer than the pattern reads": ("api_key=" + "A1b2" * 600 + " next", "api_key=%s next" % M),
    "a URL's placeholder password still goes": ("https://username:password@yelp.com",
                                                "https://username:%s@yelp.com" % M),
    "a Secret's password": ("kind: Secret\nstringData:\n  port: \"5432\"\n  password: %s\n" % SECRET,
                            "kind: Secret\nstringData:\n  port: \"5432\"\n  password: %s\n" % M),
    # Issue 23, recall on the peers' test data: syntaxes and names.
    "a C array": ('char secret[] = "%s";\nstatic char api_key[33] = "%s";' % (SECRET, SECRET),
                  'char secret[] = "%s";\nstatic char api_key[33] = "%s";' % (M, M)),
    "a value on the next line": (
        'const scrapingBeeApiKey =\n  "%s";\nString API_TOKEN\n      = "%s";' % (SECRET, SECRET),
        'const scrapingBeeApiKey =\n  "%s";\nString API_TOKEN\n      = "%s";' % (M, M)),
    "JSON escaped twice": ('{\\\\\\"auth\\\\\\":\\\\\\"%s\\\\\\"}' % SECRET,
                           '{\\\\\\"auth\\\\\\":\\\\\\"%s\\\\\\"}' % M),
    "an indexed name and a literal": ("assert.equal(conn['AccountKey'], '%s');" % SECRET,
                                      "assert.equal(conn['AccountKey'], '%s');" % M),
    "a random value after a bare key and a dash": ("key - '%s'" % SECRET, "key - '%s'" % M),
    "a vendor's glued key": ("azureFunctionkey: %s\nmailgunkey=%s" % (SECRET, SECRET),
                             "azureFunctionkey: %s\nmailgunkey=%s" % (M, M)),
    "a vendor's access id": ('SUMO_ACCESS_ID = "suGyI5imvADdvU"\nsumologic.accessId = "su9OL59biWiJu7"\n'
                             'export SUMOLOGIC_ACCESSID="suDbJw97o9WVo0"',
                             'SUMO_ACCESS_ID = "%s"\nsumologic.accessId = "%s"\n'
                             'export SUMOLOGIC_ACCESSID="%s"' % (M, M, M)),
    "a key name's flag and a random value": (
        "AzureStorageCleanup.exe -storagekey %s\nsync --accountkey %s\nstoragekey=%s" % (SECRET, SECRET, SECRET),
        "AzureStorageCleanup.exe -storagekey %s\nsync --accountkey %s\nstoragekey=%s" % (M, M, M)),
    "a qualifier's key glued to a word": ("--conf spark.copydata.storageaccountkey=%s \\" % SECRET,
                                          "--conf spark.copydata.storageaccountkey=%s \\" % M),
    "Duo's secret keys": ('DUO_SKEY=%s\n"duo_skey": "%s"\n[duo]\nskey = %s\nDUO_AKEY=%s' % ((SECRET,) * 4),
                          'DUO_SKEY=%s\n"duo_skey": "%s"\n[duo]\nskey = %s\nDUO_AKEY=%s' % ((M,) * 4)),
    "a glued key's flag value is not looked for elsewhere": ("-storagekey %s\nechoed %s" % (SECRET, SECRET),
                                                            "-storagekey %s\nechoed %s" % (M, SECRET)),
    "a secret that holds dots, stars or bullets": (
        "password: Summer...2024\nDB_PASSWORD=Xk9mQ2vL7p...R4t\npassword=hun\u2026ter22\n"
        "https://bob:hunter2****x@github.com/x.git\nclient_secret=Xk9mQ2vL7pRt****\n"
        "secret: abcdefghijkl****mnopqrstuvwx\npassword=Xk9mQ2vL7p\u2022\u2022Rt5\n",
        "password: %s\nDB_PASSWORD=%s\npassword=%s\nhttps://bob:%s@github.com/x.git\nclient_secret=%s\n"
        "secret: %s\npassword=%s\n" % ((M,) * 7)),
    "a value cut short, or with too much of it in view": (
        "password=MyPa$$w0rd...\npassword: Zx9Qw4Lp7Rt2Vb\u2026\ntoken: Zx9Qw4Lp7Rt2Vb6Nm3Kj****\n",
        "password=%s\npassword: %s\ntoken: %s\n" % (M, M, M)),
    "an upper-case value after a credential flag, not made of words": (
        "--password HUNTER2XYZ\n--token QWXZRTPLMKJHGFDS\n--api-key KEY_A7F3Q9Z2\n--password=HUNTER2XYZ\n"
        "PASSWORD=PASS\nmysql -u root --password hunter -h db\n--passphrase Summer --batch\n"
        "docker run db --admin-password=ADMIN\nmysqld --root-password ROOT\n--password HUNTER\n",
        "--password %s\n--token %s\n--api-key %s\n--password=%s\nPASSWORD=%s\nmysql -u root --password %s -h db\n"
        "--passphrase %s --batch\ndocker run db --admin-password=%s\nmysqld --root-password %s\n--password %s\n"
        % ((M,) * 10)),
    "a flag's word, a flag's value before a sentence's period": (
        "gpg --passphrase correcthorse --batch\nrun --session-key 9F8E7D6C5B4A3928.\n",
        "gpg --passphrase %s --batch\nrun --session-key %s\n" % (M, M)),
    "a random value after a JavaScript name, also from a slash": (
        "  getSetCookie: kQ7vX2mP9rT4wZ1y,\nconst apiKey = /9aXq+2LmP4vR7tW1zY3b==;\n",
        "  getSetCookie: %s\nconst apiKey = %s;\n" % (M, M)),
    "a secret with a parenthesis after a bare key=": ("https://x.test/v1?key=AIzaK9x2(Lm4vR7tW1zY3b\n",
                                                       "https://x.test/v1?key=%s\n" % M),
    "base64 with slashes, a parenthesis in a password": (
        'GOOGLE_APPLICATION_CREDENTIALS=/9aXq+2LmP4vR7tW1zY3b==\napi_key: "/Ab9xQ2mP/7vR4wZ1yK3b"\n'
        'password: "(?Tr0ub4dor"\n',
        'GOOGLE_APPLICATION_CREDENTIALS=%s\napi_key: "%s"\npassword: "%s"\n' % (M, M, M)),
    "a passphrase of words": ("password: correct-horse-battery-staple\n", "password: %s\n" % M),
    "a random value cut at its capitals, no word of it read": ("sumo_token: suzBzPkHwtgsx2\n", "sumo_token: %s\n" % M),
    "joined base64 pieces under a key name": (
        'appointeddKey := "Ci0a2bSpRyFcZyEXBEr9RHzf3xXllqO=XVoh+t0L0s8T2s3MFntfWhBlovqLaqEadtuJ9=Jy6yCOXmhbp"',
        'appointeddKey := "%s"' % M),
    "a random value under a secret's word glued to key, in a URL's query": (
        '"https://api.dronahq.com/v1/example?tokenkey=5j5jvhn9hm6qojajn61pe1ccqly424lrd0g41vbh6wwscer3pa"',
        '"https://api.dronahq.com/v1/example?tokenkey=%s"' % M),
    "a key name compared with a random literal": ('if browserstackKey != "cK1bq7JREJtMf1meaGgs" {',
                                                  'if browserstackKey != "%s" {' % M),
    # Formats by their own shape, under any name or none.
    "GitLab's runner registration token, also in a long text": (
        "x" * 5000 + " gitlab-runner register -r GR1348941PREfix_helloworld380_testin_pretty_long_token_long",
        "x" * 5000 + " gitlab-runner register -r %s" % M),
    "Laravel Sanctum's token, also with Sanctum 4's checksum": (
        '  convier_key: "49|07KJBwfPzF2ESyNui5yBw9OVB6eWj0iXkssEKC7b"\n'
        "curl -H 'Authorization: Bearer 12|kF0eLtelycrpKLzLiUr0hMlHFGbCkR8kR0lVGX5S3a5b7c9d'",
        '  convier_key: "%s"\ncurl -H \'Authorization: Bearer %s\'' % (M, M)),
    "New Relic's license key of the EU region": (
        "new relic license key EU = 'eu01xxb7e8b0dddc28ac051a64ffd583FFFFNRAL'",
        "new relic license key EU = '%s'" % M),
    "a random password in braces after curl's user flag": (
        'curl -X POST --user "{acd3c08b-74e8-4f44-a2d0-80694le24f46}":"{ZqL5kVrX1n8tA2}" --header "Accept: text/plain"',
        'curl -X POST --user "{acd3c08b-74e8-4f44-a2d0-80694le24f46}":"%s" --header "Accept: text/plain"' % M),
    "BestTime's private key in a URL's path": (
        'url := "https://besttime.app/api/v1/keys/pri_099889f14d114dfaae476569b395eade"',
        'url := "https://besttime.app/api/v1/keys/%s"' % M),
    "a comment in a Secret's data": ("kind: Secret\ndata:\n  # base64 of the password\n  key: bXlwYXNzd29yZA==\n",
                                     "kind: Secret\ndata:\n  # base64 of the password\n  key: %s\n" % M),
}


@pytest.mark.parametrize("text, expected", list(REDACTED.values()), ids=list(REDACTED))
def test_prose_and_named_credentials_are_redacted(text, expected):
    assert magihook.redact_credentials(text) == expected


def test_a_word_found_under_a_name_is_redacted_there_only():
    text = ("MYSQL_PASSWORD=petclinic\npackage org.springframework.samples.petclinic.owner;\n"
            "https://github.com/spring-projects/spring-petclinic\n")
    assert magihook.redact_credentials(text) == text.replace("=petclinic", "=" + M)


def test_a_name_value_list_pair_is_redacted_in_every_place_a_string_is_scanned():
    event = {"headers": [["X-Api-Key", SECRET], ["Accept", "text/plain"]]}
    summarized = magihook.redact_tree(event)
    assert summarized["headers"][0][1] == {"redacted": True, "kind": "credential", "bytes": len(SECRET)}
    assert summarized["headers"][1] == ["Accept", "text/plain"]
    assert magihook.redact_tool_result(event) == {"headers": [["X-Api-Key", M], ["Accept", "text/plain"]]}
    assert SECRET not in magihook.redact_credentials(json.dumps(event))


def test_prose_in_an_assistant_message_and_a_subagent_prompt():
    settings = magihook.settings_from_document({"hooks": {"enabled": True, "after_assistant": [
        {"command": "cat > /dev/null"}]}})
    message = magihook.redact_request({"text": "Your API key: %s" % SECRET}, "after_assistant")
    assert message == {"text": "Your API key: %s" % M}
    prompt = magihook.redact_request({"tasks": [{"prompt": "the password is Tr0ub4dor-x9Q"}]}, "before_tool")
    assert prompt == {"tasks": [{"prompt": "the password is %s" % M}]}
    assert magihook.run_phase(settings, "after_assistant", {"text": "x"})["verdict"] == "continue"


LONG_PAD = "# note: a line of output, nothing in it = 1\n" * 400     # past the short-text paths


@pytest.mark.parametrize("text, expected", [REDACTED[k] for k in REDACTED if "is" in k or ":" in k],
                         ids=[k for k in REDACTED if "is" in k or ":" in k])
def test_prose_in_a_long_text_is_found_by_the_name_passes(text, expected):
    assert magihook.redact_credentials(LONG_PAD + text) == LONG_PAD + expected
    assert magihook.redact_credentials(text + "\n" + LONG_PAD) == expected + "\n" + LONG_PAD


@pytest.mark.parametrize("text, expected", [
    ("the password\tis Tr0ub4dor-x9Q", "the password\tis %s" % M),
    ("password for bob is Tr0ub4dor-x9Q", "password for bob is %s" % M),
])
def test_prose_without_a_colon_is_found(text, expected):
    assert magihook.redact_credentials(text) == expected


# Issue 23, criterion 6: more prose forms of a credential, each with prose that looks like it
# and is kept.  A form that needs no owner or verb before the noun (a value after `is`, `was`, a
# verb that sets it) takes a value that looks like a secret; the looser ones a random one.
MORE_PROSE = {
    "a verb that sets it and to": (
        ["Your password has been set to {s}", "Set the password to {s}.", "Your password was reset to {s}"],
        ["Set the password to something long.", "The password was reset to the default.",
         "Send the password to admin2024@example.com"]),
    "was": (["the password was {s}", "The token was {s}."],
            ["the password was changed yesterday", "The token was revoked at 10:42."]),
    "a bare key and is": (["The key is {s}", "Your key was {s}."],
                          ["The key is missing.", "The key is `id`.", "The primary key is user_id_2024.",
                           "The key is 3f9a2b7c8d1e4f50", "A monkey is Ab3dEf6hIj9kLm2nOp5q"]),
    "a space alone, after a verb that takes it": (
        ["Use the API key {s} to call it", "Login with password {s}"],
        ["Use the API key from step 2", "Login with password authentication",
         "Use the token v1.2.3-beta4 to test"]),
    "the next line, alone there": (
        ["Your API Key:\n{s}", "Your API key:\r\n`{s}`\r\n"],
        ["## API Key:\nCreate one in the dashboard, then paste it here.\n",
         "Your API key:\n\n1. Open the settings page\n", "token:\n  nested: value1234\n"]),
    # A name whose separator starts a prose one's (`password - `, `token s…`, as SECRET starts,
    # `password '…'`).
    "after a name's separator": (
        ["Your password - {s}", "Use the token {s}", "Login with password '{s}'", "your password set to {s}"],
        ["Your password - see the admin", "a token vs a password", "token 'x' and password 'y'"]),
    "a dash": (["Your API key \u2014 {s}", "Your API key \u2013 {s}", "Your API key - {s}"],
               ["Your API key \u2014 see the dashboard", "API key - required"]),
    # A bare key after a word that qualifies it, as `API key` (a vendor, MinIO's `Access Key:`);
    # not after one that names a key of another kind.
    "a key that a word names": (
        ["aylien key: {s}", "Access Key: {s}", "Your API2CART key is {s}", "Your key: {s}"],
        ["Public key: AAAAC3NzaC1lZDI1NTE5AAAAIGq8Hk2p", "Cache key: Ab3dEf6hIj9kLm2nOp5q",
         "- key: Ab3dEf6hIj9kLm2nOp5q", "aylien key: see the dashboard"]),
}
PROSE_PAD = "a line of prose, nothing in it\n" * 600      # long, and no name pass runs on it


@pytest.mark.parametrize("forms, kept", list(MORE_PROSE.values()), ids=list(MORE_PROSE))
@pytest.mark.parametrize("before, after", [("", ""), (LONG_PAD, ""), ("", "\n" + LONG_PAD), (PROSE_PAD, "")],
                         ids=["short", "long, after", "long, before", "long prose"])
def test_more_prose_forms_are_redacted_and_their_look_alikes_kept(forms, kept, before, after):
    for form in forms:
        text = before + form.format(s=SECRET) + after
        assert magihook.redact_credentials(text) == before + form.format(s=M) + after
    for text in kept:
        assert magihook.redact_credentials(before + text + after) == before + text + after


def test_a_key_that_a_word_names_takes_any_secret_after_an_owner_and_a_verb():
    """As `Your API key is X`: a vendor's key of 32 hex digits goes, which a bare key keeps."""
    value = "2afddb813193eb9d3b5bd99bf5d834cd"
    for before in ("", LONG_PAD):
        assert magihook.redact_credentials(before + "Your API2CART key is %s, which" % value) == (
            before + "Your API2CART key is %s, which" % M)
        assert magihook.redact_credentials(before + "The key is %s" % value) == before + "The key is %s" % value


def test_more_prose_forms_are_found_by_every_mode_of_the_name_passes():
    """Past _NAME_TEXT and _FULL_TEXT a lead's names and prose nouns are one pattern."""
    forms = [form for forms, _ in MORE_PROSE.values() for form in forms]
    kept = [text for _, texts in MORE_PROSE.values() for text in texts]
    block = "\n".join(form.format(s=SECRET) for form in forms) + "\n" + "\n".join(kept)
    for pad in (LONG_PAD * 4, LONG_PAD * 60):
        assert magihook.redact_credentials(pad + block) == pad + block.replace(SECRET, M)


def test_more_prose_forms_in_a_message_a_prompt_and_an_argv():
    assert magihook.redact_request({"text": "Login with password %s" % SECRET}, "after_assistant") == {
        "text": "Login with password %s" % M}
    prompt = magihook.redact_request({"tasks": [{"prompt": "Your API Key:\n%s\n" % SECRET}]}, "before_tool")
    assert prompt == {"tasks": [{"prompt": "Your API Key:\n%s\n" % M}]}
    assert magihook.redact_tool_result({"text": "The key is %s" % SECRET}) == {"text": "The key is %s" % M}
    assert magihook.redact_argv(["echo", "Use", "the", "API", "key", SECRET], {}) == [
        "echo", "Use", "the", "API", "key", M]


def test_a_random_value_under_a_key_name_is_redacted_in_json_too():
    """The key-name rule of the text scan holds for a JSON object's keys (payloads and the tool
    result the model reads): a random value goes, a database's key or a path stays."""
    value = {"clinchpad_key": "3v1xo5r03ghc538iwzbzeddwqulnun8h", "primary_key": "5f3a9c2b7d6e4a10",
             "Key": "logs/2024/01/app-7f3a9c2b1d.log.gz", "key": "PROJ-123"}
    summarized = magihook.redact_tree(value)
    assert summarized["clinchpad_key"] == {"redacted": True, "kind": "credential", "bytes": 32}
    kept = ("primary_key", "Key", "key")
    assert {k: summarized[k] for k in kept} == {k: value[k] for k in kept}
    for_model = magihook.redact_tool_result(value)
    assert for_model == dict(value, clinchpad_key=M)
    pair = {"name": "CLINCHPAD_KEY", "value": "3v1xA9kQm2Zr8TqW4pLs"}    # an env list's item
    assert magihook.redact_tree(pair)["value"] == {"redacted": True, "kind": "credential", "bytes": 20}
    assert magihook.redact_tool_result(pair) == dict(pair, value=M)
