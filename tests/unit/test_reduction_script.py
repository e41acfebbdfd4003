"""The reduction keeps a puppet script: it is what the model writes, not a field the server
reads. Without it a repro asked another question: the unscripted model's own markup, which a
server reading another format leaves in the text, was reported as the server's leak."""

from __future__ import annotations

from agentfuzz.model.history import Case, History, Options, UserMessage
from agentfuzz.puppet.formats import Call, Script, format_named
from agentfuzz.puppet.scripted import FIELD, carry
from agentfuzz.reduce.reduction import reduce_case


def test_the_script_stays_while_every_other_field_goes() -> None:
    script = carry(format_named("hermes"), Script((Call("get_weather"),)))
    fields = {FIELD: script, "stop": ["x"], "user": "u"}
    case = Case(history=History(items=(UserMessage(text="hi"),)), options=Options(fields=fields))
    tried: list[Case] = []

    def fails(candidate: Case) -> bool:
        tried.append(candidate)
        return True  # anything fails: the reduction takes whatever it may

    reduced = reduce_case(case, fails, 200)
    assert reduced.options.fields == {FIELD: script}
    assert all(FIELD in c.options.fields for c in tried)
