"""SIGTERM stops a run even when its interrupt is lost in a finalizer."""

from __future__ import annotations

import signal

import pytest

from agentfuzz.cli._common import sigterm_as_interrupt


def test_a_sigterm_whose_interrupt_was_swallowed_still_asks_the_run_to_stop() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with sigterm_as_interrupt() as termed:
        assert termed() is False
        handler = signal.getsignal(signal.SIGTERM)
        assert callable(handler)
        # What Python does when the signal lands inside a finalizer: the raise goes nowhere.
        with pytest.raises(KeyboardInterrupt):
            handler(signal.SIGTERM, None)
        assert termed() is True
    assert signal.getsignal(signal.SIGTERM) == before


def test_the_swallowed_interrupt_prints_no_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    class Finalized:
        def __del__(self) -> None:
            signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)  # type: ignore[operator]

    with sigterm_as_interrupt() as termed:
        Finalized()  # dropped at once: its __del__ raises, and Python calls it unraisable
        assert termed() is True
    assert "Traceback" not in capsys.readouterr().err
