/*
 * judge-supervisor: PID 1 of a sandbox container.
 *
 * It connects once to the host's unix socket (in the read-only /box mount),
 * then serves one request at a time: run a program in a fresh working folder
 * under resource limits, kill everything it left behind, and send back its
 * exit status, CPU time, peak memory, output and (for compiles) one artifact.
 *
 * Why a C program forked from PID 1:
 * - A fork of a small static process starts with almost no resident anonymous
 *   memory, so the child's peak RSS (which the kernel carries across exec) is
 *   the submission's own, not an interpreter's.
 * - PID 1 of a PID namespace cannot be killed or stopped by the processes in
 *   it, and it inherits every orphan: after a run, kill(-1, SIGKILL) followed by
 *   reaping until ECHILD leaves nothing running, and the reaped children's CPU
 *   time (RUSAGE_CHILDREN) is the whole run's.
 * - It runs as the same uid as the submission, so it makes itself non-dumpable:
 *   the submission can neither ptrace it nor read its memory or descriptors.
 * - A case's program may start threads but no processes (a seccomp filter):
 *   its CPU time and peak memory are then wholly the waited process's, and
 *   nothing it made can outlive it. System V IPC and POSIX message queues,
 *   which outlive processes, are refused to every run.
 * - Between runs, everything writable is wiped; if that fails the answer says
 *   `dirty=1` and the host throws the container away.
 *
 * Wire format (little-endian), both directions: u32 length, then the message.
 * Request: NUL-terminated strings "key=value" ..., an empty string, then argv.
 * Response: a text header of "key=value\n" lines, then out_len bytes of
 * stdout, err_len bytes of stderr, tail_len bytes of the end of stderr and
 * art_len bytes of artifact follow the framed header on the stream.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_REQUEST (64 * 1024)
#define MAX_ARGS 64
#define MAX_ENV 32
#define WIPE_MAX_DEPTH 64
#define JOB_DIR "/box/job"
#define SCRATCH_DIR "/work"
#define TMP_DIR "/tmp"
#define MQUEUE_DIR "/dev/mqueue"
#define SHM_DIR "/dev/shm"

static int sock = -1;

struct request {
    const char *workdir;
    const char *stdin_path;
    long long cpu_ms, wall_ms, data_kb, stack_kb, fsize, nofile;
    long long out_send, err_send, tail_send, artifact_max, nofork;
    const char *artifact;
    char *argv[MAX_ARGS + 1];
    char *envp[MAX_ENV + 1];
    int nenv;
};

struct outcome {
    int exited, exit_code, signal;
    int wall_timeout, cpu_timeout;
    long long cpu_us, wall_us, maxrss_kb, oom_kills;
};

static void die(const char *what) {
    perror(what);
    _exit(1);
}

static int write_all(int fd, const void *buf, size_t len) {
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len) {
    char *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static long long monotonic_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static long long rusage_cpu_us(const struct rusage *ru) {
    return (long long)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000 + ru->ru_utime.tv_usec +
           ru->ru_stime.tv_usec;
}

/* Removes everything below the folder open at dirfd without following links.
 * The submission shares our uid, so it may have made folders unreadable:
 * give them back their permissions first. A folder deeper than
 * WIPE_MAX_DEPTH is moved up to the top (top_fd) and wiped on a later pass,
 * so depth costs passes, not stack or descriptors. */
static int wipe_below(int dirfd, int top_fd, int depth) {
    static unsigned long moved = 0;
    int more = 0;
    DIR *dir = fdopendir(dirfd);
    if (!dir) {
        close(dirfd);
        return 0;
    }
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        struct stat st;
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
        if (!S_ISDIR(st.st_mode)) {
            unlinkat(dirfd, e->d_name, 0);
            continue;
        }
        fchmodat(dirfd, e->d_name, 0700, 0);
        if (depth >= WIPE_MAX_DEPTH) {
            char name[64];
            snprintf(name, sizeof name, ".wipe-%lu", moved++);
            if (renameat(dirfd, e->d_name, top_fd, name) == 0) more = 1;
            continue;
        }
        int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) more |= wipe_below(sub, top_fd, depth + 1);
        unlinkat(dirfd, e->d_name, AT_REMOVEDIR);
    }
    closedir(dir);
    return more;
}

