import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_ATTACH = 16
attached = libc.ptrace(PTRACE_ATTACH, 1, 0, 0) == 0
readable = True
try:
    open("/proc/1/mem", "rb").read(1)
except OSError:
    readable = False
try:
    os.listdir("/proc/1/fd")
    fds = True
except OSError:
    fds = False
print(f"attach={attached} mem={readable} fds={fds}")
