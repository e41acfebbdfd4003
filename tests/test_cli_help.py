"""``--help`` tells the whole truth, shortly: every option of every command has a description,
the names an option takes are one listing away (``agentfuzz profiles``, ``agentfuzz oracles``),
the command list is never cut, and the judging commands say their exit codes. Walks the click
group, so an option added later without help fails here."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from agentfuzz.cli import cli, main
from agentfuzz.judge.judge import oracle_names, oracle_summaries
from agentfuzz.reference import BEHAVIOURS
from agentfuzz.request.profiles import list_profiles


def _commands() -> dict[str, click.Command]:
    assert isinstance(cli, click.Group)
    return dict(cli.commands)


def _help(*argv: str) -> str:
    result = CliRunner().invoke(cli, [*argv, "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    return result.output


def test_every_option_of_every_command_has_help() -> None:
    missing = [
        f"{name} {param.opts[0]}"
        for name, command in {"agentfuzz": cli, **_commands()}.items()
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden and not (param.help or "").strip()
    ]
    assert missing == []


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_option_appears_in_its_commands_help(name: str) -> None:
    text = _help(name)
    for param in _commands()[name].params:
        if isinstance(param, click.Option):
            assert param.opts[0] in text


def test_the_command_list_is_whole() -> None:
    # At click's usual 80 columns it cut "fuzz" to "... shrink...".
    result = CliRunner().invoke(cli, ["--help"], terminal_width=80)
    text = result.output.split("Commands:")[1]
    assert "..." not in text
    for name, command in _commands().items():
        first = " ".join((command.help or "").split("\n\n")[0].split())
        assert name in text
        # Each command's first sentence, as written, whatever the terminal's width.
        assert first.split(". ")[0].rstrip(".") in " ".join(text.split())


def test_the_names_an_option_takes_are_one_command_away() -> None:
    fuzz, reduce, serve = _help("fuzz"), _help("reduce"), _help("serve")
    assert "{" not in fuzz + reduce + serve
    # The help points at the listings instead of repeating them: one short line per option.
    for text in (fuzz, reduce, serve):
        assert "`agentfuzz profiles`" in " ".join(text.split())
        assert "vllm-kimi-k2-loose-fix" not in text
    for text in (fuzz, reduce):
        assert "agentfuzz oracles" in " ".join(text.split())
    options = fuzz.split("Options:")[1].split("Exit codes:")[0]
    assert len(options.splitlines()) <= 50
    # The default reference profile is named whole, never broken at a hyphen.
    assert "Default: vllm-kimi-k2." in fuzz and "Default: vllm-kimi-k2." in reduce
    # And the listings hold every name.
    profiles, oracles = _output("profiles"), _output("oracles")
    for profile in [*list_profiles(), *BEHAVIOURS]:
        assert f"  {profile} " in profiles
    for oracle in oracle_names():
        assert f"  {oracle} " in oracles


def _output(command: str) -> str:
    result = CliRunner().invoke(cli, [command])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("name", ["fuzz", "reduce", "replay"])
def test_judging_commands_say_their_exit_codes(name: str) -> None:
    text = _help(name)
    assert "Exit codes:" in text
    for code in ("0 ", "1 ", "2 "):
        assert f"\n    {code}" in text
    if name != "replay":  # replay sends nothing: it has no target to miss
        assert "3    target unreachable" in text


def test_units_and_defaults_are_stated() -> None:
    text = " ".join(_help("fuzz").split())
    assert "Seconds one request may take" in text and "[default: 60.0" in text
    assert "per mode" in text and "[default: 100" in text
    assert "[default: agentfuzz-out]" in text
    assert "or auto" in _help("reduce") and "or auto" in text
    assert "Candidate requests" in " ".join(_help("reduce").split())


def test_profiles_lists_both_kinds_labelled_one_line_each(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["profiles"]) == 0
    lines = capsys.readouterr().out.splitlines()
    fuzz_at = next(i for i, line in enumerate(lines) if line.startswith("fuzz profiles"))
    serve_at = next(i for i, line in enumerate(lines) if line.startswith("reference server"))
    fuzz_rows = [line.split()[0] for line in lines[fuzz_at + 1 : serve_at]]
    serve_rows = [line.split()[0] for line in lines[serve_at + 1 :]]
    assert fuzz_rows == list_profiles()
    assert serve_rows == list(BEHAVIOURS)
    for line in lines[serve_at + 1 :]:
        name = line.split()[0]
        assert line.split(None, 1)[1] == BEHAVIOURS[name].summary


def test_oracles_lists_every_oracle_one_line_each(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["oracles"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == oracle_names()
    summaries = oracle_summaries()
    for line in lines:
        name, said = line.split(None, 1)
        assert said == summaries[name] and said.endswith((".", "…"))
        assert len(said) <= 110
