import os
written = []
for path in ("/box/x", "/box/job/x", "/usr/x", "/etc/x", "/x", "/sys/fs/cgroup/x", "/proc/sys/kernel/x"):
    try:
        with open(path, "w") as f:
            f.write("x")
        written.append(path)
    except OSError:
        pass
print("wrote " + " ".join(written) if written else "nothing written")