static int is_empty(int fd) {
    int dup_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = dup_fd < 0 ? NULL : fdopendir(dup_fd);
    if (!dir) return 0;
    struct dirent *e;
    int empty = 1;
    while (empty && (e = readdir(dir)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
    closedir(dir);
    return empty;
}

/* Returns 0 when the folder is empty afterwards. */
static int wipe(const char *path) {
    int top = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (top < 0) return -1;
    for (int pass = 0; pass < 10000; pass++) {
        int again = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (again < 0 || !wipe_below(again, top, 0)) break;
    }
    int clean = is_empty(top);
    close(top);
    return clean ? 0 : -1;
}

/* /dev/mqueue is writable (open() creates queues there without mq_open);
 * /dev/shm holds POSIX semaphores and shared memory (Python's multiprocessing). */
static int wipe_all(void) {
    int a = wipe(SCRATCH_DIR), b = wipe(TMP_DIR), c = wipe(MQUEUE_DIR), d = wipe(SHM_DIR);
    return a || b || c || d ? -1 : 0;
}

/* The working folder links to every entry of the read-only job folder: the
 * program finds its data files and headers beside it, cannot change them, and
 * everything it writes lands in a folder that is wiped after the run. */
static int populate(const char *workdir) {
    if (mkdir(workdir, 0755) < 0 && errno != EEXIST) return -1;
    DIR *dir = opendir(JOB_DIR);
    if (!dir) return errno == ENOENT ? 0 : -1;
    struct dirent *e;
    char target[4096], link[4096];
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        snprintf(target, sizeof target, "%s/%s", JOB_DIR, e->d_name);
        snprintf(link, sizeof link, "%s/%s", workdir, e->d_name);
        if (symlink(target, link) < 0) {
            closedir(dir);
            return -1;
        }
    }
    closedir(dir);
    return 0;
}

static long long read_oom_kills(void) {
    /* cgroup v1 exposes the container's counter in memory.oom_control, v2 in
     * memory.events; either is readable from inside. -1 when neither is. */
    static const char *files[] = {"/sys/fs/cgroup/memory/memory.oom_control",
                                  "/sys/fs/cgroup/memory.events"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        FILE *f = fopen(files[i], "re");
        if (!f) continue;
        char key[64];
        long long value;
        while (fscanf(f, "%63s %lld", key, &value) == 2) {
            if (!strcmp(key, "oom_kill")) {
                fclose(f);
                return value;
            }
        }
        fclose(f);
    }
    return -1;
}

static int parse_request(char *buf, size_t len, struct request *rq) {
    memset(rq, 0, sizeof *rq);
    rq->stack_kb = rq->data_kb = rq->fsize = 0;
    rq->nofile = 64;
    char *p = buf, *end = buf + len;
    int in_argv = 0, argc = 0;
    while (p < end) {
        char *s = p;
        char *nul = memchr(p, '\0', (size_t)(end - p));
        if (!nul) return -1;
        p = nul + 1;
        if (in_argv) {
            if (argc >= MAX_ARGS) return -1;
            rq->argv[argc++] = s;
            continue;
        }
        if (!*s) {
            in_argv = 1;
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq) return -1;
        *eq = '\0';
        char *v = eq + 1;
        if (!strcmp(s, "workdir")) rq->workdir = v;
        else if (!strcmp(s, "stdin")) rq->stdin_path = v;
        else if (!strcmp(s, "artifact")) rq->artifact = v;
        else if (!strcmp(s, "env")) {
            if (rq->nenv >= MAX_ENV) return -1;
            rq->envp[rq->nenv++] = v;
        } else {
            long long n = strtoll(v, NULL, 10);
            if (!strcmp(s, "cpu_ms")) rq->cpu_ms = n;
            else if (!strcmp(s, "wall_ms")) rq->wall_ms = n;
            else if (!strcmp(s, "data_kb")) rq->data_kb = n;
            else if (!strcmp(s, "stack_kb")) rq->stack_kb = n;
            else if (!strcmp(s, "fsize")) rq->fsize = n;
            else if (!strcmp(s, "nofile")) rq->nofile = n;
            else if (!strcmp(s, "out_send")) rq->out_send = n;
            else if (!strcmp(s, "err_send")) rq->err_send = n;
            else if (!strcmp(s, "tail_send")) rq->tail_send = n;
            else if (!strcmp(s, "nofork")) rq->nofork = n;
            else if (!strcmp(s, "artifact_max")) rq->artifact_max = n;
            else return -1;
        }
    }
    if (!rq->workdir || strncmp(rq->workdir, SCRATCH_DIR "/", sizeof SCRATCH_DIR) != 0) return -1;
    if (argc == 0 || rq->cpu_ms <= 0 || rq->wall_ms <= 0) return -1;
    return 0;
}

static void set_limit(int resource, long long value) {
    if (value <= 0) return;
    struct rlimit rl = {(rlim_t)value, (rlim_t)value};
    setrlimit(resource, &rl);
}

#if defined(__x86_64__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_AARCH64
#else
#error "supervisor: unsupported architecture"
#endif

#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define ON(nr, skip) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), (skip), 0)
#define RET(action) BPF_STMT(BPF_RET | BPF_K, (action))
#define DENY(errno_value) RET(SECCOMP_RET_ERRNO | (errno_value))
#ifndef __NR_fork
#define __NR_fork 0xffffffffu
#endif
#ifndef __NR_vfork
#define __NR_vfork 0xffffffffu
#endif
#if defined(__x86_64__)
#define CHECK_ABI                                                                          \
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1), /* the x32 ABI */              \
        RET(SECCOMP_RET_KILL_PROCESS),
