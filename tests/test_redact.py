"""Redaction: the seeded session loses every secret in every format; the report names
rules, entries and lines, never a secret; filters are plugins; config; bulk reconversion."""

from __future__ import annotations

import json
import re
from pathlib import Path

import piconv
import pytest
from hypothesis import given
from hypothesis import strategies as st
from piconv.cli import main
from piconv.hookspecs import hookimpl
from piconv.redaction import RedactOptions, gitleaks
from piconv.registry import build_registry
from redact_seed import HOME, PAYLOAD, SECRETS, forms, seeded_session

FORMATS = ("asf", "markdown", "openai", "html", "ir", "pi")
ARGS = ["--redact", "--redact-value", SECRETS["value"], "--redact-pattern", r"ACME-[0-9]{4}"]


@pytest.fixture
def seeded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no user config
    path = tmp_path / "seeded.jsonl"
    path.write_bytes(seeded_session())
    return path


def _survivors(data: bytes) -> list[str]:
    return [rule for rule, secret in SECRETS.items() if any(f in data for f in forms(secret))]


def test_the_seed_holds_every_secret_before_redaction(seeded: Path, tmp_path: Path) -> None:
    # the check below can fail: without --redact every secret is in every format's output
    for fmt in FORMATS:
        out = tmp_path / f"plain.{fmt}"
        assert main([str(seeded), "--to", fmt, "-o", str(out), "-q"]) == 0
        assert len(_survivors(out.read_bytes())) >= 18, fmt


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_secret_survives_in_any_format(
    seeded: Path, tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out, report = tmp_path / f"out.{fmt}", tmp_path / "report.json"
    assert main([str(seeded), "--to", fmt, "-o", str(out), "--report", str(report), *ARGS]) == 0
    data = out.read_bytes()
    assert _survivors(data) == []
    assert HOME.encode() not in data
    summary = capsys.readouterr().err
    assert "redact:github-pat×" in summary and "redact:value×" in summary
    reported = report.read_bytes()
    assert _survivors(reported) == []  # the report names rules, never secrets
    notes = json.loads(reported)["notes"]["redaction"]
    assert notes["rules"]["private-key"]["count"] >= 1
    assert "e0000004" in notes["rules"]["jwt"]["entries"]
    assert notes["dropped"]["signature"]["count"] >= 1  # thinkingSignature


def test_placeholders_are_stable_within_a_session(seeded: Path) -> None:
    result = piconv.redact(piconv.load(str(seeded)), values=[SECRETS["value"]])
    doc = result.document
    texts = [
        e.message.content[0].text
        for e in doc.entries
        if e.message is not None and e.message.role == "user" and not isinstance(e.message.content, str)
    ]
    users = [
        e.message.content
        for e in doc.entries
        if e.message is not None and e.message.role == "user" and isinstance(e.message.content, str)
    ]
    assert texts and users and texts[0] == users[0] == users[1]
    assert "[REDACTED:github-pat#1]" in texts[0]
    assert "[REDACTED:value#1]" in texts[0]
    assert "ls ~/src" in texts[0]
    assert doc.session.cwd == "~/projects/app"
    # the tree is untouched: ids, parents, the leaf
    assert [e.id for e in doc.entries] == [e.id for e in piconv.load(str(seeded)).entries]


def test_rules_can_be_turned_off(seeded: Path) -> None:
    doc = piconv.load(str(seeded))
    on = piconv.redact(doc).to_json()["rules"]
    off = piconv.redact(doc, disabled=("url-password", "home")).to_json()["rules"]
    assert "url-password" in on and "url-password" not in off and "home" not in off


def test_unknown_rule_and_bad_pattern_are_usage_errors(
    seeded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(seeded), "--to", "ir", "--redact-skip", "no-such-rule"]) == 2
    assert "no rule called 'no-such-rule'" in capsys.readouterr().err
    assert main([str(seeded), "--to", "ir", "--redact-pattern", "("]) == 2
    assert "not a regular expression" in capsys.readouterr().err


