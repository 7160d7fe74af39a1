"""`python main.py` as a child process, with its log lines to wait on."""
import os
import pathlib
import re
import signal
import subprocess
import sys
import threading
from typing import Dict, List, Optional

REPO = pathlib.Path(__file__).resolve().parents[2]


class RunnerProcess:

    def __init__(self, env: Dict[str, str]):
        self.lines: List[str] = []
        self._cond = threading.Condition()
        self.proc = subprocess.Popen([sys.executable, 'main.py'],
                                     cwd=REPO,
                                     env={
                                         'PATH': os.environ['PATH'],
                                         **env
                                     },
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE,
                                     text=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stderr:
            with self._cond:
                self.lines.append(line.rstrip('\n'))
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def wait_for_line(self, pattern: str, timeout: float = 60) -> bool:
        regex = re.compile(pattern)
        with self._cond:
            return self._cond.wait_for(lambda: any(regex.search(l) for l in self.lines), timeout)

    def signal(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)

    def wait(self, timeout: float = 60) -> Optional[int]:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def log(self) -> str:
        with self._cond:
            return '\n'.join(self.lines)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
