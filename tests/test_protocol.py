"""The five-stage policy protocol: parser, action matching and format score over a table of outputs."""

from __future__ import annotations

import pytest

from expbank.training.agent.act import choose_action, match_admissible
from expbank.training.agent.conversation import step_message, system_prompt
from expbank.training.agent.protocol import ProtocolSpec, format_score, parse_output

ADMISSIBLE = ["go to fridge 1", "open fridge 1", "move apple 1 to countertop 1", "look"]
FULL = ProtocolSpec("bank", "fixed", True)
NONE = ProtocolSpec("none")

# (text, spec, expected action, how, format ok, violation substring)
CASES = [
    ("<observe>a fridge</observe><critique>[1] applies</critique><reconstruct>open it</reconstruct>"
     "<action>open fridge 1</action>", FULL, "open fridge 1", "exact", True, None),
    ("<observe>x</observe><action>go to fridge 1</action>", NONE, "go to fridge 1", "exact", True, None),
    ("<observe>x</observe><action>  Go To   Fridge 1. </action>", NONE, "go to fridge 1", "normalised", True, None),
    ("<observe>x</observe><action>put apple 1 on countertop 1</action>", NONE, "move apple 1 to countertop 1",
     "normalised", True, None),
    ("<observe>x</observe><action>fly away</action>", NONE, "fly away", "invalid", True, None),
    ("<observe>x</observe><action></action>", NONE, "", "invalid", False, "empty <action>"),
    ("<observe>x</observe>\nI will open it.\nopen fridge 1", NONE, "open fridge 1", "untagged", False,
     "missing <action>"),
    ("<observe>x</observe>\nAction: go to fridge 1\nsomething else", NONE, "go to fridge 1", "untagged", False,
     "missing <action>"),
    ("<action>look</action><observe>x</observe>", NONE, "look", "exact", False, "tags out of order"),
    ("<observe>x</observe><action>look</action><action>open fridge 1</action>", NONE, "look", "exact", False,
     "repeated <action>"),
    ("<observe>x</observe><critique>c</critique><action>look</action>", FULL, "look", "exact", False,
     "missing <reconstruct>"),
    ("<observe>x</observe><critique>c</critique><reconstruct>r</reconstruct><action>look</action>", NONE,
     "look", "exact", False, "unexpected <critique>"),
    ("<observe>x</observe><action>look", NONE, "look", "exact", False, "unclosed tag"),
    ("<observe>x</observe><action>go to fridge 1\nmore", NONE, "go to fridge 1", "exact", False, "unclosed tag"),
    ("nothing useful at all", NONE, "", "invalid", False, "missing <observe>"),
]


@pytest.mark.parametrize(("text", "spec", "action", "how", "ok", "violation"), CASES)
def test_parse_and_choose(text, spec, action, how, ok, violation):
    parsed = parse_output(text, spec.tags())
    choice = choose_action(text, parsed, ADMISSIBLE)
    assert (choice.action, choice.how, choice.format_ok) == (action, how, ok)
    if violation is None:
        assert parsed.violations == []
    else:
        assert any(violation in v for v in parsed.violations), parsed.violations


def test_expected_tags_per_protocol():
    assert ProtocolSpec("none").tags() == ("observe", "action")
    assert ProtocolSpec("none", "agentic").tags() == ("observe", "action")  # no memory, nothing to retrieve
    assert ProtocolSpec("raw").tags() == ("observe", "critique", "reconstruct", "action")
    assert ProtocolSpec("bank", reconstruct=False).tags() == ("observe", "action")
    agentic = ProtocolSpec("bank", "agentic")
    assert agentic.tags() == ("observe", "retrieve", "critique", "reconstruct", "action")
    assert agentic.first_stage_tags() == ("observe", "retrieve")
    assert agentic.second_stage_tags() == ("critique", "reconstruct", "action")
    with pytest.raises(ValueError):
        ProtocolSpec("everything")


def test_reconstruction_none_is_none():
    parsed = parse_output("<observe>x</observe><critique>c</critique><reconstruct>NONE</reconstruct>"
                          "<action>look</action>", FULL.tags())
    assert parsed.reconstruction is None and not parsed.violations
    assert parse_output("<reconstruct> open the fridge </reconstruct>", FULL.tags()).reconstruction == \
        "open the fridge"


def test_webshop_search_and_click_matching():
    admissible = ["search[<query>]", "click[back to search]", "click[b07xyz1234]"]
    assert match_admissible("search[red running shoes]", admissible) == "search[red running shoes]"
    assert match_admissible("Search[ red shoes ]", admissible) == "search[red shoes]"
    assert match_admissible("search[]", admissible) is None
    assert match_admissible("click[B07XYZ1234]", admissible) == "click[b07xyz1234]"
    assert match_admissible("search[shoes]", ["click[back to search]"]) is None  # no search bar on this page


def test_format_score():
    assert format_score([True, False, True, True]) == 0.75
    assert format_score([]) == 0.0


def test_prompts_describe_exactly_the_expected_blocks():
    for spec in (NONE, FULL, ProtocolSpec("raw", "agentic"), ProtocolSpec("bank", reconstruct=False)):
        prompt = system_prompt("alfworld", spec)
        for tag in ("observe", "retrieve", "critique", "reconstruct", "action"):
            assert (f"<{tag}>" in prompt) == (tag in spec.tags()), (spec, tag)
    message = step_message("put a apple in fridge.", [("obs0", "look")], "obs1", ADMISSIBLE, "<experience>\n</experience>")
    assert message.index("Task:") < message.index("obs0") < message.index("obs1") < message.index("<experience>")
    assert "go to fridge 1" in message


def test_prompt_system_none_leaves_only_the_step_message():
    from expbank.config import MemoryConfig
    from expbank.training.agent.conversation import step_messages

    args = ("put a apple in fridge.", [("obs0", "look")], "obs1", ADMISSIBLE, "<experience>\n[1] x\n</experience>", 1)
    full = step_messages("alfworld", FULL, *args)
    bare = step_messages("alfworld", ProtocolSpec.of(MemoryConfig(mode="bank"), "none"), *args)
    assert [m["role"] for m in full] == ["system", "user"] and bare == full[1:]
    assert "<experience>" in bare[0]["content"]
    with pytest.raises(ValueError, match="system must be full or none"):
        ProtocolSpec("bank", system="short")