def test_images_dropped_on_request() -> None:
    from conftest import session_bytes

    data = session_bytes(
        {
            "type": "message",
            "id": "a",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {
                "role": "user",
                "content": [{"type": "image", "data": "iVBORw0KGgoAAAANSUhEUg==", "mimeType": "image/png"}],
                "timestamp": 1,
            },
        },
    )
    doc = piconv.load(data)
    kept = piconv.redact(doc)
    dropped = piconv.redact(doc, images=True)
    assert kept.document.entries[0].message.content[0].data == "iVBORw0KGgoAAAANSUhEUg=="
    assert dropped.document.entries[0].message.content[0].data is None
    assert dropped.to_json()["dropped"]["image"]["count"] == 1


def test_config_file_sets_defaults(
    seeded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    conf = tmp_path / "xdg" / "piconv"
    conf.mkdir(parents=True)
    (conf / "config.toml").write_text(
        '[redact]\nalways = true\nvalues = ["Project Nightingale"]\npatterns = ["ACME-[0-9]{4}"]\n'
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    out = tmp_path / "o.md"
    assert main([str(seeded), "--to", "markdown", "-o", str(out), "-q"]) == 0
    assert _survivors(out.read_bytes()) == []
    assert main([str(seeded), "--to", "markdown", "-o", str(out), "-q", "--no-redact"]) == 0
    assert SECRETS["github-pat"].encode() in out.read_bytes()
    (conf / "config.toml").write_text("[redact]\nalways = tru\n")
    assert main([str(seeded), "--to", "markdown", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "config.toml" in err and "line 2" in err


def test_a_plugin_filter_runs_and_a_failing_one_is_skipped() -> None:
    class Upper:
        @hookimpl
        def register_filters(self, register):  # type: ignore[no-untyped-def]
            def apply(document, options, report):  # type: ignore[no-untyped-def]
                report.add("upper:seen", None, None, count=len(document.entries))
                return document

            register(piconv.Filter("upper", "counts entries", apply))

    class Broken:
        @hookimpl
        def register_filters(self, register):  # type: ignore[no-untyped-def]
            raise RuntimeError("boom")

    with pytest.warns(piconv.PluginWarning, match="register_filters failed: RuntimeError: boom"):
        registry = build_registry(extra_plugins=(Upper(), Broken()), third_party=False)
    assert sorted(registry.filters) == ["detail", "redact", "upper"]
    report = piconv.Report(format="x")
    doc = piconv.load(seeded_session())
    registry.get_filter("upper").apply(doc, {}, report)
    assert report.losses["upper:seen"].count == len(doc.entries)


def test_bulk_records_the_rule_set_and_reconverts_when_it_changes(
    seeded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    (src / "s.jsonl").write_bytes(seeded.read_bytes())
    base = [str(src), "--to", "markdown", "-o", str(out), "-q"]
    assert main([*base, "--redact"]) == 0
    assert _survivors((out / "s.md").read_bytes()) == ["value", "pattern"]
    record = json.loads((out / ".piconv-manifest.jsonl").read_text().splitlines()[-1])
    (flt,) = record["outputs"]["markdown"]["filters"]
    assert flt["name"] == "redact" and flt["rules"].startswith("gitleaks ")
    assert record["filtered"]["redact:github-pat"] >= 1
    assert SECRETS["github-pat"] not in (out / ".piconv-manifest.jsonl").read_text()  # nor in the index data
    before = (out / "s.md").stat().st_mtime_ns
    assert main([*base, "--redact"]) == 0
    assert (out / "s.md").stat().st_mtime_ns == before  # same rules: up to date
    assert main([*base, *ARGS]) == 0  # new values: reconverted
    assert _survivors((out / "s.md").read_bytes()) == []
    manifest = (out / ".piconv-manifest.jsonl").read_text().splitlines()[-1]
    assert SECRETS["value"] not in manifest and json.loads(manifest)["outputs"]["markdown"]["filters"] != [
        flt
    ]


def test_redaction_options_reach_the_workers_whole(
    seeded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory run with workers sends each the options, environment included, by
    pickle: every session is redacted there as it is in one process (every worker died
    unpickling options whose state left the environment out)."""
    import pickle

    options = RedactOptions(values=("v",), environ={"API_TOKEN": "tok-123456789"}, homes=("/h",))
    copy = pickle.loads(pickle.dumps(options))
    assert copy == options and copy.environ == {"API_TOKEN": "tok-123456789"}
    assert copy.env_values() == ["tok-123456789"]
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    for name in ("a", "b", "c", "d"):
        (src / f"{name}.jsonl").write_bytes(
            seeded.read_bytes().replace(
                b"0199a5e0-0000-7000-8000-000000000001",
                f"0199a5e0-0000-7000-8000-00000000000{ord(name) - 96}".encode(),
            )
        )
    monkeypatch.setenv("ACME_SECRET_TOKEN", SECRETS["value"])
    code = main(
        [
            str(src),
            "--to",
            "markdown",
            "--to",
            "pi",
            "-o",
            str(out),
            "-q",
            "--jobs",
            "2",
            "--redact",
            "--redact-env",
        ]
    )
    assert code == 0
    for name in ("a", "b", "c", "d"):
        for suffix in (".md", ".pi.jsonl"):
            data = (out / f"{name}{suffix}").read_bytes()
            assert _survivors(data) == ["pattern"], (name, suffix)  # --redact-env took the value


def test_every_gitleaks_rule_compiles() -> None:
    rules = gitleaks.load()
    assert len(rules.rules) >= 200
    for rule in rules.rules.values():
        rule.regex  # noqa: B018 (raises when it does not compile)
        re.compile(gitleaks.to_python(rule.pattern))  # the reference below reads them all
    assert rules.skipped == []


def _texts(shared: Path) -> list[str]:
    texts = [f.read_text(errors="replace") for f in sorted((shared / "corpus" / "pi").glob("*.jsonl"))]
    texts += [PAYLOAD, PAYLOAD.replace(" ", "x"), "xs.abcdefghijklmnopqrstuvwx s.abcdefghijklmnopqrstuvwx;"]
    return (
        texts
        + [f"x api_key = '{v}' y" for v in SECRETS.values()]
        + [
            "token=" + "a1" * 40,
            "my.bucket_key: 'Zx9Qw8Er7Ty6Ui5Op4'",
        ]
    )


@pytest.mark.shared
def test_the_semi_generic_fast_path_equals_the_plain_expression(shared: Path) -> None:
    rule = gitleaks.load().rules["generic-api-key"]
    assert rule.keyword_led
    plain = re.compile(gitleaks.to_python(rule.pattern))
    for text in _texts(shared):
        fast = [(start, m.end()) for start, m, _ in rule.finditer(text, 0, len(text))]
        assert fast == [m.span() for m in plain.finditer(text)]


@pytest.mark.shared
@pytest.mark.parametrize(
    "rule_id",
    ["vault-service-token", "jwt", "aws-access-token", "stripe-access-token", "sendgrid-api-token"],
)
def test_re2_finds_what_python_finds_on_the_corpus(shared: Path, rule_id: str) -> None:
    # RE2 is gitleaks' own engine; on these texts Python's reading of the expression agrees
    rule = gitleaks.load().rules[rule_id]
    assert not rule.keyword_led
    plain = re.compile(gitleaks.to_python(rule.pattern))
    for text in _texts(shared):
        found = [(start, m.end() + shift) for start, m, shift in rule.finditer(text, 0, len(text))]
        assert found == [m.span() for m in plain.finditer(text)]


def test_re2_rules_take_a_lone_surrogate_and_wide_characters() -> None:
    rule = gitleaks.load().rules["github-pat"]
    token = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
    text = "\ud800 é 😀 export T=" + token + " \ud800"
    found = list(gitleaks.load().apply(rule, text))
    assert [(f.start, f.end, f.secret) for f in found] == [(text.index(token), text.index(token) + 40, token)]


def test_redact_options_fingerprint_hides_values() -> None:
    a = RedactOptions(values=("hunter2-secret",))
    assert "hunter2" not in a.fingerprint() and a.fingerprint() != RedactOptions().fingerprint()


def _reference_spans(strings: list[str]) -> set[tuple[int, int, int, str]]:
    """gitleaks' rules the plain way: every rule whose keyword a string holds, its
    expression as written (no fast path) over each line of the string (the whole string
    for a rule that spans lines or has a two-character keyword)."""
    from piconv.redaction.scan import SHORT_KEYWORD, _is_multiline

    rules = gitleaks.RuleSet(json.loads((Path(gitleaks.__file__).parent / gitleaks.COMPILED).read_text()))
    for rule in rules.rules.values():
        if rule.keyword_led:
            rule._regex = re.compile(gitleaks.to_python(rule.pattern))  # the plain expression alone
            rule._split = None
    out = set()
    for index, string in enumerate(strings):
        lowered = string.lower()
        for rule in rules.rules.values():
            present = [k for k in rule.keywords if k in lowered]
            if not present:
                continue
            whole = _is_multiline(rule.pattern) or any(len(k) <= SHORT_KEYWORD for k in present)
            offset = 0
            for unit in [string] if whole else string.split("\n"):
                if whole or any(k in unit.lower() for k in rule.keywords):
                    out.update(
                        (index, offset + f.start, offset + f.end, f.rule) for f in rules.apply(rule, unit)
                    )
                offset += len(unit) + 1
    return out


@pytest.mark.shared
def test_the_scanner_finds_what_the_plain_rules_find(shared: Path) -> None:
    from piconv.redaction.engine import Redactor
    from piconv.redaction.scan import Scanner

    for source in [
        seeded_session(),
        *(p.read_bytes() for p in sorted((shared / "corpus" / "pi").glob("Whamp*.jsonl"))),
        (shared / "corpus" / "pi" / "badlogic__pi-mono__session.jsonl").read_bytes(),
    ]:
        doc = piconv.load(source)
        redactor = Redactor(Scanner(gitleaks.load(), [], frozenset()), drop_images=False)
        for entry in doc.entries:
            redactor._collect(entry)
        strings = list(redactor._strings)
        found = {(s.string, s.start, s.end, s.rule) for s in redactor.scanner.scan(strings)}
        assert found == _reference_spans(strings)


def test_the_shipped_json_is_the_shipped_toml() -> None:
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    here = Path(gitleaks.__file__).parent
    assert json.loads((here / gitleaks.COMPILED).read_text()) == tomllib.loads(
        (here / gitleaks.SOURCE).read_text()
    )


def test_redact_env_takes_secret_looking_variables_only(seeded: Path) -> None:
    doc = piconv.load(seeded_session().replace(b"acme/app", b"acme/s3cr3t-deploy-key"))
    environ = {
        "DEPLOY_KEY": "s3cr3t-deploy-key",
        "PWD": "/home/alicewonder/projects/app",
        "EDITOR": "vim-vim-vim",
    }
    assert RedactOptions(environ=environ).env_values() == ["s3cr3t-deploy-key"]
    result = piconv.redact(doc, environ=environ)
    assert result.to_json()["rules"]["env"]["count"] >= 1
    assert not any("s3cr3t-deploy-key" in str(e) for e in result.document.entries)


def test_odd_text_is_redacted_at_the_right_place() -> None:
    # a lone surrogate escape, and "İ" whose lower case is two characters long
    token = SECRETS["github-pat"]
    data = (
        b'{"type":"session","version":3,"id":"s","cwd":"/home/zed/x"}\n'
        b'{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"\\u0130\\u0130 key '
        + token.encode()
        + b' \\ud800 \\u0130stanbul"}}\n'
    )
    result = piconv.redact(piconv.load(data))
    assert (
        result.document.entries[0].message.content
        == "\u0130\u0130 key [REDACTED:github-pat#1] \ud800 \u0130stanbul"
    )
    for fmt in FORMATS:
        assert token.encode() not in _convert_bytes(result.document, fmt)


def _convert_bytes(doc: piconv.ir.Document, fmt: str) -> bytes:
    import io

    out = io.BytesIO()
    piconv.convert(doc, fmt, out)
    return out.getvalue()


def test_a_pattern_anchors_at_each_line_and_keeps_its_group() -> None:
    from conftest import session_bytes

    data = session_bytes(
        {
            "type": "message",
            "id": "a",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {
                "role": "user",
                "content": "intro\nticket: ACME-1\nnot ticket: ACME-2",
                "timestamp": 1,
            },
        },
        {
            "type": "message",
            "id": "b",
            "parentId": "a",
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "ticket: ACME-1", "timestamp": 2},
        },
    )
    doc = piconv.redact(piconv.load(data), patterns=[r"^ticket: (ACME-\d+)$"]).document
    assert doc.entries[0].message.content == "intro\nticket: [REDACTED:pattern#1]\nnot ticket: ACME-2"
    assert doc.entries[1].message.content == "ticket: [REDACTED:pattern#1]"


def test_a_redacted_document_is_still_never_written_over_its_input(seeded: Path, tmp_path: Path) -> None:
    home_copy = tmp_path / "home" / "alicewonder"
    home_copy.mkdir(parents=True)
    source = home_copy / "s.jsonl"
    source.write_bytes(seeded.read_bytes())
    result = piconv.redact(piconv.load(str(source)), homes=(str(home_copy),), users=("alicewonder",))
    # the path a format may write is redacted; the one it was read from still guards it
    assert result.document.session.source_path == "~/s.jsonl"
    assert result.document.input_path == str(source)
    with pytest.raises(piconv.OutputError):
        piconv.convert(result.document, "markdown", str(source))
    assert source.read_bytes() == seeded.read_bytes()


def test_a_plugin_filter_that_rewrites_the_path_still_never_writes_over_the_input(
    seeded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A third party's filter knows nothing of ``input_path``: the filter stage keeps it."""
    import dataclasses

    from piconv import registry as registry_module
    from piconv.ir import Document

    class Renamer:
        @hookimpl
        def register_filters(self, register):  # type: ignore[no-untyped-def]
            def apply(document, options, report):  # type: ignore[no-untyped-def]
                session = dataclasses.replace(document.session, source_path="elsewhere.jsonl")
                return Document(session, document.entries, document.leaf_id, document.issues)

            register(piconv.Filter("rename", "moves the session", apply))

    registry = build_registry(extra_plugins=(Renamer(),), third_party=False)
    monkeypatch.setattr(registry_module, "_cached", registry)
    source = tmp_path / "s.jsonl"
    source.write_bytes(seeded.read_bytes())
    doc = piconv.apply_filters(piconv.load(str(source)), [("rename", {})])
    assert doc.session.source_path == "elsewhere.jsonl" and doc.input_path == str(source)
    with pytest.raises(piconv.OutputError):
        piconv.convert(doc, "markdown", str(source))
    assert source.read_bytes() == seeded.read_bytes()


def test_the_scanner_looks_for_each_keyword_when_the_re2_set_gives_up() -> None:
    from piconv.redaction.engine import Redactor
    from piconv.redaction.scan import Scanner

    class GivesUp:
        def Match(self, text: bytes) -> None:
            return None

    doc = piconv.load(seeded_session())
    redactor = Redactor(Scanner(gitleaks.load(), [], frozenset()), drop_images=False)
    for entry in doc.entries:
        redactor._collect(entry)
    strings = list(redactor._strings)
    expected = {(s.string, s.start, s.end, s.rule) for s in redactor.scanner.scan(strings)}
    assert {rule for *_, rule in expected} >= {"generic-api-key", "github-pat"}
    scanner = Scanner(gitleaks.load(), [], frozenset())
    scanner._line_set = lambda patterns: GivesUp()
    assert {(s.string, s.start, s.end, s.rule) for s in scanner.scan(strings)} == expected


def test_the_prefilter_lets_through_a_secret_at_either_end_of_a_string_or_a_line() -> None:
    # the prefilter reads the whole text with ^ and $ at each line: a rule whose match
    # needs the end of its unit (a string or a line) must still run there
    from piconv.redaction.scan import Scanner

    lines = PAYLOAD.split("\n")
    strings = [
        *lines,
        *(line + "\n" for line in lines),
        *("\n" + line for line in lines),
        *(secret for secret in SECRETS.values()),
        "\n".join(SECRETS.values()),
        "vault s.Xk9Qw2Lp7Zr4Tn8Vb3Mc6Hd1\ns.Xk9Qw2Lp7Zr4Tn8Vb3Mc6Hd2",
        "\u00e9 " + SECRETS["jwt"] + "\n\ud800" + SECRETS["sendgrid-api-token"],
        # a text of its own for strings with a character beyond the first 65,536
        "\U0001f511 " + SECRETS["jwt"],
        "\U0001f511",
        "\u0100 token = " + SECRETS["github-pat"],
    ]
    found = {
        (s.string, s.start, s.end, s.rule) for s in Scanner(gitleaks.load(), [], frozenset()).scan(strings)
    }
    assert found == _reference_spans(strings)
    assert {rule for *_, rule in found} >= {"jwt", "sendgrid-api-token", "vault-service-token", "github-pat"}


def test_keyword_places_include_overlapping_keywords() -> None:
    import random

    from piconv.redaction.scan import _places

    keywords = ("access", "api", "auth", "key", "secret", "token", "creds", "keyey")
    assert _places(b"a secretoken, apikeyey", keywords) == [2, 7, 14, 17]
    rng = random.Random(3)
    for _ in range(500):
        text = "".join(rng.choice("acdeiknoprstuwy.-") for _ in range(rng.randint(0, 40))).encode()
        chosen = rng.sample(keywords, rng.randint(1, len(keywords)))
        expected = sorted({i for k in chosen for i in range(len(text)) if text.startswith(k.encode(), i)})
        assert _places(text, chosen) == expected


def test_strings_are_joined_by_the_width_of_their_characters() -> None:
    # ASCII, then up to U+FFFF (a lone surrogate included), then beyond: one text each
    from piconv.redaction.scan import _groups

    strings = ["plain", "caf\u00e9", "\U0001f511 key", "\ud800", "", "\uffff", "x\U0010ffff"]
    assert _groups(strings) == ([0, 4], [1, 3, 5], [2, 6])


def test_every_occurrence_in_an_entry_is_replaced_however_often_it_recurs() -> None:
    # the rebuild stops walking an entry once it has replaced as many strings as the entry
    # holds: a string met again later (in another field, a key, a nested value) still counts
    from conftest import session_bytes

    token = SECRETS["github-pat"]
    data = session_bytes(
        {
            "type": "message",
            "id": "a",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": token},
                    {
                        "type": "toolCall",
                        "id": "c1",
                        "name": "bash",
                        "arguments": {"command": token, token: [token, {"k": token}]},
                    },
                    {"type": "text", "text": "after " + token},
                ],
                "usage": {"input": 1, "output": 2},
                "stopReason": "toolUse",
                "timestamp": 1,
            },
        },
    )
    result = piconv.redact(piconv.load(data))
    assert token not in repr(result.document.entries)
    assert result.to_json()["rules"]["github-pat"]["count"] == 6


@given(st.text())
def test_a_value_is_also_found_in_the_json_escaped_spelling_json_writes(value: str) -> None:
    from piconv.redaction.rules import escaped_forms

    spellings = [json.dumps(value, ensure_ascii=False)[1:-1], json.dumps(value)[1:-1]]
    assert escaped_forms(value) == list(dict.fromkeys([value, *spellings]))


def test_options_neither_compare_nor_show_the_environment() -> None:
    secret_env = {"DEPLOY_TOKEN": "s3cr3t-deploy-key"}
    options = RedactOptions(values=("x",), environ=secret_env)
    assert options == RedactOptions(values=("x",))
    assert hash(options) == hash(RedactOptions(values=("x",)))
    assert "s3cr3t" not in repr(options) and "values=('x',)" in repr(options)
    assert options != RedactOptions(values=("y",))
    with pytest.raises(AttributeError):
        options.values = ()  # type: ignore[misc]


# --------------------------------------------------------------------------- found once, gone everywhere


def _session(*texts: object, cwd: str = "/work", arguments: dict | None = None) -> bytes:
    from conftest import session_bytes

    header = {
        "type": "session",
        "version": 3,
        "id": "s-1",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": cwd,
    }
    lines: list[dict] = []
    parent = None
    for n, text in enumerate(texts):
        content = [{"type": "text", "text": t} for t in text] if isinstance(text, list) else text
        lines.append(
            {
                "type": "message",
                "id": f"m{n}",
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": {"role": "user", "content": content, "timestamp": n},
            }
        )
        parent = f"m{n}"
    if arguments is not None:
        call = {"type": "toolCall", "id": "c1", "name": "deploy", "arguments": arguments}
        lines.append(
            {
                "type": "message",
                "id": "a1",
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:02.000Z",
                "message": {"role": "assistant", "content": [call], "timestamp": 9},
            }
        )
    return session_bytes(*lines, header=header)


def _redacted(source: bytes, **options: object) -> bytes:
    import io

    redaction = piconv.redact(piconv.load(source), **options)
    out = io.BytesIO()
    piconv.convert(redaction.document, "ir", out)
    return out.getvalue()


def test_a_secret_found_once_is_replaced_wherever_else_it_appears() -> None:
    key = "h8Fj3kLm9Qw2Zx7Vb4Nc1Pq6Rt5Yu0Io"
    aws = SECRETS["aws-access-token"]
    source = _session(
        f'use api_key = "{key}" here',
        f"the key is {aws}",
        f"see creds_{aws}.csv and {aws}_old",
        arguments={"api_key": key, "note": json.dumps({"k": key})},
    )
    before = piconv.load(source)
    assert piconv.redact(before, disabled=()).to_json()["rules"]  # found where its rule matches
    data = _redacted(source)
    assert key.encode() not in data and aws.encode() not in data
    assert (
        data.count(b"[REDACTED:generic-api-key#1]") >= 3 and data.count(b"[REDACTED:aws-access-token#1]") == 3
    )


def test_a_pattern_is_matched_in_each_string_alone() -> None:
    source = _session(["Enter the password:", "password: hunter2Xq"])
    data = _redacted(source, patterns=(r"password:\s*(\S+)",))
    assert b"hunter2Xq" not in data and b"Enter the password:" in data


def test_overlapping_values_are_redacted_whole() -> None:
    source = _session("Codename ACME Falcon Ridge launches Friday")
    data = _redacted(source, values=("Codename ACME", "ACME Falcon Ridge"))
    assert b"Falcon" not in data and b"ACME" not in data and b"launches Friday" in data


def test_a_value_is_found_in_python_s_default_json_escaping_too() -> None:
    value = "Straße-Projekt"
    source = _session(f"plain {value}", json.dumps({"name": value}))  # \u00df, as json.dumps writes it
    data = _redacted(source, values=(value,))
    assert b"Stra" not in data


def test_a_windows_home_with_a_space_in_the_user_name_is_found() -> None:
    for cwd in (r"C:\Users\John Smith\src\app", "C:/Users/John Smith/src"):
        source = _session("hello John Smith, your files", cwd=cwd)
        data = _redacted(source)
        assert b"John Smith" not in data, cwd
