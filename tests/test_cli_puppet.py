"""``agentfuzz puppet vllm-args``: what a ``vllm serve`` command needs to run the puppet
processor, in each form, and a folder with the processor alone that a bare Python can import
(without vLLM, the processor's own module aside)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

import agentfuzz
from agentfuzz.cli import cli, main
from agentfuzz.errors import EXIT_USAGE
from agentfuzz.puppet.channel import KEY

PROCESSOR = "agentfuzz.puppet.vllm_processor:PuppetProcessor"
ROOT = Path(agentfuzz.__file__).resolve().parent.parent


def _run(*argv: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["puppet", "vllm-args", *argv])
    return result.exit_code, result.stdout, result.stderr


def test_the_default_says_the_arguments_and_the_environment() -> None:
    code, out, _ = _run()
    assert code == 0
    assert f"--logits-processors {PROCESSOR}" in out
    assert f"PYTHONPATH={ROOT}" in out


def test_args_are_one_line_for_a_shell_and_name_the_parser_when_asked() -> None:
    code, out, _ = _run("--format", "args", "--parser", "kimi_k2")
    assert code == 0
    assert shlex.split(out) == [
        "--logits-processors",
        PROCESSOR,
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "kimi_k2",
    ]


def test_json_holds_args_env_and_the_vllm_xargs_key() -> None:
    code, out, _ = _run("--format", "json")
    about = json.loads(out)
    assert code == 0
    assert about["args"] == ["--logits-processors", PROCESSOR]
    assert about["env"] == {"PYTHONPATH": str(ROOT)}
    assert about["vllm_xargs_key"] == KEY


def test_an_unknown_parser_is_one_line_and_exit_2(capsys: object) -> None:
    assert main(["puppet", "vllm-args", "--parser", "kimi"]) == EXIT_USAGE
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert err.strip().splitlines() == [
        "agentfuzz: unknown tool-call format 'kimi'; did you mean kimi_k2?"
    ]


def test_export_writes_the_processor_alone_and_a_bare_python_imports_its_logic(
    tmp_path: Path,
) -> None:
    code, out, _ = _run("--format", "env", "--export", str(tmp_path / "srv"))
    assert (code, out.strip()) == (0, f"PYTHONPATH={tmp_path / 'srv'}")
    package = tmp_path / "srv" / "agentfuzz"
    files = sorted(p.relative_to(package).as_posix() for p in package.rglob("*.py"))
    assert files == [
        "__init__.py",
        "puppet/__init__.py",
        "puppet/channel.py",
        "puppet/forcing.py",
        "puppet/vllm_processor.py",
    ]
    probe = (
        "import sys; from agentfuzz.puppet import channel, forcing; "
        "print(sorted(m for m in sys.modules if m.startswith('agentfuzz')))"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "srv")}
    done = subprocess.run(
        [sys.executable, "-S", "-c", probe],  # -S: no site-packages, only PYTHONPATH
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(
        ["agentfuzz", "agentfuzz.puppet", "agentfuzz.puppet.channel", "agentfuzz.puppet.forcing"]
    )


def test_export_refuses_the_folder_agentfuzz_lives_in(tmp_path: Path) -> None:
    code, _, err = _run("--export", str(ROOT))
    assert code == EXIT_USAGE
    assert "holds agentfuzz itself" in err