#else
#define CHECK_ABI
#endif
#define PREFIX                                                                             \
    LOAD(arch), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_NATIVE, 1, 0),              \
        RET(SECCOMP_RET_KILL_PROCESS), LOAD(nr), CHECK_ABI

/* Refuses what outlives a process (System V IPC, POSIX message queues) and,
 * when `nofork`, new processes: fork/vfork fail with EAGAIN as at a process
 * limit, clone only makes threads, clone3 says ENOSYS so that libc falls back
 * to clone, whose flags the filter can see; and memory files, which would
 * hold memory outside the program's resident set. Jump offsets count the
 * instructions skipped. */
static int install_filter(int nofork) {
    struct sock_filter no_processes[] = {
        PREFIX
        ON(__NR_shmget, 13),
        ON(__NR_msgget, 12),
        ON(__NR_semget, 11),
        ON(__NR_mq_open, 10),
        ON(__NR_memfd_create, 9),
        ON(__NR_fork, 6),
        ON(__NR_vfork, 5),
        ON(__NR_clone3, 5),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 2),
        LOAD(args[0]),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1),
        RET(SECCOMP_RET_ALLOW),
        DENY(EAGAIN),
        DENY(ENOSYS),
        DENY(EPERM),
    };
    struct sock_filter processes[] = {
        PREFIX
        ON(__NR_shmget, 4),
        ON(__NR_msgget, 3),
        ON(__NR_semget, 2),
        ON(__NR_mq_open, 1),
        RET(SECCOMP_RET_ALLOW),
        DENY(EPERM),
    };
    struct sock_fprog prog = {sizeof processes / sizeof *processes, processes};
    if (nofork) prog = (struct sock_fprog){sizeof no_processes / sizeof *no_processes, no_processes};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* Writes by path only below the folders a run may use (Landlock): a program
 * shares our uid, and /proc/self lets its owner reset its peak-memory mark
 * (clear_refs) or lower its OOM-killer score. Kernels without Landlock are
 * left as they are. */
