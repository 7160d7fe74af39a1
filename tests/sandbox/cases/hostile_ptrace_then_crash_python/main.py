# The same from Python: PTRACE_TRACEME, a right answer, then a crash.
import ctypes
import os
import sys

ctypes.CDLL(None).ptrace(0, 0, None, None)  # PTRACE_TRACEME
print(42)
sys.stdout.flush()
os.abort()
