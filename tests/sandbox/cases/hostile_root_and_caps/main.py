# What a run holds, asked of the kernel itself: its uid, its capabilities
# (effective, permitted and bounding), no_new_privs.
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)


class Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


header, data = Header(0x20080522, 0), (Data * 2)()
assert libc.capget(ctypes.byref(header), data) == 0
held = any(d.effective or d.permitted or d.inheritable for d in data)
PR_CAPBSET_READ, PR_GET_NO_NEW_PRIVS = 23, 39
bounding = [cap for cap in range(64) if libc.prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1]
own_uid = os.getuid() >= 100000 and os.getuid() != 61001  # the container's, not PID 1's
print(f"uid_is_the_containers={own_uid} held={held} bounding={bounding} "
      f"nnp={libc.prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)}")
