"""SIGTERM and SIGINT become one event, without a Python signal handler.

The signals are blocked in every thread (the mask is set before any thread
starts, and threads inherit it) and a watcher thread takes them with
`sigwait`: nothing runs inside a handler, so nothing can deadlock there, and
a second signal during the drain is simply taken and logged by the watcher.
"""
import logging
import signal
import threading

log = logging.getLogger(__name__)

STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}


class SignalWatcher:

    def __init__(self, stop: threading.Event):
        self._stop = stop
        self._thread = threading.Thread(target=self._run, name='signals', daemon=True)

    def start(self) -> None:
        """Call from the main thread before starting any other thread."""
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        self._thread.start()

    def _run(self) -> None:
        while True:
            received = signal.sigwait(STOP_SIGNALS)
            if self._stop.is_set():
                log.warning(
                    '%s received again; the drain goes on (reports already computed '
                    'are still sent)',
                    signal.Signals(received).name)
            else:
                log.info('%s received: stopping', signal.Signals(received).name)
                self._stop.set()