static int restrict_writes(void) {
    struct landlock_ruleset_attr attr = {.handled_access_fs = LANDLOCK_ACCESS_FS_WRITE_FILE};
    int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (ruleset < 0) return errno == ENOSYS || errno == EOPNOTSUPP ? 0 : -1;
    static const char *writable[] = {SCRATCH_DIR, TMP_DIR,     MQUEUE_DIR, SHM_DIR,
                                     "/dev/null", "/dev/zero", "/dev/full", "/dev/tty",
                                     "/dev/pts"};
    for (size_t i = 0; i < sizeof writable / sizeof *writable; i++) {
        int fd = open(writable[i], O_PATH | O_CLOEXEC);
        if (fd < 0) continue;
        struct landlock_path_beneath_attr rule = {.allowed_access = LANDLOCK_ACCESS_FS_WRITE_FILE,
                                                  .parent_fd = fd};
        syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
        close(fd);
    }
    int r = (int)syscall(__NR_landlock_restrict_self, ruleset, 0);
    close(ruleset);
    return r;
}

/* The run, not PID 1, is the OOM killer's choice when the container runs out
 * of memory (else a program could have the supervisor killed: a JE). Its
 * /proc/self is ours only once it is dumpable (exec resets that anyway). */
static int first_to_be_killed(void) {
    prctl(PR_SET_DUMPABLE, 1);
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int ok = write(fd, "1000", 4) == 4;
    close(fd);
    return ok ? 0 : -1;
}

/* In the child, between fork and exec: async-signal-safe calls only. */
static void exec_child(const struct request *rq, int in_fd, int out_fd, int err_fd, int report_fd) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setsid();
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) goto fail;
    if (chdir(rq->workdir) < 0) goto fail;
    /* RLIMIT_CPU is whole seconds: a backstop one second past the limit. The
     * supervisor itself kills at the limit, to the millisecond. */
    set_limit(RLIMIT_CPU, (rq->cpu_ms + 999) / 1000 + 1);
    set_limit(RLIMIT_DATA, rq->data_kb * 1024);
    set_limit(RLIMIT_STACK, rq->stack_kb * 1024);
    set_limit(RLIMIT_FSIZE, rq->fsize);
    set_limit(RLIMIT_NOFILE, rq->nofile);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    umask(022);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) goto fail;
    if (rq->nofork && (first_to_be_killed() < 0 || restrict_writes() < 0)) goto fail;
    if (install_filter((int)rq->nofork) < 0) goto fail;
    execvpe(rq->argv[0], rq->argv, rq->envp);
fail:;
    int err = errno;
    write_all(report_fd, &err, sizeof err);
    _exit(127);
}

static void kill_and_reap_all(pid_t main_pid, struct outcome *oc, int *main_done,
                              struct rusage *main_ru) {
    for (;;) {
        kill(-1, SIGKILL);
        int status;
        struct rusage ru;
        pid_t pid = wait4(-1, &status, 0, &ru);
        if (pid < 0) {
            if (errno == EINTR) continue;
            break; /* ECHILD: nothing of this run is left */
        }
        if (pid == main_pid && !*main_done) {
            *main_done = 1;
            *main_ru = ru;
            oc->exited = WIFEXITED(status);
            oc->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
            oc->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        }
    }
}

