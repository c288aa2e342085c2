"""Templates: the grammar ({name}, {{ and }}), syntax errors with their position, pure substitution,
and the TemplateLiteralWarning for literals that vanish (encode to no tokens).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import sentencepiece as spm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from mintdim import TemplateLiteralWarning, errors
from mintdim.build.source.template import parse_template
from tests.conftest import corpora_file
from tests.unit_build.helpers import (
    Expected,
    assert_not_written,
    job,
    reference_encoder,
    sections,
    verify_build,
    write_jsonl,
)

SIZES = [8, 32, 128]


# ---------------------------------------------------------------------------
# Grammar
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "literals", "placeholders"),
    [
        ("{text}", ("", ""), ("text",)),
        ("plain text", ("plain text",), ()),
        ("{{x}}", ("{x}",), ()),
        ("a}}b{{c", ("a}b{c",), ()),
        ("{{{a}}}", ("{", "}"), ("a",)),
        ("{a}}}{{{b}", ("", "}{", ""), ("a", "b")),
        ("{a}{b}", ("", "", ""), ("a", "b")),
        ("{a} and {a}", ("", " and ", ""), ("a", "a")),
        ("{ a b }", ("", ""), (" a b ",)),
        ("Q: {câu hỏi}\n{名前}", ("Q: ", "\n", ""), ("câu hỏi", "名前")),
        ("{a-b.c:d!r}", ("", ""), ("a-b.c:d!r",)),
        ("{0}{%s}", ("", "", ""), ("0", "%s")),
        ("", ("",), ()),
    ],
)
def test_grammar(template, literals, placeholders):
    parsed = parse_template(template, 0)
    assert parsed.source == template
    assert parsed.literals == literals
    assert parsed.placeholders == placeholders


@pytest.mark.parametrize(
    ("template", "position", "problem"),
    [
        ("{a", 0, "unmatched_open"),
        ("x {", 2, "unmatched_open"),
        ("{a}{", 3, "unmatched_open"),
        ("{{{", 2, "unmatched_open"),
        ("a}b", 1, "unmatched_close"),
        ("{a}}", 3, "unmatched_close"),
        ("}}}", 2, "unmatched_close"),
        ("{}", 0, "empty_placeholder"),
        ("x{}y", 1, "empty_placeholder"),
        ("{a{b}}", 2, "nested_brace"),
        ("{a{{b}", 2, "nested_brace"),
        ("\n\t{a{b}", 4, "nested_brace"),
    ],
)
def test_syntax_errors_name_the_position(template, position, problem):
    with pytest.raises(errors.TemplateSyntaxError) as info:
        parse_template(template, 3)
    err = info.value
    assert (err.template, err.position, err.problem, err.file_index) == (
        template,
        position,
        problem,
        3,
    )
    quoted, caret = sections(err.message("en"))["Position"][1:]
    assert quoted == json.dumps(template, ensure_ascii=False)
    assert caret.strip() == "^"
    # The caret stands under the offending character of the quoted template.
    assert quoted[len(caret) - 1] == template[position]


@pytest.mark.parametrize(
    ("template", "en_problem", "vi_problem"),
    [
        ("{a", "'{' at position 0 has no closing '}'", "'{' ở vị trí 0 không có '}' đóng"),
        (
            "a}",
            "'}' at position 1 closes no placeholder",
            "'}' ở vị trí 1 không đóng placeholder nào",
        ),
        (
            "{}",
            "'{}' at position 0 is a placeholder without a field name",
            "'{}' ở vị trí 0 là placeholder không có tên field",
        ),
        (
            "{a{b}}",
            "'{' at position 2 is inside another placeholder",
            "'{' ở vị trí 2 nằm bên trong một placeholder khác",
        ),
    ],
)
def test_syntax_error_through_run_before_any_file_is_read(cwd, template, en_problem, vi_problem):
    # Neither the data nor the tokenizer exists: the template is checked first.
    declared = job(
        ["./data/a.jsonl", "./data/b.jsonl"],
        "./missing.model",
        fields=[["a"], ["a"]],
        templates=["{a}", template],
    )
    with pytest.raises(errors.TemplateSyntaxError) as info:
        declared.run(workers=1)
    err = info.value
    assert (err.file_index, err.template) == (1, template)
    en, vi = sections(err.message("en")), sections(err.message("vi"))
    assert en["<sentence>"] == ["Template has invalid brace syntax."]
    assert vi["<sentence>"] == ["Template có dấu ngoặc nhọn sai cú pháp."]
    assert en["File index"] == ["1"] == vi["Vị trí file"]
    assert en["Template"] == [json.dumps(template)] == vi["Template"]
    assert en["Problem"] == [en_problem]
    assert vi["Vấn đề"] == [vi_problem]
    assert en["Rules"] == [
        "- {name} is a placeholder for the field name",
        "- {{ and }} are literal braces",
        "- any other brace is an error",
    ]
    assert_not_written("out")


# ---------------------------------------------------------------------------
# Rendering is pure substitution
# ---------------------------------------------------------------------------


def test_field_values_are_data_not_template(cwd, sp_model):
    values = ["{x}", "{{", "}}", "{text}", "{0} %s %(a)s", "{a}}}{", "\\n"]
    write_jsonl("data/a.jsonl", [{"text": v, "a": "the"} for v in values])
    job(
        ["./data/a.jsonl"],
        sp_model,
        fields=[["text", "a"]],
        templates=["{{{text}}} {a}{{}}"],
        sizes=[SIZES],
    ).run(workers=1)
    expected = [
        Expected("./data/a.jsonl", i, f"{{{v}}} the{{}}") for i, v in enumerate(values, start=1)
    ]
    verify_build("out", expected, reference_encoder(str(sp_model)), SIZES, 100, pad_id=0)


def test_repeated_and_unicode_placeholders_render_every_occurrence(cwd, sp_model):
    write_jsonl("data/a.jsonl", [{"câu hỏi": "the model", "trả lời": "a unit", "x": 1}])
    job(
        ["./data/a.jsonl"],
        sp_model,
        fields=[["câu hỏi", "trả lời"]],
        templates=["{câu hỏi}: {trả lời} ! {câu hỏi}"],
        sizes=[SIZES],
    ).run(workers=1)
    verify_build(
        "out",
        [Expected("./data/a.jsonl", 1, "the model: a unit ! the model")],
        reference_encoder(str(sp_model)),
        SIZES,
        100,
        pad_id=0,
    )


def test_placeholder_names_with_spaces_match_fields_exactly(cwd, sp_model):
    write_jsonl("data/a.jsonl", [{" a ": "the", "a": "model"}])
    job(
        ["./data/a.jsonl"],
        sp_model,
        fields=[[" a ", "a"]],
        templates=["{ a }:{a}"],
        sizes=[SIZES],
    ).run(workers=1)
    verify_build(
        "out",
        [Expected("./data/a.jsonl", 1, "the:model")],
        reference_encoder(str(sp_model)),
        SIZES,
        100,
        pad_id=0,
    )


_names = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="{}"),
    min_size=1,
    max_size=6,
)
_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
_braces = st.text(alphabet="{}ab \n", max_size=8)


@settings(max_examples=60, deadline=None)
@given(
    parts=st.lists(
        st.one_of(
            st.tuples(st.just("literal"), st.one_of(_text, _braces)),
            st.tuples(st.just("field"), _names),
        ),
        max_size=8,
    ),
    values=st.dictionaries(_names, st.one_of(_text, _braces), max_size=6),
)
def test_parse_and_render_equal_plain_concatenation(parts, values):
    template = "".join(
        text.replace("{", "{{").replace("}", "}}") if kind == "literal" else f"{{{text}}}"
        for kind, text in parts
    )
    names = [text for kind, text in parts if kind == "field"]
    full = {name: values.get(name, f"<{name}>") for name in names}
    parsed = parse_template(template, 0)
    assert parsed.placeholders == tuple(names)
    assert len(parsed.literals) == len(names) + 1
    assert parsed.render(full) == "".join(
        text if kind == "literal" else full[text] for kind, text in parts
    )


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    literal=st.text(alphabet="{}:#.!? \nab", max_size=6),
    values=st.lists(st.text(alphabet="{}the model\n", max_size=12), min_size=1, max_size=4),
)
def test_rendered_text_reaches_the_shards_through_a_build(
    tmp_path_factory, sp_model, literal, values
):
    folder = tmp_path_factory.mktemp("tpl")
    data = write_jsonl(folder / "a.jsonl", [{"v": v} for v in values])
    escaped = literal.replace("{", "{{").replace("}", "}}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TemplateLiteralWarning)
        job(
            [str(data)],
            sp_model,
            fields=[["v"]],
            templates=[f"{escaped}{{v}}{escaped}"],
            sizes=[[64]],
            out=str(folder / "out"),
        ).run(workers=1)
    expected = [Expected(str(data), i, f"{literal}{v}{literal}") for i, v in enumerate(values, 1)]
    verify_build(folder / "out", expected, reference_encoder(str(sp_model)), [64], 100, pad_id=0)


# ---------------------------------------------------------------------------
# TemplateLiteralWarning
# ---------------------------------------------------------------------------


def literal_warnings(tokenizer: object, template: str, files: int = 1) -> list[str]:
    """Build ``files`` one-sample files with ``template``; the TemplateLiteralWarnings it gave."""
    paths = [f"./data/{i}.jsonl" for i in range(files)]
    for path in paths:
        write_jsonl(path, [{"a": "the model", "b": "a unit"}])
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        job(paths, tokenizer, fields=[["a", "b"]], templates=[template], sizes=[SIZES]).run(
            workers=1
        )
    assert Path("out/manifest.json").is_file()  # a warning never stops the build
    return [str(w.message) for w in record if w.category is TemplateLiteralWarning]


def test_literal_that_vanishes_warns_once_and_the_build_is_exact(cwd, hf_json):
    assert reference_encoder(str(hf_json))("\n\n") == []  # the fixture drops blank lines
    (message,) = literal_warnings(hf_json, "{a}\n\n{b}")
    assert message.startswith('[unit-build:warning] template of file 0 ("{a}\\n\\n{b}"): ')
    assert 'literal segment "\\n\\n" encodes to no tokens' in message
    # The build is still exact: the record is the encoding of the whole rendered text.
    verify_build(
        "out",
        [Expected("./data/0.jsonl", 1, "the model\n\na unit")],
        reference_encoder(str(hf_json)),
        SIZES,
        100,
        pad_id=0,
    )


def test_files_sharing_a_template_get_one_warning_naming_them_all(cwd, hf_json):
    (message,) = literal_warnings(hf_json, "{a}\n\n{b}", files=3)
    assert "template of files 0, 1, 2 (" in message


def test_the_warning_speaks_vietnamese_with_real_characters(cwd, hf_json, monkeypatch):
    monkeypatch.setenv("MINTDIM_LANG", "vi")
    (message,) = literal_warnings(hf_json, "{a}\n\n{b}")
    assert message.startswith('[unit-build:warning] template của file 0 ("{a}\\n\\n{b}"): ')
    assert 'đoạn literal "\\n\\n" không tạo ra token nào' in message


def test_a_warnings_filter_can_make_it_an_error_before_anything_is_written(cwd, hf_json):
    write_jsonl("data/a.jsonl", [{"a": "the", "b": "model"}])
    declared = job(["./data/a.jsonl"], hf_json, fields=[["a", "b"]], templates=["{a}\n\n{b}"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", TemplateLiteralWarning)
        with pytest.raises(TemplateLiteralWarning, match="encodes to no tokens"):
            declared.run(workers=1)
    assert_not_written("out")


def test_literal_the_tokenizer_normalises_does_not_warn(cwd, hf_json):
    encode = reference_encoder(str(hf_json))
    # The fixture reads " : " back as ":": normalised, but it reaches the shards.
    assert encode(" : ") and _decoded(hf_json, encode(" : ")) != " : "
    assert literal_warnings(hf_json, "{a} : {b}") == []


@pytest.mark.parametrize("template", ["{a}\n\n{b}", "{a} : {b}", "{{{a}}}{b}", "#{a}?\n{b}"])
def test_literals_the_tokenizer_reproduces_do_not_warn(cwd, sp_model, template):
    assert literal_warnings(sp_model, template) == []


def test_escaped_braces_are_checked_after_unescaping(cwd, hf_json):
    """``}}`` is the literal ``}``, which the HF fixture encodes to a token."""
    assert literal_warnings(hf_json, "{a}}}{b}") == []


# Instruction templates as people write them, for the real tokenizers of ../shared/corpora. Each
# tokenizer normalises them (lower case, accents, spaces, newlines), yet no literal vanishes.
_INSTRUCTION = "### Instruction:\n{a}\n\n### Response:\n{b}"
_REAL_TEMPLATES = [
    ("bert-base-uncased.tokenizer.json", _INSTRUCTION),
    ("all-MiniLM-L6-v2.tokenizer.json", _INSTRUCTION),
    ("t5-small.tokenizer.json", _INSTRUCTION),
    ("pegasus-autonlp-reuters.tokenizer.json", "Question: {a}\nAnswer: {b}"),
    ("envit5-translation.tokenizer.json", "### Câu hỏi:\n{a}\n\n### Trả lời:\n{b}"),
    # albert's .model has no capital letters (its Python tokenizer lower-cases first).
    ("albert-base-v2.spiece.model", "### instruction:\n{a}\n\n### response:\n{b}"),
]


@pytest.mark.corpora
@pytest.mark.parametrize(("name", "template"), _REAL_TEMPLATES)
def test_real_tokenizers_normalise_instruction_templates_without_a_warning(cwd, name, template):
    path = corpora_file(f"tokenizers/{name}")
    encode = reference_encoder(str(path))
    literals = [literal for literal in parse_template(template, 0).literals if literal]
    # Independently: every literal reaches the shards, and the tokenizer does normalise one.
    assert all(encode(literal) for literal in literals)
    assert any(_decoded(path, encode(literal)) != literal for literal in literals)
    assert literal_warnings(path, template) == []


def _decoded(path: Path, ids: list[int]) -> str:
    if path.suffix == ".model":
        return spm.SentencePieceProcessor(model_file=str(path)).decode(ids)
    return Tokenizer.from_file(str(path)).decode(ids)


@pytest.mark.corpora
def test_sentencepiece_default_normalisation_drops_a_blank_line_and_warns_once(cwd):
    albert = corpora_file("tokenizers/albert-base-v2.spiece.model")
    assert reference_encoder(str(albert))("\n\n") == []
    (message,) = literal_warnings(albert, "### question:\n{a}\n\n{b}")
    assert 'literal segment "\\n\\n" encodes to no tokens' in message
    verify_build(
        "out",
        [Expected("./data/0.jsonl", 1, "### question:\nthe model\n\na unit")],
        reference_encoder(str(albert)),
        SIZES,
        100,
        pad_id=0,
    )
