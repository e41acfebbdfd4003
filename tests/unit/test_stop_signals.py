"""SIGINT and SIGTERM stop a run even when their interrupt is lost in a finalizer."""

from __future__ import annotations

import signal

import pytest

from agentfuzz.cli._common import stop_signals

SIGNALS = pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])


@SIGNALS
def test_a_signal_whose_interrupt_was_swallowed_still_asks_the_run_to_stop(signum: int) -> None:
    before = signal.getsignal(signum)
    with stop_signals() as stopped:
        assert stopped() is False
        handler = signal.getsignal(signum)
        assert callable(handler)
        # What Python does when the signal lands inside a finalizer: the raise goes nowhere.
        with pytest.raises(KeyboardInterrupt):
            handler(signum, None)
        assert stopped() is True
    assert signal.getsignal(signum) == before


@SIGNALS
def test_the_swallowed_interrupt_prints_no_traceback(
    capsys: pytest.CaptureFixture[str], signum: int
) -> None:
    class Finalized:
        def __del__(self) -> None:
            signal.getsignal(signum)(signum, None)  # type: ignore[operator]

    with stop_signals() as stopped:
        Finalized()  # dropped at once: its __del__ raises, and Python calls it unraisable
        assert stopped() is True
    assert "Traceback" not in capsys.readouterr().err