static long long process_cpu_us(pid_t pid) {
    clockid_t clk;
    struct timespec ts;
    if (clock_getcpuclockid(pid, &clk) != 0 || clock_gettime(clk, &ts) != 0) return -1;
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int run(const struct request *rq, struct outcome *oc, int out_fd, int err_fd,
               char *error, size_t error_len) {
    memset(oc, 0, sizeof *oc);
    if (wipe_all() < 0) {
        snprintf(error, error_len, "dirty: the previous run's files could not be removed");
        return -1;
    }
    if (populate(rq->workdir) < 0) {
        snprintf(error, error_len, "populate: %s", strerror(errno));
        return -1;
    }
    int in_fd = open(rq->stdin_path && *rq->stdin_path ? rq->stdin_path : "/dev/null",
                     O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (in_fd < 0) {
        snprintf(error, error_len, "stdin: %s", strerror(errno));
        return -1;
    }
    int report[2];
    if (pipe2(report, O_CLOEXEC) < 0) die("pipe2");

    long long oom_before = read_oom_kills();
    struct rusage children_before, children_after, main_ru;
    getrusage(RUSAGE_CHILDREN, &children_before);
    memset(&main_ru, 0, sizeof main_ru);

    long long start = monotonic_us();
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) exec_child(rq, in_fd, out_fd, err_fd, report[1]);
    close(report[1]);
    close(in_fd);

    int exec_errno = 0;
    if (read(report[0], &exec_errno, sizeof exec_errno) != (ssize_t)sizeof exec_errno)
        exec_errno = 0;
    close(report[0]);

    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    long long wall_deadline = start + rq->wall_ms * 1000;
    long long cpu_limit_us = rq->cpu_ms * 1000;
    int main_done = 0;
    while (!main_done) {
        int status;
        struct rusage ru;
        pid_t reaped;
        while ((reaped = wait4(-1, &status, WNOHANG, &ru)) > 0) {
            if (reaped == pid) {
                main_done = 1;
                main_ru = ru;
                oc->exited = WIFEXITED(status);
                oc->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
                oc->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
            }
        }
        if (main_done) break;
        long long now = monotonic_us();
        if (now >= wall_deadline) {
            oc->wall_timeout = 1;
            break;
        }
        long long cpu = process_cpu_us(pid);
        if (cpu >= 0 && cpu > cpu_limit_us) {
            oc->cpu_timeout = 1;
            break;
        }
        /* Sleep until the child exits, or until the earliest moment it could
         * have used up its CPU time (it cannot burn CPU faster than the wall
         * clock per thread), or the wall deadline. */
        long long wait_us = wall_deadline - now;
        long long cpu_left = cpu >= 0 ? cpu_limit_us - cpu + 1000 : 5000;
        if (cpu_left < 5000) cpu_left = 5000;
        if (cpu_left < wait_us) wait_us = cpu_left;
        struct timespec ts = {wait_us / 1000000, (wait_us % 1000000) * 1000};
        sigtimedwait(&chld, NULL, &ts);
    }
    kill_and_reap_all(pid, oc, &main_done, &main_ru);
    oc->wall_us = monotonic_us() - start;
    getrusage(RUSAGE_CHILDREN, &children_after);
    oc->cpu_us = rusage_cpu_us(&children_after) - rusage_cpu_us(&children_before);
    oc->maxrss_kb = main_ru.ru_maxrss;
    long long oom_after = read_oom_kills();
    oc->oom_kills = (oom_before >= 0 && oom_after >= 0) ? oom_after - oom_before : 0;
    if (exec_errno) {
        snprintf(error, error_len, "exec %s: %s", rq->argv[0], strerror(exec_errno));
        return -1;
    }
    return 0;
}

static long long file_size(int fd) {
    struct stat st;
    return fstat(fd, &st) < 0 ? 0 : st.st_size;
}

static int send_file_part(int fd, off_t off, long long len) {
    off_t end = off + len;
    while (off < end) {
        ssize_t n = sendfile(sock, fd, &off, (size_t)(end - off));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
    }
    return 0;
}

static int send_header(const char *header) {
    uint32_t len = (uint32_t)strlen(header);
    return write_all(sock, &len, sizeof len) || write_all(sock, header, len) ? -1 : 0;
}

static void serve(char *buf, uint32_t len) {
    struct request rq;
    char header[2048], error[512] = "";
    if (parse_request(buf, len, &rq) < 0) {
        snprintf(header, sizeof header, "ok=0\nerror=bad request\n");
        if (send_header(header) < 0) _exit(0);
        return;
    }
    /* Outputs are memory files: nameless, so the submission reaches them only
     * through its stdout and stderr; bounded by RLIMIT_FSIZE; sealed against
     * shrinking, so output over the limit cannot be taken back; and apart from
     * every folder it can fill. */
    int out_fd = memfd_create("stdout", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    int err_fd = memfd_create("stderr", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (out_fd < 0 || err_fd < 0 || fcntl(out_fd, F_ADD_SEALS, F_SEAL_SHRINK) < 0 ||
        fcntl(err_fd, F_ADD_SEALS, F_SEAL_SHRINK) < 0)
        die("memfd_create");
    struct outcome oc;
    int failed = run(&rq, &oc, out_fd, err_fd, error, sizeof error);

    int art_fd = -1;
    long long art_len = 0;
    const char *art_status = "none";
    if (!failed && rq.artifact && oc.exited && oc.exit_code == 0) {
        int wd = open(rq.workdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        art_fd = wd < 0 ? -1 : openat(wd, rq.artifact, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (wd >= 0) close(wd);
        struct stat st;
        if (art_fd < 0 || fstat(art_fd, &st) < 0 || !S_ISREG(st.st_mode)) {
            art_status = "missing";
        } else if (st.st_size > rq.artifact_max) {
            art_status = "too_big";
        } else {
            art_status = "ok";
            art_len = st.st_size;
        }
    }
    /* Everything the run wrote goes now (the artifact stays open); a
     * container that cannot be made clean must not serve another run. */
    int dirty = wipe_all() < 0;
    long long out_size = file_size(out_fd), err_size = file_size(err_fd);
    long long out_len = out_size < rq.out_send ? out_size : rq.out_send;
    long long err_len = err_size < rq.err_send ? err_size : rq.err_send;
    /* The end of stderr, where runtimes report a failed allocation. */
    long long tail_len = err_size < rq.tail_send ? err_size : rq.tail_send;
    if (failed) out_len = err_len = tail_len = 0;
    snprintf(header, sizeof header,
             "ok=%d\nerror=%s\nexited=%d\nexit_code=%d\nsignal=%d\nwall_timeout=%d\n"
             "cpu_timeout=%d\ncpu_us=%lld\nwall_us=%lld\nmaxrss_kb=%lld\noom_kills=%lld\n"
             "out_size=%lld\nerr_size=%lld\nout_len=%lld\nerr_len=%lld\ntail_len=%lld\n"
             "art_status=%s\nart_len=%lld\ndirty=%d\n",
             failed ? 0 : 1, error, oc.exited, oc.exit_code, oc.signal, oc.wall_timeout,
             oc.cpu_timeout, oc.cpu_us, oc.wall_us, oc.maxrss_kb, oc.oom_kills, out_size, err_size,
             out_len, err_len, tail_len, art_status, art_len, dirty);
    if (send_header(header) < 0 || send_file_part(out_fd, 0, out_len) < 0 ||
        send_file_part(err_fd, 0, err_len) < 0 ||
        send_file_part(err_fd, err_size - tail_len, tail_len) < 0 ||
        send_file_part(art_fd, 0, art_len) < 0)
        _exit(0);
    close(out_fd);
    close(err_fd);
    if (art_fd >= 0) close(art_fd);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s SOCKET\n", argv[0]);
        return 2;
    }
    prctl(PR_SET_DUMPABLE, 0);
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);

    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(argv[1]) >= sizeof addr.sun_path) return 2;
    strcpy(addr.sun_path, argv[1]);
    sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sock < 0 || connect(sock, (struct sockaddr *)&addr, sizeof addr) < 0) die("connect");

    static char buf[MAX_REQUEST];
    for (;;) {
        uint32_t len;
        if (read_all(sock, &len, sizeof len) < 0) return 0; /* host closed: done */
        if (len == 0 || len > MAX_REQUEST || read_all(sock, buf, len) < 0) return 1;
        serve(buf, len);
    }
}
