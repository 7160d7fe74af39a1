# The host's paths (mountinfo), PID 1, host-wide counters and the container's
# cgroup counters (which would carry data from one case to the next) are not
# a run's to read.
paths = ["/proc/self/mountinfo", "/proc/self/mounts", "/proc/1/mountinfo", "/proc/1/stat",
         "/proc/1/status", "/proc/meminfo", "/proc/loadavg",
         "/sys/fs/cgroup/memory/memory.max_usage_in_bytes",
         "/sys/fs/cgroup/cpuacct/cpuacct.usage", "/sys/fs/cgroup/memory.peak"]
readable = []
for path in paths:
    try:
        with open(path) as f:
            f.read(1)
        readable.append(path)
    except OSError:
        pass
print("readable: " + " ".join(readable) if readable else "hidden")
