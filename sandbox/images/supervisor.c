/*
 * judge-supervisor: PID 1 of a sandbox container.
 *
 * It connects once to the host's unix socket (in the read-only /box mount),
 * then serves one request at a time: run a program (a compile or a case) in
 * namespaces and writable places of its own under resource limits, kill
 * everything it left behind, and send back its exit status, CPU time, peak
 * memory, output and (for compiles) one artifact.
 *
 * Why it is built this way:
 * - Two uids. The container starts as root; PID 1 at once becomes its own uid
 *   (SUPERVISOR_UID), keeping only the capabilities it needs (switching uid,
 *   killing runs, and making each run's namespaces and mounts), and every run
 *   is the container's run uid (given by the host, one per job) with no
 *   capability at all. prlimit, setpriority, sched_setscheduler,
 *   sched_setaffinity and ioprio_set check only the uid: with a shared uid a
 *   run could lower PID 1's CPU limit (the supervisor is killed: a JE of the
 *   student's choosing) or its priority and affinity, which every later run
 *   inherits. With two uids nothing a run does reaches PID 1, so nothing a
 *   run does reaches the next run through it. The run uid differs between
 *   jobs because the kernel counts some things per uid across the whole host
 *   (pending signals, pipe buffers): a job that takes them all must not
 *   starve another job's runs.
 * - Every job, and every TLE's rerun, starts in state no earlier run
 *   touched: PID 1 forks a "run init" in a new pid and mount namespace
 *   (fresh_places), which makes the runs' tree and serves the job's runs
 *   (serve). New tmpfs instances on every place a run may write (/work,
 *   /tmp, /dev/shm; an empty read-only one on /dev/mqueue; /dev itself
 *   read-only), and a root that is the image's copy in memory (a tmpfs the
 *   host made, read-only) with nothing of /box but the job's folder. Its
 *   end ends the namespace: every process of its runs dies with it, and its
 *   mounts with everything written there are gone. So nothing a job's runs
 *   leave can reach a later job or a rerun, not even through counters that
 *   survive deleting files: a tmpfs numbers its inodes from 1 again, a pid
 *   namespace its pids, and the places' modification times are the new
 *   mounts'. (A TLE's rerun once read a first run's answer back from /tmp's
 *   inode counter.) Nor through the kernel's directory cache: looking up a
 *   name that does not exist leaves an entry that a later lookup can time
 *   (a TLE's rerun once printed its first run's answer so), but not on a
 *   tmpfs, and every folder a run can look a name up in is one, but the
 *   job's folder, which the host makes anew for each run init (bind_job).
 *   Without a copy of the image (argv[3]) the root is the container's own,
 *   whose folders keep such entries (the README's known limits). Between
 *   two runs of a job, a child with
 *   the run's uid wipes what the run wrote (wipe_all): a later case of the
 *   job sees no file of an earlier one, only such counters (the README's
 *   known limits). The places PID 1 itself sees are never written. The next run
 *   init is made as soon as one is taken (prefork), so that its namespaces
 *   and mounts are ready when the next job comes.
 * - The run init is the namespace's init: it cannot be killed or stopped by
 *   the processes in its namespace, and it inherits every orphan: after a
 *   run, kill(-1, SIGKILL) and reaping until ECHILD leave nothing running,
 *   and the reaped children's CPU time (RUSAGE_CHILDREN) is the whole run's.
 *   When the container runs out of memory, the OOM killer takes a run
 *   (score 1000), never a supervisor.
 * - A fork of a small static process starts with almost no resident memory,
 *   so the run's peak RSS (which the kernel carries across exec) is its own.
 * - A run ends only when its main process has exited or died of a signal; a
 *   stopped process is not an end, and ptrace is refused to runs (a tracee's
 *   crash is a stop, which once made a crash look like a clean exit).
 * - A case may start threads (sharing its descriptors) but no processes, and
 *   may not make what would hold memory out of sight of its resident set or
 *   outlive it: sockets, memory files, System V IPC, POSIX message queues,
 *   FIFOs, pipes, extended attributes, inotify queues, file locks, seccomp
 *   filters (seccomp; RLIMIT_SIGPENDING caps queued signals and timers), nor
 *   move on a counter of the whole host that a later run could read (pipes,
 *   shared anonymous memory, huge pages), nor set a file's times. Its
 *   memory (resident set and page tables) is watched during the run and the
 *   run stops as soon as it passes the memory limit.
 * - Landlock confines what runs see and write: they read the image and the
 *   job's files, and their working folder (which the run init makes, so a
 *   case cannot change it either); they write only /tmp and /dev/shm
 *   (small, inode-capped tmpfs) and a few devices. Landlock does not cover
 *   looking a path up: /proc and /sys are empty tmpfs for runs, and the rest
 *   of the container's /box (the socket, a case's input, an interactive
 *   case's pipes) is not in their tree at all: the run init opens those
 *   through a descriptor of its own (open_box).
 * - An interactive case is two runs at once, the program's and the
 *   interactor's, each in a container of its own, joined by two FIFOs the
 *   host made in both boxes: the run init opens them as the run's stdin and
 *   stdout (open_fifos says how neither side can hang the other), so a run
 *   still never makes a FIFO itself. What each side writes passes a relay
 *   (start_relay): the program's counts, the interactor's never fails. A
 *   third FIFO carries the interactor's CPU time to the program's run init,
 *   which extends the program's wall bound by it (the program waits while
 *   the interactor thinks, and only then).
 * - A job's Python cases may be forked from an interpreter started once for
 *   the job, the Python zygote (python_zygote.c; start_zygote says when and
 *   how): a case's process is then the run init's child as an exec'd one
 *   is, with the same limits, Landlock rules (in a domain nested in the
 *   zygote's, so it cannot signal it) and seccomp filter, measured and
 *   ended the same way, but for the kill: only its process (it can start no
 *   other), since the zygote serves the job's next case.
 * - Before any run, the host has every file of the image read once (a warm
 *   request, in a container of its own) when the image has no copy in
 *   memory: a read of a run then never changes what the host's page cache
 *   holds, which a later run could time (warm).
 * - Between jobs a container is reset (a request of its own): nothing runs
 *   and no writable place PID 1 sees holds anything, both checked from PID
 *   1, and the next job's runs get a uid of their own.
 *
 * Wire format (little-endian), both directions: u32 length, then the message.
 * Request: NUL-terminated strings "key=value" ..., an empty string, then argv
 * (a reset: kind=reset and next_uid=N, no argv; its answer is ok, error,
 * mem_kb and protocol only; a warm: kind=warm, no argv; its answer ok,
 * error, files, bytes and protocol).
 * Response: a text header of "key=value\n" lines, then out_len bytes of
 * stdout, err_len bytes of stderr, tail_len bytes of the end of stderr and
 * art_len bytes of artifact follow the framed header on the stream.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zygote.h"

#define PROTOCOL_VERSION 9
#define SUPERVISOR_UID 61001
/* The Python zygote's (start_zygote): neither PID 1's nor any run's. */
#define ZYGOTE_UID 61002
/* The host gives each container a run uid of its own in this range. */
#define MIN_RUN_UID 100000
#define MAX_RUN_UID 0x7fffffff
#define MAX_REQUEST (64 * 1024)
#define WIPE_MAX_DEPTH 64
#define MAX_ARGS 64
#define MAX_ENV 32
#define JOB_DIR "/box/job"
#define SCRATCH_DIR "/work"
#define TMP_DIR "/tmp"
#define MQUEUE_DIR "/dev/mqueue"
#define SHM_DIR "/dev/shm"
/* A case's working folder: made by the run init, so read-only for the run. */
#define CASE_DIR SCRATCH_DIR "/run"
/* The run init's own /proc (fresh_places): no run can reach it. */
#define PROC_DIR "/sys/proc"
/* Where this process finds /proc: PID 1 the container's, a run init its own. */
static const char *proc_dir = "/proc";
/* How often a run's peak memory is looked at while it runs. */
#define MEMORY_POLL_US 10000

static int sock = -1;
static uid_t run_uid;

/* A reset is not a run: it readies the container for another job. The
 * zygote is not a request's kind: it names the Python zygote's own seccomp
 * rules (install_filter). */
enum kind { KIND_COMPILE, KIND_CASE, KIND_RESET, KIND_WARM, KIND_ZYGOTE };

struct request {
    enum kind kind;
    const char *workdir;
    const char *stdin_path;
    /* An interactive run's stdin and stdout: FIFOs in /box, the other ends
     * held by the peer container's run (see open_fifos). */
    const char *fifo_in, *fifo_out;
    long long fifo_out_first;
    /* What the run writes to fifo_out passes a relay (start_relay): > 0, it
     * stops the run past this many bytes; fifo_out_drop, once the peer has
     * gone it drops what the run writes, which then never fails. */
    long long fifo_out_max, fifo_out_drop;
    /* An interactive run's clock FIFO (see struct clock): the program's run
     * init reads the interactor's CPU time from clock_in and adds up to
     * wall_credit_ms of it to the wall bound; the interactor's writes it to
     * clock_out. */
    const char *clock_in, *clock_out;
    long long wall_credit_ms;
    /* A run that must not see anything an earlier run left, even of its own
     * job (a TLE's rerun): a new run init serves it. */
    long long fresh;
    /* A case whose argv runs a Python script: it may be forked from the
     * job's Python zygote (start_zygote). */
    long long zygote;
    long long cpu_ms, wall_ms, mem_kb, data_kb, stack_kb, fsize, nofile;
    long long out_send, err_send, tail_send, artifact_max;
    const char *artifact;
    char *argv[MAX_ARGS + 1];
    char *envp[MAX_ENV + 1];
    int nenv;
    long long next_uid; /* a reset's: the uid of the next job's runs */
};

struct outcome {
    int exited, exit_code, signal;
    int wall_timeout, cpu_timeout, mem_exceeded;
    int out_over; /* it wrote more than fifo_out_max bytes to its peer */
    int from_zygote; /* its process was forked by the job's Python zygote */
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

static int read_text(int fd, char *buf, size_t size) {
    ssize_t n = fd < 0 ? -1 : pread(fd, buf, size - 1, 0);
    if (n <= 0) return -1;
    buf[n] = '\0';
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

/* ---- privileges ---------------------------------------------------------- */

/* Killing runs of another uid, becoming the run's uid, making each run's
 * namespaces, mounts and root, and emptying the run's bounding set. No
 * more: not even CAP_SYS_RESOURCE, which some hosts' engines cannot grant.
 * The run init gives up CAP_SYS_ADMIN and CAP_SYS_CHROOT once its mounts
 * are made; CAP_SETPCAP, which emptying the bounding set needs, is dropped
 * last. */
static const int supervisor_caps[] = {CAP_KILL,      CAP_SETGID,     CAP_SETUID,
                                      CAP_SYS_ADMIN, CAP_SYS_CHROOT, CAP_SETPCAP};
#define N_CAPS (sizeof supervisor_caps / sizeof *supervisor_caps)

static uint32_t all_caps(void) {
    uint32_t caps = 0;
    for (size_t i = 0; i < N_CAPS; i++) caps |= 1u << supervisor_caps[i];
    return caps;
}

static int set_caps(uint32_t caps) {
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2] = {{caps, caps, 0}, {0, 0, 0}};
    return (int)syscall(SYS_capset, &header, data);
}

static int become(uid_t uid) {
    gid_t gid = (gid_t)uid;
    if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
        return -1;
    return 0;
}

static int write_oom_score_adj(const char *value) {
    char path[64];
    snprintf(path, sizeof path, "%s/self/oom_score_adj", proc_dir);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int ok = write(fd, value, strlen(value)) == (ssize_t)strlen(value);
    close(fd);
    return ok ? 0 : -1;
}

/* From root to SUPERVISOR_UID with supervisor_caps and nothing else. */
static void drop_to_supervisor(void) {
    if (getuid() != 0) {
        fprintf(stderr, "judge-supervisor: must start as root (it drops to uid %d itself)\n",
                SUPERVISOR_UID);
        _exit(2);
    }
    if (prctl(PR_SET_KEEPCAPS, 1) < 0 || become(SUPERVISOR_UID) < 0 ||
        prctl(PR_SET_KEEPCAPS, 0) < 0 || set_caps(all_caps()) < 0)
        die("dropping privileges");
    /* Not dumpable: nothing of another uid may read our memory or descriptors. */
    prctl(PR_SET_DUMPABLE, 0);
}

/* In a child of the run init: the run's uid, no capability left, none to
 * regain (the bounding set is emptied; CAP_SETPCAP, which that needs, goes
 * last). */
static int become_run_user(void) {
    for (size_t i = 0; i < N_CAPS; i++)
        if (prctl(PR_CAPBSET_DROP, supervisor_caps[i], 0, 0, 0) < 0) return -1;
    return become(run_uid) < 0 || set_caps(0) < 0 ? -1 : 0;
}

/* ---- the writable places --------------------------------------------------- */

static int is_empty(const char *path) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *dir = fd < 0 ? NULL : fdopendir(fd);
    if (!dir) return 0;
    struct dirent *e;
    int empty = 1;
    while (empty && (e = readdir(dir)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
    closedir(dir);
    return empty;
}

/* Each gets a new tmpfs for every run, as large (in bytes and inodes) as
 * the container's own mount below it, which no run ever writes. */
static const char *const writable_places[] = {SCRATCH_DIR, TMP_DIR, SHM_DIR};
#define N_PLACES (sizeof writable_places / sizeof *writable_places)
static const char *const read_only_places[] = {"/dev", "/dev/pts"};
#define N_READ_ONLY (sizeof read_only_places / sizeof *read_only_places)

/* Removes everything below the folder open at dirfd without following links.
 * Runs as the run's uid, which may have made folders unreadable: give them
 * back their permissions first. A folder deeper than WIPE_MAX_DEPTH is moved
 * up to the top (top_fd) and wiped on a later pass, so depth costs passes,
 * not stack or descriptors. The inode caps of the tmpfs mounts bound the
 * whole wipe. */
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
            /* Never onto a name the run made: the next free one. */
            for (int tries = 0; tries < 1000; tries++) {
                char name[64];
                snprintf(name, sizeof name, ".wipe-%lu", moved++);
                if (renameat2(dirfd, e->d_name, top_fd, name, RENAME_NOREPLACE) == 0) {
                    more = 1;
                    break;
                }
                if (errno != EEXIST) break;
            }
            continue;
        }
        int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) more |= wipe_below(sub, top_fd, depth + 1);
        unlinkat(dirfd, e->d_name, AT_REMOVEDIR);
    }
    closedir(dir);
    return more;
}

/* Returns 0 when the folder is empty afterwards. */
static int wipe(const char *path) {
    int top = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (top < 0) return -1;
    for (int pass = 0; pass < 10000; pass++) {
        int again = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (again < 0 || !wipe_below(again, top, 0)) break;
    }
    close(top);
    return is_empty(path) ? 0 : -1;
}

/* Whether the run left anything: the working folder a case gets from the
 * run init is not the run's. */
static int run_left_something(void) {
    for (size_t i = 0; i < N_PLACES; i++) {
        DIR *dir = opendir(writable_places[i]);
        if (!dir) return 1;
        struct dirent *e;
        int left = 0;
        while (!left && (e = readdir(dir)) != NULL)
            left = strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
                   !(i == 0 && !strcmp(e->d_name, CASE_DIR + sizeof SCRATCH_DIR));
        closedir(dir);
        if (left) return 1;
    }
    return 0;
}

/* Wipes every writable place the run wrote to, in a child with the run's
 * uid (the run init's uid may not delete a run's files, and should not
 * traverse them); a case's working folder is the run init's (links to the
 * job's files only: the run could not write there) and stays for the next
 * case. 0 when clean. */
static int wipe_all(long long *took_us) {
    long long start = monotonic_us();
    int status = 0; /* a run that left nothing costs no child */
    if (run_left_something()) {
        pid_t pid = fork();
        if (pid < 0) return -1;
        if (pid == 0) {
            if (become_run_user() < 0) _exit(2);
            for (size_t i = 0; i < N_PLACES; i++) wipe(writable_places[i]);
            _exit(0);
        }
        while (waitpid(pid, &status, 0) < 0)
            if (errno != EINTR) return -1;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || run_left_something()) return -1;
    }
    if (took_us) *took_us = monotonic_us() - start;
    return 0;
}

/* Where the run init builds the runs' tree before it moves there (any folder
 * of PID 1's own mounts: the run init's mount over it is its own). */
#define NEW_ROOT SCRATCH_DIR
#define BOX_DIR "/box"
/* The folder the runs' root is made of: the image's copy in memory the host
 * gave (main), else the container's own root. */
static const char *image_root = "/";
/* The run init's: /box of the container (a case's input, an interactive
 * case's FIFOs), which is not in the runs' tree (fresh_places). */
static int box_fd = -1;

/* A tmpfs of `options` mounted on `path`; 0 when done, else `error` says why. */
static int new_tmpfs(const char *path, unsigned long flags, const char *options, char *error,
                     size_t error_len) {
    if (mount("tmpfs", path, "tmpfs", flags, options) == 0) return 0;
    snprintf(error, error_len, "mount %s: %s", path, strerror(errno));
    return -1;
}

/* In the run init, before anything of the run exists: the runs' tree (see
 * the header), where every folder a run may look a name up in is a tmpfs,
 * which keeps no entry for a name that does not exist (a lookup leaves
 * nothing a later one could time), but the job's folder, new for each run
 * init (bind_job). Its root is a bind of image_root: a shared tmpfs whose
 * entries all exist, or, without one, the container's root (whose folders
 * do keep what was looked up: the README's known limits). /dev is the
 * container's, read-only (devices work on a read-only mount as ever; a
 * device anyone may write lets anyone set its times to now, and when a run
 * touched /dev/zero told a later run a value). /dev/mqueue gets an empty
 * read-only tmpfs: on a kernel without Landlock open() there would make a
 * queue in the container's own mqueue. Mounts are made private first, so
 * none reaches PID 1's view. 0 when done; else `error` says what failed. */
static int fresh_places(char *error, size_t error_len) {
    const unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
    const unsigned long read_only = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV;
    char path[256], options[128];
    struct statfs below[N_PLACES];
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
        snprintf(error, error_len, "mount: making the run's mounts private: %s", strerror(errno));
        return -1;
    }
    /* Each writable place as large as the container's own below it. */
    for (size_t i = 0; i < N_PLACES; i++) {
        if (statfs(writable_places[i], &below[i]) < 0) {
            snprintf(error, error_len, "statfs %s: %s", writable_places[i], strerror(errno));
            return -1;
        }
    }
    box_fd = open(BOX_DIR, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (box_fd < 0 || mount(image_root, NEW_ROOT, NULL, MS_BIND, NULL) < 0 ||
        mount(NULL, NEW_ROOT, NULL, read_only, NULL) < 0) {
        snprintf(error, error_len, "the runs' root from %s: %s", image_root, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s/dev", NEW_ROOT);
    if (mount("/dev", path, NULL, MS_BIND | MS_REC, NULL) < 0) {
        snprintf(error, error_len, "mount %s: %s", path, strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < N_READ_ONLY; i++) {
        const unsigned long devices = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC;
        snprintf(path, sizeof path, "%s%s", NEW_ROOT, read_only_places[i]);
        /* /dev/pts may not be a mount of its own (EINVAL) or exist. */
        if (mount(NULL, path, NULL, devices, NULL) < 0 &&
            (i == 0 || (errno != ENOENT && errno != EINVAL))) {
            snprintf(error, error_len, "mount %s read-only: %s", path, strerror(errno));
            return -1;
        }
    }
    for (size_t i = 0; i < N_PLACES; i++) {
        snprintf(path, sizeof path, "%s%s", NEW_ROOT, writable_places[i]);
        snprintf(options, sizeof options, "size=%llu,nr_inodes=%llu,mode=1777,uid=0,gid=0",
                 (unsigned long long)below[i].f_blocks * (unsigned long long)below[i].f_bsize,
                 (unsigned long long)below[i].f_files);
        if (new_tmpfs(path, flags, options, error, error_len) < 0) return -1;
    }
    snprintf(path, sizeof path, "%s%s", NEW_ROOT, MQUEUE_DIR);
    if (mount("tmpfs", path, "tmpfs", flags | MS_RDONLY, "size=4k,nr_inodes=2,mode=0555") < 0 &&
        errno != ENOENT) {
        snprintf(error, error_len, "mount %s: %s", path, strerror(errno));
        return -1;
    }
    /* /proc and /sys are nothing for the run: Landlock keeps their files
     * from being read, but not their paths from being looked up, and a
     * lookup leaves state a later run reads back (a proc inode takes a
     * number from a counter the whole host shares; a sysfs inode keeps the
     * time of its first lookup for the container's life). Each gets an empty
     * tmpfs; /sys's is the supervisor's alone (mode 0700), and holds the
     * namespace's own proc, by its own pids, where the run init reads the
     * run's status and no run can search, and the container's tree until
     * bind_job. /box holds only the job's folder. */
    snprintf(path, sizeof path, "%s/proc", NEW_ROOT);
    if (new_tmpfs(path, flags | MS_RDONLY, "size=4k,nr_inodes=2,mode=0555", error, error_len) < 0)
        return -1;
    snprintf(path, sizeof path, "%s/sys", NEW_ROOT);
    if (new_tmpfs(path, flags, "size=4k,nr_inodes=4,mode=0700", error, error_len) < 0) return -1;
    snprintf(path, sizeof path, "%s%s", NEW_ROOT, PROC_DIR);
    if (mkdir(path, 0500) < 0 ||
        (mount("proc", path, "proc", flags, "subset=pid") < 0 &&
         (errno != EINVAL || mount("proc", path, "proc", flags, NULL) < 0))) {
        snprintf(error, error_len, "mount %s: %s", path, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s%s", NEW_ROOT, BOX_DIR);
    if (new_tmpfs(path, flags, "size=4k,nr_inodes=2,mode=0755", error, error_len) < 0) return -1;
    snprintf(path, sizeof path, "%s%s", NEW_ROOT, JOB_DIR);
    if (mkdir(path, 0755) < 0) {
        snprintf(error, error_len, "mkdir %s: %s", path, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s%s", NEW_ROOT, BOX_DIR);
    if (mount(NULL, path, NULL, read_only | MS_NOEXEC, NULL) < 0) {
        snprintf(error, error_len, "mount %s read-only: %s", path, strerror(errno));
        return -1;
    }
    /* The engine's seccomp profile refuses pivot_root: the new root is
     * moved over the container's, which stays below it, out of reach. */
    if (chdir(NEW_ROOT) < 0 || mount(".", "/", NULL, MS_MOVE, NULL) < 0 || chroot(".") < 0 ||
        chdir("/") < 0) {
        snprintf(error, error_len, "the runs' root: %s", strerror(errno));
        return -1;
    }
    proc_dir = PROC_DIR;
    return 0;
}

/* At the run init's first request, when the host has made the job's folder:
 * it is bound into the runs' tree (from the container's /box, through the
 * run init's descriptor of it). The host makes that folder anew for each
 * job and each fresh run (a TLE's rerun): names a run looked up in it are
 * not there for a later one. */
static int bind_job(char *error, size_t error_len) {
    char source[128];
    snprintf(source, sizeof source, "%s/self/fd/%d/job", PROC_DIR, box_fd);
    if (mount(source, JOB_DIR, NULL, MS_BIND, NULL) < 0 ||
        mount(NULL, JOB_DIR, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) <
            0) {
        snprintf(error, error_len, "the job's folder: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* A file the host named in /box, opened through the run init's descriptor of
 * it: "/dev/null" and names outside /box as they are. */
static int open_box(const char *path, int flags) {
    size_t n = strlen(BOX_DIR);
    if (strncmp(path, BOX_DIR "/", n + 1) != 0) return open(path, flags);
    return openat(box_fd, path + n + 1, flags);
}

/* The working folder links to every entry of the read-only job folder: the
 * program finds its data files and headers beside it and cannot change them.
 * A compile's is made by the run's uid (the compiler writes there), a case's
 * by the run init (nothing, not even an extended attribute, is the run's to
 * write). */
static int populate(const char *workdir) {
    if (mkdir(workdir, 0755) < 0) return -1;
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

/* A case's working folder, made again only when the job's files changed
 * (the host adds the compiled program after the compile). */
static struct stat made_for;
static int case_folder(void) {
    struct stat job;
    if (stat(JOB_DIR, &job) < 0) return -1;
    struct stat now;
    if (lstat(CASE_DIR, &now) == 0 && S_ISDIR(now.st_mode) && now.st_uid == geteuid() &&
        job.st_ino == made_for.st_ino && job.st_mtim.tv_sec == made_for.st_mtim.tv_sec &&
        job.st_mtim.tv_nsec == made_for.st_mtim.tv_nsec &&
        job.st_ctim.tv_sec == made_for.st_ctim.tv_sec &&
        job.st_ctim.tv_nsec == made_for.st_ctim.tv_nsec)
        return 0;
    wipe(CASE_DIR);
    rmdir(CASE_DIR);
    if (populate(CASE_DIR) < 0) return -1;
    made_for = job;
    return 0;
}

/* What the container's memory cgroup holds now, in KiB (page cache and
 * kernel memory included); -1 when unknown. */
static long long read_memory_kb(void) {
    static int fd = -2;
    if (fd == -2) {
        fd = open("/sys/fs/cgroup/memory/memory.usage_in_bytes", O_RDONLY | O_CLOEXEC);
        if (fd < 0) fd = open("/sys/fs/cgroup/memory.current", O_RDONLY | O_CLOEXEC);
    }
    char buf[64];
    if (read_text(fd, buf, sizeof buf) < 0) return -1;
    return strtoll(buf, NULL, 10) / 1024;
}

static long long read_oom_kills(void) {
    /* cgroup v1 exposes the container's counter in memory.oom_control, v2 in
     * memory.events; either is readable from inside, through a descriptor
     * opened once. -1 when neither is. */
    static int fd = -2;
    if (fd == -2) {
        fd = open("/sys/fs/cgroup/memory/memory.oom_control", O_RDONLY | O_CLOEXEC);
        if (fd < 0) fd = open("/sys/fs/cgroup/memory.events", O_RDONLY | O_CLOEXEC);
    }
    char buf[512];
    if (read_text(fd, buf, sizeof buf) < 0) return -1;
    const char *at = strstr(buf, "oom_kill ");
    return at ? strtoll(at + 9, NULL, 10) : -1;
}

/* ---- requests -------------------------------------------------------------- */

static int parse_request(char *buf, size_t len, struct request *rq) {
    memset(rq, 0, sizeof *rq);
    rq->nofile = 64;
    int kind_set = 0;
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
        if (!strcmp(s, "kind")) {
            if (!strcmp(v, "compile")) rq->kind = KIND_COMPILE;
            else if (!strcmp(v, "case")) rq->kind = KIND_CASE;
            else if (!strcmp(v, "reset")) rq->kind = KIND_RESET;
            else if (!strcmp(v, "warm")) rq->kind = KIND_WARM;
            else return -1;
            kind_set = 1;
        } else if (!strcmp(s, "workdir")) rq->workdir = v;
        else if (!strcmp(s, "stdin")) rq->stdin_path = v;
        else if (!strcmp(s, "fifo_in")) rq->fifo_in = v;
        else if (!strcmp(s, "fifo_out")) rq->fifo_out = v;
        else if (!strcmp(s, "clock_in")) rq->clock_in = v;
        else if (!strcmp(s, "clock_out")) rq->clock_out = v;
        else if (!strcmp(s, "artifact")) rq->artifact = v;
        else if (!strcmp(s, "env")) {
            if (rq->nenv >= MAX_ENV) return -1;
            rq->envp[rq->nenv++] = v;
        } else {
            long long n = strtoll(v, NULL, 10);
            if (!strcmp(s, "cpu_ms")) rq->cpu_ms = n;
            else if (!strcmp(s, "wall_ms")) rq->wall_ms = n;
            else if (!strcmp(s, "mem_kb")) rq->mem_kb = n;
            else if (!strcmp(s, "data_kb")) rq->data_kb = n;
            else if (!strcmp(s, "stack_kb")) rq->stack_kb = n;
            else if (!strcmp(s, "fsize")) rq->fsize = n;
            else if (!strcmp(s, "nofile")) rq->nofile = n;
            else if (!strcmp(s, "out_send")) rq->out_send = n;
            else if (!strcmp(s, "err_send")) rq->err_send = n;
            else if (!strcmp(s, "tail_send")) rq->tail_send = n;
            else if (!strcmp(s, "artifact_max")) rq->artifact_max = n;
            else if (!strcmp(s, "next_uid")) rq->next_uid = n;
            else if (!strcmp(s, "fifo_out_first")) rq->fifo_out_first = n;
            else if (!strcmp(s, "fifo_out_max")) rq->fifo_out_max = n;
            else if (!strcmp(s, "fifo_out_drop")) rq->fifo_out_drop = n;
            else if (!strcmp(s, "wall_credit_ms")) rq->wall_credit_ms = n;
            else if (!strcmp(s, "fresh")) rq->fresh = n;
            else if (!strcmp(s, "zygote")) rq->zygote = n;
            else return -1;
        }
    }
    if (kind_set && rq->kind == KIND_RESET)
        return argc == 0 && rq->next_uid >= MIN_RUN_UID && rq->next_uid <= MAX_RUN_UID ? 0 : -1;
    if (kind_set && rq->kind == KIND_WARM) return argc == 0 ? 0 : -1;
    if (!kind_set || !rq->workdir || strncmp(rq->workdir, SCRATCH_DIR "/", sizeof SCRATCH_DIR) != 0)
        return -1;
    if (rq->kind == KIND_CASE && strcmp(rq->workdir, CASE_DIR) != 0) return -1;
    if (argc == 0 || rq->cpu_ms <= 0 || rq->wall_ms <= 0) return -1;
    /* Both or neither, and never with a stdin file. */
    if (!rq->fifo_in != !rq->fifo_out || (rq->fifo_in && rq->stdin_path && *rq->stdin_path))
        return -1;
    /* A clock only beside the FIFOs, one end of it, and a credit only for its reader. */
    if ((rq->clock_in || rq->clock_out) && (!rq->fifo_in || (rq->clock_in && rq->clock_out)))
        return -1;
    if (rq->wall_credit_ms < 0 || (rq->wall_credit_ms && !rq->clock_in)) return -1;
    /* The zygote serves plain cases: no FIFOs, no relay. */
    if (rq->zygote && (rq->kind != KIND_CASE || rq->fifo_in)) return -1;
    return 0;
}


/* ---- seccomp ------------------------------------------------------------------ */

#if defined(__x86_64__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_AARCH64
#else
#error "supervisor: unsupported architecture"
#endif

struct denial {
    unsigned nr;
    int err;
};
#define DENY(name, errno_value) {__NR_##name, errno_value}

/* Newer than some build hosts' headers; the same number on every architecture. */
#define NR_SETXATTRAT 463
#define NR_OPEN_TREE 428
#define NR_MOVE_MOUNT 429
#define NR_FSOPEN 430
#define NR_FSCONFIG 431
#define NR_FSMOUNT 432
#define NR_FSPICK 433
#define NR_PIDFD_OPEN 434
#define NR_PIDFD_GETFD 438
#define NR_MOUNT_SETATTR 442
#define NR_OPEN_TREE_ATTR 467
#define NR_CACHESTAT 451
#define NR_STATMOUNT 457
#define NR_LISTMOUNT 458

/* Refused to compiles and cases alike: reaching another process (ptrace,
 * pidfds), state that outlives a process (System V IPC, POSIX message
 * queues, keys), memory out of sight of the resident set (memory files,
 * sockets, FIFOs, extended attributes, inotify queues, which once held
 * 228 MiB of events under a 64 MiB limit, seccomp filters and Landlock
 * rulesets of one's own, which held 1.5 MiB of data and can write the
 * host's audit log), a descriptor table or namespace of one's own
 * (unshare, setns and mounts: the container lets the supervisor make them,
 * and statmount and listmount would show where the job's folder lies on the
 * host), the kernel's log, flushing the host's disks, what the host's page
 * cache holds (cachestat), and kernel interfaces no judged program needs
 * (io_uring, Linux AIO, whose event count is one for the whole host, bpf,
 * perf). */
#define COMMON_DENIALS                                                                     \
    DENY(ptrace, EPERM), DENY(process_vm_readv, EPERM), DENY(process_vm_writev, EPERM),    \
        {NR_PIDFD_OPEN, EPERM}, {NR_PIDFD_GETFD, EPERM}, DENY(pidfd_send_signal, EPERM),  \
        DENY(shmget, EPERM), DENY(msgget, EPERM), DENY(semget, EPERM), DENY(mq_open, EPERM), \
        DENY(add_key, EPERM), DENY(request_key, EPERM), DENY(keyctl, EPERM),              \
        DENY(memfd_create, EPERM), DENY(memfd_secret, EPERM), DENY(socket, EPERM),        \
        DENY(socketpair, EPERM), DENY(mknodat, EPERM), DENY(userfaultfd, EPERM),           \
        DENY(inotify_init1, EPERM), DENY(fanotify_init, EPERM),                            \
        DENY(io_uring_setup, ENOSYS), DENY(io_uring_enter, ENOSYS),                        \
        DENY(io_uring_register, ENOSYS), DENY(io_setup, ENOSYS), DENY(io_submit, ENOSYS),  \
        DENY(io_getevents, ENOSYS), DENY(io_pgetevents, ENOSYS), DENY(io_cancel, ENOSYS),  \
        DENY(io_destroy, ENOSYS), DENY(bpf, EPERM), DENY(perf_event_open, EPERM),          \
        DENY(unshare, EPERM), DENY(setns, EPERM), DENY(mount, EPERM), DENY(umount2, EPERM), \
        DENY(pivot_root, EPERM), DENY(chroot, EPERM), {NR_OPEN_TREE, EPERM},               \
        {NR_MOVE_MOUNT, EPERM}, {NR_FSOPEN, EPERM}, {NR_FSCONFIG, EPERM},                  \
        {NR_FSMOUNT, EPERM}, {NR_FSPICK, EPERM}, {NR_MOUNT_SETATTR, EPERM},                \
        {NR_OPEN_TREE_ATTR, EPERM}, {NR_STATMOUNT, EPERM}, {NR_LISTMOUNT, EPERM},          \
        {NR_CACHESTAT, EPERM}, DENY(name_to_handle_at, EPERM),                               \
        DENY(open_by_handle_at, EPERM), DENY(syslog, EPERM), DENY(quotactl, EPERM),        \
        DENY(sethostname, EPERM), DENY(setdomainname, EPERM), DENY(sync, EPERM),           \
        DENY(syncfs, EPERM), DENY(setxattr, EPERM), DENY(lsetxattr, EPERM),               \
        DENY(fsetxattr, EPERM), {NR_SETXATTRAT, EPERM}, DENY(clone3, ENOSYS),                \
        DENY(seccomp, EPERM), DENY(landlock_create_ruleset, EPERM),                         \
        DENY(landlock_add_rule, EPERM), DENY(landlock_restrict_self, EPERM)

/* The calls only older architectures have. clone3 says ENOSYS so that libc
 * falls back to clone, whose flags the filter can see (see install_filter). */
static const struct denial compile_denials[] = {
    COMMON_DENIALS,
#ifdef __NR_mknod
    DENY(mknod, EPERM),
#endif
#ifdef __NR_inotify_init
    DENY(inotify_init, EPERM),
#endif
};

/* A case also may not start processes (fork and vfork fail as at a process
 * limit; clone may only make threads), drop pages of files it does not own
 * from the host's page cache (posix_fadvise: the compiler and its
 * precompiled header, which every job reads), set a file's times (they once
 * carried a value to a later run), or make pipes: a pipe's inode number
 * comes from a counter the whole host shares, which a run moved on to tell
 * a later run a value (8 bits, every time), or read the host's memory and
 * processes (sysinfo: what an earlier run left in the page cache, and a live
 * channel between jobs judged at once). */
static const struct denial case_denials[] = {
    COMMON_DENIALS,
#ifdef __NR_pipe
    DENY(pipe, EPERM),
#endif
#ifdef __NR_utime
    DENY(utime, EPERM),
#endif
#ifdef __NR_utimes
    DENY(utimes, EPERM),
#endif
#ifdef __NR_futimesat
    DENY(futimesat, EPERM),
#endif
    DENY(pipe2, EPERM),
    DENY(utimensat, EPERM),
    DENY(sysinfo, EPERM),
    DENY(readahead, EPERM),
#ifdef __NR_mknod
    DENY(mknod, EPERM),
#endif
#ifdef __NR_inotify_init
    DENY(inotify_init, EPERM),
#endif
#ifdef __NR_fork
    DENY(fork, EAGAIN),
#endif
#ifdef __NR_vfork
    DENY(vfork, EAGAIN),
#endif
    DENY(fadvise64, EPERM),
    /* flock: a lock on a file of the image (its copy in memory, which
     * every container shares) is seen by the jobs judged at the same time,
     * a channel between them. */
    DENY(flock, ENOLCK),
};

/* fcntl commands a case may not use: a pipe keeps its default 64 KiB (no
 * place to keep memory), and record locks, which a process may take by the
 * million on one file and read back through a second descriptor (OFD
 * locks), hold memory out of sight too. Nor may it be told of what others
 * do to a file: a directory notice (F_NOTIFY, with the signal F_SETSIG
 * names) on a folder of the image, whose copy in memory every container
 * shares, fires when a run of another job reads a file in it, a live
 * channel between jobs and between the cases of one job (it carried a
 * TLE's answer to its rerun); a lease (F_SETLEASE) when one opens it; and
 * a descriptor's owner (F_SETOWN) is where such signals go. */
static const struct denial case_fcntl_denials[] = {
    {F_SETPIPE_SZ, EPERM}, {F_SETLK, ENOLCK},     {F_SETLKW, ENOLCK}, {F_OFD_SETLK, ENOLCK},
    {F_OFD_SETLKW, ENOLCK}, {F_NOTIFY, EPERM},    {F_SETSIG, EPERM},  {F_SETLEASE, EPERM},
    {F_SETOWN, EPERM},      {F_SETOWN_EX, EPERM},
};
#define N_FCNTL_DENIALS (sizeof case_fcntl_denials / sizeof *case_fcntl_denials)

#define LOAD(field) (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define JUMP(op, k, jt, jf) (struct sock_filter)BPF_JUMP(BPF_JMP | (op) | BPF_K, (k), (jt), (jf))
#define AND(k) (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, (k))
#define RET(action) (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, (action))

/* A linear filter: check the architecture (and, on x86-64, refuse the x32
 * ABI); then clone's flags: for cases threads only, sharing the descriptor
 * table and the filesystem state (with tables of their own, 128
 * descriptors each, threads once kept 172 MiB in pipes), and for both kinds
 * no namespace and no pidfd; prctl's option (no seccomp filter of the run's
 * own); for cases, fcntl's command (case_fcntl_denials) and mmap's flags;
 * then one comparison per refused call. Each check of an argument ends in a
 * verdict: the next check compares the call's number again. */
#define THREAD_FLAGS (CLONE_THREAD | CLONE_FILES | CLONE_FS)
#define CLONE_REFUSED                                                                        \
    (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |           \
     CLONE_NEWPID | CLONE_NEWNET | CLONE_PIDFD)

/* The Python zygote (start_zygote) runs the compiles' rules, but for what
 * its children need before the submission's script runs: to nest a
 * Landlock domain of their own and to add the case's filter, which refuses
 * both again. It runs nothing of the submission's. */
static int zygote_allows(unsigned nr) {
    return nr == __NR_landlock_restrict_self;
}

static size_t build_filter(enum kind kind, struct sock_filter *f) {
    int is_case = kind == KIND_CASE, is_zygote = kind == KIND_ZYGOTE;
    const struct denial *denials = is_case ? case_denials : compile_denials;
    size_t n = is_case ? sizeof case_denials / sizeof *case_denials
                       : sizeof compile_denials / sizeof *compile_denials;
    size_t i = 0;
    f[i++] = LOAD(arch);
    f[i++] = JUMP(BPF_JEQ, AUDIT_ARCH_NATIVE, 1, 0);
    f[i++] = RET(SECCOMP_RET_KILL_PROCESS);
    f[i++] = LOAD(nr);
#if defined(__x86_64__)
    f[i++] = JUMP(BPF_JGE, 0x40000000, 0, 1);
    f[i++] = RET(SECCOMP_RET_KILL_PROCESS);
#endif
    /* The calls whose arguments are checked come first, each ending in a
     * verdict: the kernel's cache cannot allow them by their number, and a
     * case forked from the zygote runs its filter as well as the case's
     * (which is why the zygote's allows fcntl and mmap at once too). */
    f[i++] = JUMP(BPF_JEQ, __NR_clone, 0, 5);
    f[i++] = LOAD(args[0]);
    f[i++] = AND(CLONE_REFUSED | (is_case ? THREAD_FLAGS : 0));
    f[i++] = JUMP(BPF_JEQ, is_case ? THREAD_FLAGS : 0, 0, 1);
    f[i++] = RET(SECCOMP_RET_ALLOW);
    f[i++] = RET(SECCOMP_RET_ERRNO | (is_case ? EAGAIN : EPERM));
    f[i++] = JUMP(BPF_JEQ, __NR_prctl, 0, 4);
    f[i++] = LOAD(args[0]);
    f[i++] = JUMP(BPF_JEQ, PR_SET_SECCOMP, 0, 1);
    f[i++] = RET(is_zygote ? SECCOMP_RET_ALLOW : SECCOMP_RET_ERRNO | EPERM);
    f[i++] = RET(SECCOMP_RET_ALLOW);
    if (is_case) {
        f[i++] = JUMP(BPF_JEQ, __NR_fcntl, 0, 2 + 2 * N_FCNTL_DENIALS);
        f[i++] = LOAD(args[1]);
        for (size_t d = 0; d < N_FCNTL_DENIALS; d++) {
            f[i++] = JUMP(BPF_JEQ, case_fcntl_denials[d].nr, 0, 1);
            f[i++] = RET(SECCOMP_RET_ERRNO | (unsigned)case_fcntl_denials[d].err);
        }
        f[i++] = RET(SECCOMP_RET_ALLOW);
        /* mmap: no shared anonymous memory (it lies in the resident set, but
         * each mapping moves on a host-wide counter that a run reads back
         * as its output's inode number), no huge pages (a mapping moves on
         * another, even when it fails). */
        f[i++] = JUMP(BPF_JEQ, __NR_mmap, 0, 9);
        f[i++] = LOAD(args[3]);
        f[i++] = AND(MAP_ANONYMOUS | MAP_SHARED);
        f[i++] = JUMP(BPF_JEQ, MAP_ANONYMOUS | MAP_SHARED, 0, 1);
        f[i++] = RET(SECCOMP_RET_ERRNO | EPERM);
        f[i++] = LOAD(args[3]);
        f[i++] = AND(MAP_HUGETLB);
        f[i++] = JUMP(BPF_JEQ, MAP_HUGETLB, 0, 1);
        f[i++] = RET(SECCOMP_RET_ERRNO | EPERM);
        f[i++] = RET(SECCOMP_RET_ALLOW);
    } else {
        f[i++] = JUMP(BPF_JEQ, __NR_fcntl, 0, 1);
        f[i++] = RET(SECCOMP_RET_ALLOW);
        f[i++] = JUMP(BPF_JEQ, __NR_mmap, 0, 1);
        f[i++] = RET(SECCOMP_RET_ALLOW);
    }
    for (size_t d = 0; d < n; d++) {
        if (is_zygote && zygote_allows(denials[d].nr)) continue;
        f[i++] = JUMP(BPF_JEQ, denials[d].nr, 0, 1);
        f[i++] = RET(SECCOMP_RET_ERRNO | (unsigned)denials[d].err);
    }
    f[i++] = RET(SECCOMP_RET_ALLOW);
    return i;
}

#define MAX_FILTER (48 + 2 * (sizeof case_denials / sizeof *case_denials + N_FCNTL_DENIALS))
_Static_assert(MAX_FILTER <= SPAWN_MAX_FILTER, "a case's filter fits a zygote's request");

static int install_filter(enum kind kind) {
    struct sock_filter f[MAX_FILTER];
    struct sock_fprog prog = {(unsigned short)build_filter(kind, f), f};
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* ---- Landlock ----------------------------------------------------------------- */

/* The kernel's ABI, spelled out: the build host's headers may predate it. */
#define LL_CREATE_RULESET_VERSION (1u << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_EXECUTE (1ull << 0)
#define LL_WRITE_FILE (1ull << 1)
#define LL_READ_FILE (1ull << 2)
#define LL_READ_DIR (1ull << 3)
#define LL_REMOVE_DIR (1ull << 4)
#define LL_REMOVE_FILE (1ull << 5)
#define LL_MAKE_DIR (1ull << 7)
#define LL_MAKE_REG (1ull << 8)
#define LL_MAKE_SYM (1ull << 12)
#define LL_ALL_ABI1 ((1ull << 13) - 1)
#define LL_REFER (1ull << 13)    /* ABI 2 */
#define LL_TRUNCATE (1ull << 14) /* ABI 3 */
#define LL_IOCTL_DEV (1ull << 15) /* ABI 5 */
#define LL_NET_ALL 3ull           /* ABI 4: bind and connect TCP */
#define LL_SCOPE_ALL 3ull         /* ABI 6: abstract unix sockets, signals */

struct ll_ruleset_attr {
    uint64_t handled_access_fs, handled_access_net, scoped;
};
struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

#define LL_READ (LL_READ_FILE | LL_READ_DIR | LL_EXECUTE)
#define LL_WRITE                                                                           \
    (LL_READ | LL_WRITE_FILE | LL_REMOVE_DIR | LL_REMOVE_FILE | LL_MAKE_DIR | LL_MAKE_REG |  \
     LL_MAKE_SYM | LL_REFER | LL_TRUNCATE)
#define LL_DEVICE (LL_READ_FILE | LL_WRITE_FILE | LL_TRUNCATE)

static int landlock_abi = 0;

static int add_rule(int ruleset, int fd, uint64_t rights, uint64_t handled) {
    struct ll_path_beneath_attr rule = {rights & handled, fd};
    return (int)syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0);
}

static int add_path(int ruleset, const char *path, uint64_t rights, uint64_t handled) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? 0 : -1;
    int r = add_rule(ruleset, fd, rights, handled);
    close(fd);
    return r;
}

/* The top-level folders that are the image's (what runs may read), by name:
 * not /proc, /sys and /dev, nor the places of the job and the runs. */
static int is_image_folder(const char *name) {
    static const char *const not_image[] = {".", "..", "proc", "sys", "dev", "box", "work", "tmp"};
    for (size_t i = 0; i < sizeof not_image / sizeof *not_image; i++)
        if (!strcmp(name, not_image[i])) return 0;
    return 1;
}

/* Reading: every top-level folder of the image but /proc, /sys and /dev
 * (host-wide counters, other processes, the container's cgroup and the
 * host's paths in mountinfo), and the job's files in /box (not the rest of
 * /box: an interactive case's FIFOs are the run init's to open); writing:
 * /tmp, plus /dev/shm for cases (POSIX semaphores) and the working folders
 * for compiles. Everything else handled is denied: making FIFOs, sockets
 * and devices, ioctl on devices, TCP, signals and abstract sockets outside
 * the run. Built by the run init for its run, after its mounts: a rule
 * holds the folder it names, which must be the run's own tmpfs. -1 when it
 * could not be. */
static int build_ruleset(enum kind kind) {
    uint64_t handled = LL_ALL_ABI1;
    if (landlock_abi >= 2) handled |= LL_REFER;
    if (landlock_abi >= 3) handled |= LL_TRUNCATE;
    if (landlock_abi >= 5) handled |= LL_IOCTL_DEV;
    struct ll_ruleset_attr attr = {handled, landlock_abi >= 4 ? LL_NET_ALL : 0,
                                   landlock_abi >= 6 ? LL_SCOPE_ALL : 0};
    size_t size = landlock_abi >= 6 ? sizeof attr : landlock_abi >= 4 ? 16 : 8;
    int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
    if (ruleset < 0) return -1;
    DIR *root = opendir("/");
    if (!root) return -1;
    struct dirent *e;
    int failed = 0;
    while (!failed && (e = readdir(root)) != NULL) {
        struct stat st;
        if (!is_image_folder(e->d_name) ||
            fstatat(dirfd(root), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
            continue; /* links such as /bin -> usr/bin are covered by their target */
        int fd = openat(dirfd(root), e->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        failed = fd < 0 || add_rule(ruleset, fd, LL_READ, handled) < 0;
        if (fd >= 0) close(fd);
    }
    closedir(root);
    /* Not /dev/zero: a shared mapping of it is shared anonymous memory
     * (see install_filter). */
    static const char *const devices[] = {"/dev/null", "/dev/full", "/dev/random", "/dev/urandom"};
    for (size_t i = 0; i < sizeof devices / sizeof *devices; i++)
        failed |= add_path(ruleset, devices[i], LL_DEVICE, handled) < 0;
    failed |= add_path(ruleset, JOB_DIR, LL_READ, handled) < 0;
    failed |= add_path(ruleset, TMP_DIR, LL_WRITE, handled) < 0;
    if (kind == KIND_CASE) {
        failed |= add_path(ruleset, SCRATCH_DIR, LL_READ, handled) < 0;
        failed |= add_path(ruleset, SHM_DIR, LL_WRITE, handled) < 0;
    } else {
        failed |= add_path(ruleset, SCRATCH_DIR, LL_WRITE, handled) < 0;
    }
    if (failed) {
        close(ruleset);
        return -1;
    }
    return ruleset;
}

/* Kernels without Landlock run without it (the README says what that costs). */
static void prepare_landlock(void) {
    int abi = (int)syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    if (abi < 0) {
        if (errno == ENOSYS || errno == EOPNOTSUPP) return;
        die("landlock");
    }
    landlock_abi = abi;
}

/* ---- one run --------------------------------------------------------------- */

/* Signals a run's uid may have queued at once, timers included (each holds
 * one): kernel memory out of sight of the run's resident set otherwise. */
#define MAX_PENDING_SIGNALS 64

/* A run's resource limits (as the zygote's request carries them). RLIMIT_CPU
 * is whole seconds: a backstop one second past the limit; the supervisor
 * itself stops the run at the limit, to the millisecond. No core dumps, no
 * message queues. */
static void run_limits(const struct request *rq, struct spawn_limit limits[SPAWN_LIMITS]) {
    /* A request's 0 leaves a limit as it is, its -1 (a stack's) lifts it. */
#define LIMIT(resource, value) \
    {resource, 0, (value) == 0 ? SPAWN_INHERIT : (value) < 0 ? SPAWN_INFINITY : (value)}
    const struct spawn_limit made[SPAWN_LIMITS] = {
        LIMIT(RLIMIT_CPU, (rq->cpu_ms + 999) / 1000 + 1),
        LIMIT(RLIMIT_DATA, rq->data_kb * 1024),
        LIMIT(RLIMIT_STACK, rq->stack_kb < 0 ? -1 : rq->stack_kb * 1024),
        LIMIT(RLIMIT_FSIZE, rq->fsize),
        LIMIT(RLIMIT_NOFILE, rq->nofile),
        LIMIT(RLIMIT_SIGPENDING, MAX_PENDING_SIGNALS),
        {RLIMIT_CORE, 0, 0},
        {RLIMIT_MSGQUEUE, 0, 0},
    };
#undef LIMIT
    memcpy(limits, made, sizeof made);
}

/* In the run init's child, between fork and exec: no allocation, no stdio. */
static void exec_child(const struct request *rq, int ruleset, int in_fd, int out_fd, int err_fd,
                       int report_fd) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setsid();
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) goto fail;
    /* The OOM killer's first choice, before the supervisors (score 0); Landlock keeps
     * the run from lowering it again. /proc/self is writable by our uid only
     * while we are dumpable. */
    prctl(PR_SET_DUMPABLE, 1);
    if (write_oom_score_adj("1000") < 0) goto fail;
    struct spawn_limit limits[SPAWN_LIMITS];
    run_limits(rq, limits);
    if (spawn_apply_limits(limits) < 0) goto fail;
    if (become_run_user() < 0) goto fail;
    if ((rq->kind == KIND_COMPILE && populate(rq->workdir) < 0) || chdir(rq->workdir) < 0)
        goto fail;
    umask(022);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) goto fail;
    if (ruleset >= 0 && syscall(__NR_landlock_restrict_self, ruleset, 0) < 0) goto fail;
    if (install_filter(rq->kind) < 0) goto fail;
    execvpe(rq->argv[0], rq->argv, rq->envp);
fail:;
    int err = errno;
    write_all(report_fd, &err, sizeof err);
    _exit(127);
}

static void record_end(struct outcome *oc, int status, const struct rusage *ru,
                       struct rusage *main_ru) {
    *main_ru = *ru;
    oc->exited = WIFEXITED(status);
    oc->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    oc->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

/* Only an exit or a death by signal ends the main process: wait4 without
 * WUNTRACED reports stops only of traced children, and those are not ends. */
static int is_end(int status) {
    return WIFEXITED(status) || WIFSIGNALED(status);
}

/* An interactive run's relay (start_relay): a child of the run init, not of the run. */
struct relay {
    pid_t pid; /* -1: none */
    int done, over, broken;
    struct rusage ru; /* its own CPU time, which is not the run's */
};
#define RELAY_OVER 2
#define RELAY_BROKEN 3

static void relay_ended(struct relay *r, int status, const struct rusage *ru) {
    r->done = 1;
    r->over = WIFEXITED(status) && WEXITSTATUS(status) == RELAY_OVER;
    r->broken = WIFEXITED(status) && WEXITSTATUS(status) == RELAY_BROKEN;
    r->ru = *ru;
}

/* The run init's Python zygote (start_zygote), and the CPU time of one
 * that ended since a run's measurement began: the zygote's own time is no
 * run's. */
static struct {
    pid_t pid; /* -1: none */
    int sock;
    int unusable; /* it failed: this run init execs its runs from now on */
    int argc, nenv;
    long long stack_kb;
    char key[MAX_REQUEST]; /* the argv and environment it was started with */
    size_t key_len;
} zygote = {.pid = -1, .sock = -1};
static long long zygote_ended_cpu_us;

/* A child reaped that is neither a run's main process nor its relay. */
static void reaped_other(pid_t pid, const struct rusage *ru) {
    if (pid != zygote.pid) return;
    zygote_ended_cpu_us += rusage_cpu_us(ru);
    zygote.pid = -1;
    zygote.unusable = 1;
    if (zygote.sock >= 0) close(zygote.sock);
    zygote.sock = -1;
}

static void kill_and_reap_all(pid_t main_pid, struct outcome *oc, int *main_done,
                              struct rusage *main_ru, struct relay *relay) {
    for (;;) {
        kill(-1, SIGKILL);
        int status;
        struct rusage ru;
        pid_t pid = wait4(-1, &status, __WALL, &ru);
        if (pid < 0) {
            if (errno == EINTR) continue;
            break; /* ECHILD: nothing of this run is left */
        }
        if (pid == main_pid && !*main_done && is_end(status)) {
            *main_done = 1;
            record_end(oc, status, &ru, main_ru);
        } else if (relay && pid == relay->pid && !relay->done) {
            relay_ended(relay, status, &ru);
        } else {
            reaped_other(pid, &ru);
        }
    }
}

/* What an interactive run writes reaches its peer through a relay, a child
 * of the run init that copies it from a pipe (the run's stdout) into the FIFO:
 * - for the program, it counts, and past `max` bytes it stops (the run is
 *   then stopped: OLE). A pipe has no file size limit, and a program flooding
 *   its peer would make the peer run out of its own limits, the judge's
 *   failure. It copies, so the peer reads a stream, never the program's
 *   packets (a pipe in O_DIRECT mode) one by one;
 * - for the interactor (`drop`), once the program has gone it drops what the
 *   interactor writes: its writes never fail, so what it decides (its exit
 *   code) does not hang on how the two ended in time.
 * It runs as the supervisor's uid, out of the run's reach, with no capability, and
 * holds nothing but its two pipes (a copy of the run's stdin would keep the
 * peer's writes to a gone run from failing). *write_end is the run's stdout. */
static int start_relay(struct relay *r, int to, long long max, int drop, int *write_end) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) return -1;
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        int from = fcntl(p[0], F_DUPFD, 10), peer = fcntl(to, F_DUPFD, 10);
        if (from < 0 || peer < 0 || dup2(from, 3) < 0 || dup2(peer, 4) < 0 || set_caps(0) < 0)
            _exit(RELAY_BROKEN);
        for (int fd = 0; fd < 3; fd++) close(fd);
        if (syscall(SYS_close_range, 5, ~0U, 0) < 0)
            for (int fd = 5; fd < 65536; fd++) close(fd);
        struct sigaction ignore = {.sa_handler = SIG_IGN};
        sigaction(SIGPIPE, &ignore, NULL);
        static char buf[1 << 16];
        long long total = 0;
        int gone = 0;
        for (;;) {
            ssize_t n = read(3, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) _exit(0); /* the run's end */
            total += n;
            if (max > 0 && total > max) _exit(RELAY_OVER);
            for (ssize_t done = 0; !gone && done < n;) {
                ssize_t w = write(4, buf + done, (size_t)(n - done));
                if (w < 0 && errno == EINTR) continue;
                if (w < 0 && !drop) _exit(0); /* the peer's end: the run's writes fail */
                if (w < 0) gone = 1;
                else done += w;
            }
        }
    }
    close(p[0]);
    r->pid = pid;
    r->done = r->over = r->broken = 0;
    *write_end = p[1];
    return 0;
}

static long long process_cpu_us(pid_t pid) {
    clockid_t clk;
    struct timespec ts;
    if (clock_getcpuclockid(pid, &clk) != 0 || clock_gettime(clk, &ts) != 0) return -1;
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* `key` (e.g. "VmRSS:") of a status file's text, in KiB; -1 when absent. */
static long long status_kb(const char *text, const char *key) {
    const char *at = strstr(text, key);
    return at ? strtoll(at + strlen(key), NULL, 10) : -1;
}

/* What the run holds now, in KiB: its resident set and its page tables
 * (mapping the shared zero page costs no resident memory, only page tables),
 * or its peak resident set when that is larger. A main thread that exited
 * alone leaves a status without memory lines: then a live thread's. -1 when
 * unknown. */
static long long memory_kb(int status_fd, pid_t pid) {
    char buf[4096];
    if (read_text(status_fd, buf, sizeof buf) < 0) return -1;
    if (!strstr(buf, "\nVmRSS:")) {
        char path[64];
        snprintf(path, sizeof path, "%s/%d/task", proc_dir, (int)pid);
        DIR *tasks = opendir(path);
        struct dirent *e;
        int found = 0;
        while (tasks && !found && (e = readdir(tasks)) != NULL) {
            if (e->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%d/task/%.20s/status", proc_dir, (int)pid,
                     e->d_name);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            found = read_text(fd, buf, sizeof buf) == 0 && strstr(buf, "\nVmRSS:");
            if (fd >= 0) close(fd);
        }
        if (tasks) closedir(tasks);
        if (!found) return -1;
    }
    long long rss = status_kb(buf, "\nVmRSS:"), tables = status_kb(buf, "\nVmPTE:");
    long long peak = status_kb(buf, "\nVmHWM:"), now = rss + (tables > 0 ? tables : 0);
    return peak > now ? peak : now;
}

/* ---- an interactive run's pipes ----------------------------------------------- */

static void on_alarm(int sig) {
    (void)sig; /* only to interrupt a blocked open */
}

/* An interactive run talks to a run in another container through two FIFOs
 * the host made. Opening a FIFO waits for its other end: both supervisors
 * open the FIFO towards the program first (the request says which of ours
 * that is), so each open meets the peer's and neither waits on the other,
 * and a run starts only when both of its ends have a peer, so it never reads
 * an end of file that is only the peer not being there yet. A peer that never
 * comes (its container failed) costs at most the run's wall bound: a timer,
 * repeating so that a tick just before an open cannot be missed, interrupts
 * the wait. */
static int open_fifos(const struct request *rq, int *in_fd, int *out_fd, char *error,
                      size_t error_len) {
    long long deadline = monotonic_us() + rq->wall_ms * 1000;
    struct itimerval tick = {{0, 50000}, {0, 50000}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &tick, NULL);
    *in_fd = *out_fd = -1;
    for (int i = 0; i < 2; i++) {
        int out = (i == 0) == (rq->fifo_out_first != 0);
        int fd;
        do {
            fd = open_box(out ? rq->fifo_out : rq->fifo_in,
                      (out ? O_WRONLY : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
        } while (fd < 0 && errno == EINTR && monotonic_us() < deadline);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode)) {
            snprintf(error, error_len, "%s: %s", out ? "fifo_out" : "fifo_in",
                     fd < 0 && errno == EINTR ? "the other side never opened it"
                                              : fd < 0 ? strerror(errno) : "not a FIFO");
            if (fd >= 0) close(fd);
            break;
        }
        *(out ? out_fd : in_fd) = fd;
    }
    setitimer(ITIMER_REAL, &off, NULL);
    if (*in_fd >= 0 && *out_fd >= 0) return 0;
    if (*in_fd >= 0) close(*in_fd);
    if (*out_fd >= 0) close(*out_fd);
    return -1;
}

/* The interactor's CPU time, as its run init tells the program's through
 * the clock FIFO (both ends non-blocking: neither side ever waits on it):
 * the program's wall bound grows by it, since the program waits while the
 * interactor thinks. A silent pair (a program that sleeps, an interactor
 * waiting for it) adds nothing. */
struct clock {
    int fd; /* -1: none */
    long long told_us; /* the writer's: what it last wrote; the reader's: the most read */
};

static void clock_tell(struct clock *c, long long cpu_us) {
    /* A full pipe or a gone reader loses a value: a later one says more. */
    if (c->fd >= 0 && cpu_us >= c->told_us + 1000 &&
        write(c->fd, &cpu_us, sizeof cpu_us) == (ssize_t)sizeof cpu_us)
        c->told_us = cpu_us;
}

static long long clock_heard(struct clock *c) {
    long long v;
    while (c->fd >= 0 && read(c->fd, &v, sizeof v) == (ssize_t)sizeof v)
        if (v > c->told_us) c->told_us = v;
    return c->told_us;
}

/* Whether a process but `pid` and `also` (PID 1 of the namespace, and one
 * more: a run init's zygote) is in the namespace whose proc is `proc`. */
static int others_in(const char *proc, long pid, long also) {
    DIR *dir = opendir(proc);
    if (!dir) return 1;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(dir)) != NULL) {
        char *end;
        long other = strtol(e->d_name, &end, 10);
        found = *end == '\0' && e->d_name[0] != '\0' && other != pid && other != also;
    }
    closedir(dir);
    return found;
}

/* ---- the Python zygote ------------------------------------------------------- */

/* A job's Python cases are forked from an interpreter started once for the
 * job (python_zygote.c says what a case sees, and how it is made): a run
 * init starts it at the job's first case that may be served so, with that
 * case's argv and environment, and serves from it the job's later cases with
 * the same argv and environment. Everything else about a case is as ever:
 * its descriptors, limits, Landlock rules and seccomp filter (all the run
 * init's, sent with the request), its measurement, its end. It needs
 * Landlock's scopes (ABI 6): a case's process, in a domain nested in the
 * zygote's, cannot signal it, so no case reaches a later one through it.
 * Whatever goes wrong with it (an image without it, no answer in time,
 * anything of a run left beside it) ends it, and everything of the run
 * with it, and the run init execs its runs as ever from then on; a case
 * that may have run meanwhile (on its input) fails, for the host to try
 * again in a fresh sandbox (run). */
#define ZYGOTE_ANSWER_MS 10000
#define ZYGOTE_MIN_LANDLOCK 6

static size_t zygote_key(const struct request *rq, char *key, size_t size) {
    size_t n = 0;
    for (int k = 0; k < 2; k++) {
        char *const *strings = k ? rq->envp : rq->argv;
        for (int i = 0; strings[i]; i++) {
            size_t len = strlen(strings[i]) + 1;
            if (n + len > size) return 0;
            memcpy(key + n, strings[i], len);
            n += len;
        }
    }
    return n;
}

static int argc_of(char *const *strings) {
    int n = 0;
    while (strings[n]) n++;
    return n;
}

/* An answer of the zygote's, within ZYGOTE_ANSWER_MS: 0; -1 without one;
 * ZYGOTE_GONE when its socket was closed (the zygote has died). */
#define ZYGOTE_GONE 1
static int zygote_answer(int32_t *value) {
    struct pollfd p = {zygote.sock, POLLIN, 0};
    int ready;
    do {
        ready = poll(&p, 1, ZYGOTE_ANSWER_MS);
    } while (ready < 0 && errno == EINTR);
    if (ready != 1) return -1;
    ssize_t n = recv(zygote.sock, value, sizeof *value, MSG_DONTWAIT);
    if (n == (ssize_t)sizeof *value) return 0;
    /* Closed; or closed with our request unread, which resets the socket. */
    return n == 0 || (n < 0 && errno == ECONNRESET) ? ZYGOTE_GONE : -1;
}

/* Every process of the namespace but this run init killed and reaped, the
 * zygote with them: nothing of a half-made case is left. */
static void zygote_broken(void) {
    struct outcome oc;
    struct rusage ru;
    int done = 1;
    kill_and_reap_all(-1, &oc, &done, &ru, NULL);
    zygote.unusable = 1;
}

/* ZYGOTE_UID with CAP_SETUID, CAP_SETGID and CAP_SETPCAP alone, kept
 * across its exec (ambient; its bounding set nothing more): its children
 * become the run's uid and drop all three, from the bounding set too,
 * before anything of the submission runs. A uid apart from the runs':
 * prlimit, setpriority, sched_setaffinity and ioprio_set check only the
 * uid, and a case that reached the zygote so (its nice value, its limits)
 * would reach every later case of the job. */
static int become_zygote(void) {
    const uint32_t keep = (1u << CAP_SETUID) | (1u << CAP_SETGID) | (1u << CAP_SETPCAP);
    for (size_t i = 0; i < N_CAPS; i++)
        if (!(keep & (1u << supervisor_caps[i])) &&
            prctl(PR_CAPBSET_DROP, supervisor_caps[i], 0, 0, 0) < 0)
            return -1;
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2] = {{keep, keep, keep}, {0, 0, 0}};
    if (become(ZYGOTE_UID) < 0 || syscall(SYS_capset, &header, data) < 0 ||
        prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_SETUID, 0, 0) < 0 ||
        prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_SETGID, 0, 0) < 0 ||
        prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_SETPCAP, 0, 0) < 0)
        return -1;
    return 0;
}

/* In the zygote's process, between fork and exec: the run's own command
 * (python3 main.py) and environment, with ZYGOTE_MARKER, as ZYGOTE_UID
 * (become_zygote), with the zygote's filter and its socket and ruleset on
 * ZYGOTE_SOCKET_FD and ZYGOTE_RULESET_FD, and the run's stack limit (which
 * sets, at exec, the layout of its memory and glibc's threads' stacks). */
static void zygote_child(const struct request *rq, int ruleset, int sock) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setsid();
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) _exit(127);
    prctl(PR_SET_DUMPABLE, 1);
    struct spawn_limit limits[SPAWN_LIMITS];
    run_limits(rq, limits);
    struct rlimit none_at_all = {0, 0};
    if (write_oom_score_adj("1000") < 0 || setrlimit(RLIMIT_CORE, &none_at_all) < 0 ||
        setrlimit(RLIMIT_MSGQUEUE, &none_at_all) < 0 || become_zygote() < 0 ||
        chdir(rq->workdir) < 0)
        _exit(127);
    for (int i = 0; i < SPAWN_LIMITS; i++)
        if (limits[i].resource == RLIMIT_STACK && spawn_apply_limit(&limits[i]) < 0) _exit(127);
    umask(022);
    int s = fcntl(sock, F_DUPFD, 10), r = fcntl(ruleset, F_DUPFD, 10);
    if (s < 0 || r < 0 || dup2(s, ZYGOTE_SOCKET_FD) < 0 || dup2(r, ZYGOTE_RULESET_FD) < 0 ||
        syscall(SYS_close_range, ZYGOTE_RULESET_FD + 1, ~0U, 0) < 0)
        _exit(127);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
        syscall(__NR_landlock_restrict_self, ZYGOTE_RULESET_FD, 0) < 0 ||
        install_filter(KIND_ZYGOTE) < 0)
        _exit(127);
    char *envp[MAX_ENV + 2];
    int n = 0;
    for (; rq->envp[n]; n++) envp[n] = rq->envp[n];
    envp[n++] = ZYGOTE_MARKER "=1";
    envp[n] = NULL;
    execvpe(rq->argv[0], rq->argv, envp);
    _exit(127);
}

/* The zygote, started with `rq`'s argv and environment; -1 when it could not be. */
static int start_zygote(const struct request *rq, int ruleset) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return -1;
    pid_t pid = fork();
    if (pid == 0) zygote_child(rq, ruleset, sv[1]);
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        return -1;
    }
    zygote.pid = pid;
    zygote.sock = sv[0];
    int32_t ready;
    if (zygote_answer(&ready) != 0 || ready != ZYGOTE_READY) {
        zygote_broken();
        return -1;
    }
    zygote.key_len = zygote_key(rq, zygote.key, sizeof zygote.key);
    zygote.argc = argc_of(rq->argv);
    zygote.nenv = rq->nenv;
    zygote.stack_kb = rq->stack_kb;
    return 0;
}

/* Whether the zygote serves `rq` (starting it for the job's first such case). */
static int zygote_serves(const struct request *rq, int ruleset) {
    if (!rq->zygote || zygote.unusable || landlock_abi < ZYGOTE_MIN_LANDLOCK || ruleset < 0)
        return 0;
    if (zygote.pid < 0) {
        /* Without the hook python3 would run the script as the zygote. */
        if (access(ZYGOTE_HOOK, R_OK) < 0) {
            zygote.unusable = 1;
            return 0;
        }
        return start_zygote(rq, ruleset) == 0;
    }
    static char key[MAX_REQUEST];
    size_t len = zygote_key(rq, key, sizeof key);
    return len > 0 && len == zygote.key_len && argc_of(rq->argv) == zygote.argc &&
           rq->nenv == zygote.nenv && rq->stack_kb == zygote.stack_kb &&
           memcmp(key, zygote.key, len) == 0;
}

/* The case's process, forked by the zygote with these descriptors and
 * `rq`'s limits, rules and filter, and adopted by this run init: its pid;
 * -1 when no process of the case exists (the request was not taken, or the
 * zygote could not fork); -2 when one may have run, with these descriptors
 * (no answer came, or the zygote does not know). Either way the caller
 * ends the zygote. */
static pid_t zygote_spawn(const struct request *rq, int in_fd, int out_fd, int err_fd,
                          int report_fd) {
    static struct spawn sp;
    memset(&sp, 0, sizeof sp);
    sp.magic = SPAWN_MAGIC;
    sp.uid = run_uid;
    run_limits(rq, sp.limits);
    if (snprintf(sp.workdir, sizeof sp.workdir, "%s", rq->workdir) >= (int)sizeof sp.workdir)
        return -1;
    sp.filter_len = (uint32_t)build_filter(KIND_CASE, sp.filter);
    int fds[SPAWN_FDS] = {in_fd, out_fd, err_fd, report_fd};
    char control[CMSG_SPACE(sizeof fds)];
    memset(control, 0, sizeof control);
    struct iovec iov = {&sp, sizeof sp};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                         .msg_controllen = sizeof control};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(c), fds, sizeof fds);
    int32_t pid;
    if (sendmsg(zygote.sock, &msg, MSG_NOSIGNAL) != (ssize_t)sizeof sp) return -1;
    int answered = zygote_answer(&pid);
    /* A zygote that died without an answer made nothing of the case when
     * nothing but it is in the namespace: a process of the case, alive or
     * not, is this run init's own (adopted) and not reaped yet. */
    if (answered == ZYGOTE_GONE) return others_in(proc_dir, 1, zygote.pid) ? -2 : -1;
    if (answered < 0 || pid == ZYGOTE_UNKNOWN) return -2;
    return pid > 1 ? pid : -1;
}

/* The end of a case from the zygote: its process (which can start no
 * other: threads only) killed and reaped. Anything else of the namespace's
 * but the zygote ends the zygote and everything with it. */
static void end_zygote_case(pid_t pid, struct outcome *oc, int *main_done, struct rusage *main_ru) {
    kill(pid, SIGKILL);
    while (!*main_done) {
        int status;
        struct rusage ru;
        pid_t reaped = wait4(pid, &status, __WALL, &ru);
        if (reaped < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (is_end(status)) {
            *main_done = 1;
            record_end(oc, status, &ru, main_ru);
        }
    }
    int status;
    struct rusage ru;
    pid_t reaped;
    while ((reaped = wait4(-1, &status, WNOHANG | __WALL, &ru)) > 0) reaped_other(reaped, &ru);
    if (others_in(proc_dir, 1, zygote.pid)) {
        kill_and_reap_all(pid, oc, main_done, main_ru, NULL);
        zygote.unusable = 1;
    }
}

static int run(const struct request *rq, int ruleset, struct outcome *oc, int out_fd, int err_fd,
               char *error, size_t error_len) {
    memset(oc, 0, sizeof *oc);
    if (rq->kind == KIND_CASE && case_folder() < 0) {
        snprintf(error, error_len, "populate: %s", strerror(errno));
        return -1;
    }
    /* Started (at the job's first such case) before anything of this run's
     * exists: it holds nothing of it. */
    int from_zygote = zygote_serves(rq, ruleset);
    int in_fd, run_out = -1; /* our copy of the run's stdout, when it is a pipe */
    struct relay relay = {.pid = -1, .done = 1};
    /* The reader opens first: the writer opens once the FIFOs have met, so
     * by then it is there (else the writer's open fails and tells nothing). */
    struct clock clock = {-1, 0};
    if (rq->clock_in)
        clock.fd = open_box(rq->clock_in, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (rq->fifo_in) {
        int fifo_out;
        if (open_fifos(rq, &in_fd, &fifo_out, error, error_len) < 0) return -1;
        if (rq->clock_out)
            clock.fd = open_box(rq->clock_out, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
        if (start_relay(&relay, fifo_out, rq->fifo_out_max, (int)rq->fifo_out_drop, &run_out) < 0)
            die("pipe2");
        close(fifo_out); /* the relay's now */
        out_fd = run_out;
    } else {
        in_fd = open_box(rq->stdin_path && *rq->stdin_path ? rq->stdin_path : "/dev/null",
                     O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (in_fd < 0) {
            snprintf(error, error_len, "stdin: %s", strerror(errno));
            return -1;
        }
    }
    int report[2];
    if (pipe2(report, O_CLOEXEC) < 0) die("pipe2");

    long long oom_before = read_oom_kills();
    struct rusage children_before, children_after, main_ru;
    getrusage(RUSAGE_CHILDREN, &children_before);
    zygote_ended_cpu_us = 0;
    memset(&main_ru, 0, sizeof main_ru);

    long long start = monotonic_us();
    pid_t pid = -1;
    if (from_zygote && (pid = zygote_spawn(rq, in_fd, out_fd, err_fd, report[1])) < 0) {
        zygote_broken();
        if (pid == -2) {
            /* The case may have read its input and written its outputs:
             * it is not run again on them here (the host tries it anew). */
            close(report[0]);
            close(report[1]);
            close(in_fd);
            snprintf(error, error_len, "the Python zygote did not answer");
            return -1;
        }
        /* Nothing of the case ran, and what that ended is not this run's:
         * it starts again, exec'd. */
        from_zygote = 0;
        getrusage(RUSAGE_CHILDREN, &children_before);
        zygote_ended_cpu_us = 0;
        start = monotonic_us();
    }
    if (!from_zygote) {
        pid = fork();
        if (pid < 0) die("fork");
        if (pid == 0) exec_child(rq, ruleset, in_fd, out_fd, err_fd, report[1]);
    }
    close(report[1]);
    close(in_fd);
    /* The run (and the relay) hold the only copies now: their end is the
     * peer's end of file. */
    if (run_out >= 0) close(run_out);

    int exec_errno = 0;
    if (read(report[0], &exec_errno, sizeof exec_errno) != (ssize_t)sizeof exec_errno)
        exec_errno = 0;
    close(report[0]);

    char status_path[64];
    snprintf(status_path, sizeof status_path, "%s/%d/status", proc_dir, (int)pid);
    int status_fd = rq->mem_kb > 0 ? open(status_path, O_RDONLY | O_CLOEXEC) : -1;

    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    long long wall_deadline = start + rq->wall_ms * 1000;
    long long cpu_limit_us = rq->cpu_ms * 1000;
    int main_done = 0;
    long long peak_held = 0;
    while (!main_done) {
        if (rq->clock_in) {
            long long credit = clock_heard(&clock);
            if (credit > rq->wall_credit_ms * 1000) credit = rq->wall_credit_ms * 1000;
            wall_deadline = start + rq->wall_ms * 1000 + credit;
        }
        int status;
        struct rusage ru;
        pid_t reaped;
        while ((reaped = wait4(-1, &status, WNOHANG | __WALL, &ru)) > 0) {
            if (reaped == pid && is_end(status)) {
                main_done = 1;
                record_end(oc, status, &ru, &main_ru);
            } else if (reaped == relay.pid && !relay.done) {
                relay_ended(&relay, status, &ru);
            } else {
                reaped_other(reaped, &ru);
            }
        }
        if (relay.over) {
            oc->out_over = 1;
            break;
        }
        if (main_done) break;
        long long now = monotonic_us();
        if (now >= wall_deadline) {
            oc->wall_timeout = 1;
            break;
        }
        long long cpu = process_cpu_us(pid);
        if (rq->clock_out) clock_tell(&clock, cpu);
        if (cpu >= 0 && cpu > cpu_limit_us) {
            oc->cpu_timeout = 1;
            break;
        }
        if (rq->mem_kb > 0) {
            long long held = memory_kb(status_fd, pid);
            if (held > peak_held) peak_held = held;
            if (held > rq->mem_kb) {
                oc->mem_exceeded = 1;
                break;
            }
        }
        /* Sleep until the child exits, or until the earliest moment it could
         * have used up its CPU time (it cannot burn CPU faster than the wall
         * clock per thread), the next look at its memory, or the wall
         * deadline. */
        long long wait_us = wall_deadline - now;
        long long cpu_left = cpu >= 0 ? cpu_limit_us - cpu + 1000 : 5000;
        if (cpu_left < 5000) cpu_left = 5000;
        if (cpu_left < wait_us) wait_us = cpu_left;
        if ((rq->mem_kb > 0 || clock.fd >= 0) && MEMORY_POLL_US < wait_us) wait_us = MEMORY_POLL_US;
        struct timespec ts = {wait_us / 1000000, (wait_us % 1000000) * 1000};
        sigtimedwait(&chld, NULL, &ts);
    }
    /* The run's time ends here, whatever the relay still has to do. */
    long long ended = monotonic_us();
    /* What the program wrote last is still on its way to the peer: the relay
     * ends once it has passed it on, within the wall bound. */
    while (main_done && !relay.done && monotonic_us() < wall_deadline) {
        int status;
        struct rusage ru;
        if (wait4(relay.pid, &status, WNOHANG | __WALL, &ru) == relay.pid) {
            relay_ended(&relay, status, &ru);
            break;
        }
        long long wait_us = wall_deadline - monotonic_us();
        struct timespec ts = {wait_us / 1000000, (wait_us % 1000000) * 1000};
        sigtimedwait(&chld, NULL, &ts);
    }
    /* Words still on their way at the bound: the conversation did not end
     * within it (and what is left uncounted may be over the limit). */
    if (main_done && !relay.done) oc->wall_timeout = 1;
    if (from_zygote) end_zygote_case(pid, oc, &main_done, &main_ru);
    else kill_and_reap_all(pid, oc, &main_done, &main_ru, &relay);
    oc->from_zygote = from_zygote;
    if (clock.fd >= 0) close(clock.fd);
    oc->out_over |= relay.over;
    if (status_fd >= 0) close(status_fd);
    oc->wall_us = ended - start;
    getrusage(RUSAGE_CHILDREN, &children_after);
    oc->cpu_us = rusage_cpu_us(&children_after) - rusage_cpu_us(&children_before) -
                 (relay.pid > 0 ? rusage_cpu_us(&relay.ru) : 0) - zygote_ended_cpu_us;
    oc->maxrss_kb = main_ru.ru_maxrss > peak_held ? main_ru.ru_maxrss : peak_held;
    long long oom_after = read_oom_kills();
    oc->oom_kills = (oom_before >= 0 && oom_after >= 0) ? oom_after - oom_before : 0;
    if (exec_errno) {
        snprintf(error, error_len, "exec %s: %s", rq->argv[0], strerror(exec_errno));
        return -1;
    }
    if (relay.broken) {
        snprintf(error, error_len, "the relay of the run's output could not start");
        return -1;
    }
    return 0;
}

/* ---- the host's page cache ----------------------------------------------------- */

/* Reads every regular file below the folder open at dirfd, links never
 * followed. */
static void warm_below(int dirfd, long long *files, long long *bytes) {
    DIR *dir = fdopendir(dirfd);
    if (!dir) {
        close(dirfd);
        return;
    }
    static char buf[1 << 20];
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        struct stat st;
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
        if (S_ISDIR(st.st_mode)) {
            int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) warm_below(sub, files, bytes);
            continue;
        }
        if (!S_ISREG(st.st_mode)) continue;
        int fd = openat(dirfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) continue; /* not readable by the supervisor: nor by a run */
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0) *bytes += n;
        close(fd);
        (*files)++;
    }
    closedir(dir);
}

/* The host's page cache holds the image's files for every container of the
 * image: a run that reads a page nobody had read left it cached, and a
 * later run (a rerun, another job, in any container) could tell which pages
 * were by timing a read (64 bits, every time). So before any run the host
 * has every file a run may read read here, in a container of its own that
 * is then destroyed: all of the image is cached, charged to no sandbox
 * whose own memory pressure could evict it, and no read of a run changes
 * what is cached. */
static void warm(long long *files, long long *bytes) {
    DIR *root = opendir("/");
    if (!root) return;
    struct dirent *e;
    while ((e = readdir(root)) != NULL) {
        struct stat st;
        if (!is_image_folder(e->d_name) ||
            fstatat(dirfd(root), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
            continue;
        int fd = openat(dirfd(root), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) warm_below(fd, files, bytes);
    }
    closedir(root);
}

/* ---- between jobs ------------------------------------------------------------ */


/* Readies the container for another job; 0 when that is verified. Runs
 * happen in namespaces and mounts of their own, gone with their run init,
 * so nothing of the last job can be left; this checks it from PID 1, whose
 * view no run can change: /proc shows no process but PID 1, and every
 * writable place (PID 1's own mounts, below the runs' ones) is empty. Only
 * then do later runs get the next job's uid, so whatever the kernel keeps
 * per uid (pending signals, pipe buffers) is another uid's. */
static int reset(uid_t next_uid, char *error, size_t error_len) {
    struct outcome oc;
    struct rusage ru;
    int done = 1;
    kill_and_reap_all(-1, &oc, &done, &ru, NULL);
    for (size_t i = 0; i < N_PLACES; i++) {
        if (!is_empty(writable_places[i])) {
            snprintf(error, error_len, "%s is not empty", writable_places[i]);
            return -1;
        }
    }
    if (others_in("/proc", 1, 1)) {
        snprintf(error, error_len, "a process outlived the last job");
        return -1;
    }
    run_uid = next_uid;
    return 0;
}

/* ---- the conversation with the host ------------------------------------------ */

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

/* An output: a memory file, nameless, so the run reaches it only through
 * its stdout or stderr; bounded by RLIMIT_FSIZE; sealed against shrinking,
 * so output over the limit cannot be taken back; apart from every folder it
 * can fill. The run gets a write-only descriptor, and the file's mode (ours,
 * 0622) lets it reopen /dev/stdout for writing but never read the file back:
 * an output is not a place to keep memory. *rw is ours, for sending. */
static int make_output(const char *name, int *rw) {
    *rw = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (*rw < 0 || fchmod(*rw, 0622) < 0 ||
        fcntl(*rw, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
        die("memfd_create");
    char path[64];
    snprintf(path, sizeof path, "%s/self/fd/%d", proc_dir, *rw);
    int w = open(path, O_WRONLY | O_CLOEXEC);
    if (w < 0) die("output");
    return w;
}

/* The answer to a request that did not run (bad, or failed before its run). */
static void send_failure(const char *error) {
    char header[1024];
    snprintf(header, sizeof header, "ok=0\nerror=%s\nprotocol=%d\n", error, PROTOCOL_VERSION);
    if (send_header(header) < 0) _exit(1);
}

/* In the run init: the request run, what it wrote wiped, its answer sent.
 * 0 when the run init is clean for another run of the job. */
static int serve_run(const struct request *rq, int ruleset) {
    char header[2048], error[512] = "";
    int out_fd, err_fd;
    int out_w = make_output("stdout", &out_fd), err_w = make_output("stderr", &err_fd);
    struct outcome oc;
    int failed = run(rq, ruleset, &oc, out_w, err_w, error, sizeof error);
    close(out_w);
    close(err_w);

    int art_fd = -1;
    long long art_len = 0;
    const char *art_status = "none";
    if (!failed && rq->artifact && oc.exited && oc.exit_code == 0) {
        /* Non-blocking: a FIFO in its place must not hang us. Open, it
         * outlives the run's mounts until it is sent. */
        int wd = open(rq->workdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        art_fd = wd < 0 ? -1 : openat(wd, rq->artifact, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (wd >= 0) close(wd);
        struct stat st;
        if (art_fd < 0 || fstat(art_fd, &st) < 0 || !S_ISREG(st.st_mode)) {
            art_status = "missing";
        } else if (st.st_size > rq->artifact_max) {
            art_status = "too_big";
        } else {
            art_status = "ok";
            art_len = st.st_size;
        }
    }
    /* Everything the run wrote goes now (the artifact stays open). */
    int dirty = wipe_all(NULL) < 0;
    long long out_size = file_size(out_fd), err_size = file_size(err_fd);
    long long out_len = out_size < rq->out_send ? out_size : rq->out_send;
    /* Over its peer's bound, it is over the output limit (fifo_out_max);
     * what it wrote there went to the peer, none of it is sent. */
    if (oc.out_over) out_size = rq->fifo_out_max + 1;
    long long err_len = err_size < rq->err_send ? err_size : rq->err_send;
    /* The end of stderr, where runtimes report a failed allocation. */
    long long tail_len = err_size < rq->tail_send ? err_size : rq->tail_send;
    if (failed) out_len = err_len = tail_len = 0;
    snprintf(header, sizeof header,
             "ok=%d\nerror=%s\nexited=%d\nexit_code=%d\nsignal=%d\nwall_timeout=%d\n"
             "cpu_timeout=%d\nmem_exceeded=%d\ncpu_us=%lld\nwall_us=%lld\nmaxrss_kb=%lld\n"
             "oom_kills=%lld\nout_size=%lld\nerr_size=%lld\nout_len=%lld\nerr_len=%lld\n"
             "tail_len=%lld\nart_status=%s\nart_len=%lld\nlandlock=%d\nzygote=%d\nprotocol=%d\n",
             failed ? 0 : 1, error, oc.exited, oc.exit_code, oc.signal, oc.wall_timeout,
             oc.cpu_timeout, oc.mem_exceeded, oc.cpu_us, oc.wall_us, oc.maxrss_kb, oc.oom_kills,
             out_size, err_size, out_len, err_len, tail_len, art_status, art_len, landlock_abi,
             oc.from_zygote, PROTOCOL_VERSION);
    if (send_header(header) < 0 || send_file_part(out_fd, 0, out_len) < 0 ||
        send_file_part(err_fd, 0, err_len) < 0 ||
        send_file_part(err_fd, err_size - tail_len, tail_len) < 0 ||
        send_file_part(art_fd, 0, art_len) < 0)
        _exit(1);
    close(out_fd);
    close(err_fd);
    if (art_fd >= 0) close(art_fd);
    return dirty ? -1 : 0;
}

/* A job's runs are served by a run init of its own, made before the job's
 * first request (prefork): its namespaces and mounts are ready while the
 * host reads the last answer. It gets each request on a pipe from PID 1 and
 * says on another when the answer is sent: 'D', and it serves the job's
 * next run; 'X', it could not wipe what the run wrote and has ended (the
 * next run gets a new one). A reset (the next job), and a run that must
 * see nothing of an earlier one (`fresh`), end it. */
struct run_init {
    pid_t pid; /* -1: none */
    int request_fd, done_fd;
};
static struct run_init current_init = {-1, -1, -1}, next_init = {-1, -1, -1};

/* In the run init (see the header): pid 1 of a new pid namespace, in a
 * mount namespace of its own. Its exit is the end of its runs' every
 * process and file. */
static void run_init(int request_fd, int done_fd) {
    char error[512] = "";
    /* Its writes to a gone peer's clock fail (EPIPE), never kill it; the run
     * gets an empty mask (exec_child). */
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    sigprocmask(SIG_BLOCK, &pipe_signal, NULL);
    int ready = fresh_places(error, sizeof error) == 0, bound = 0;
    /* Built at the job's first run of each kind: a rule holds the job's
     * folder, which the host makes anew for each job. */
    int rulesets[2] = {-1, -1};
    static char buf[MAX_REQUEST];
    for (;;) {
        uint32_t len;
        struct request rq;
        /* PID 1 sends only runs it parsed; anything else is its end (it
         * ended this run init, or is gone): nothing to answer. */
        if (read_all(request_fd, &len, sizeof len) < 0 || len == 0 || len > MAX_REQUEST ||
            read_all(request_fd, buf, len) < 0 || parse_request(buf, len, &rq) < 0)
            _exit(0);
        if (ready && !bound) {
            ready = bind_job(error, sizeof error) == 0;
            bound = 1;
            /* Its last mount made: a run init has no more use for them. */
            if (set_caps(all_caps() & ~(1u << CAP_SYS_ADMIN) & ~(1u << CAP_SYS_CHROOT)) < 0)
                die("dropping CAP_SYS_ADMIN");
        }
        if (ready && landlock_abi > 0 && rulesets[rq.kind] < 0 &&
            (rulesets[rq.kind] = build_ruleset(rq.kind)) < 0) {
            snprintf(error, sizeof error, "landlock rules: %s", strerror(errno));
            ready = 0;
        }
        int clean = 0;
        if (ready) clean = serve_run(&rq, rulesets[rq.kind]) == 0;
        else send_failure(error);
        if (write(done_fd, clean ? "D" : "X", 1) != 1 || !clean) _exit(0);
    }
}

/* The next run init (next_init), made now. */
static void prefork(void) {
    int request[2], done[2];
    if (pipe2(request, O_CLOEXEC) < 0 || pipe2(done, O_CLOEXEC) < 0) die("pipe2");
    /* Like fork(), with the child in new namespaces. */
    pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, NULL, NULL, NULL,
                               NULL);
    if (pid < 0) die("clone: the run's namespaces");
    if (pid == 0) {
        /* Only PID 1 may hold another run init's pipes: a copy here would
         * keep that one from seeing the end of its request pipe. */
        for (int i = 0; i < 2; i++) {
            const struct run_init *other = i ? &next_init : &current_init;
            if (other->pid > 0) {
                close(other->request_fd);
                close(other->done_fd);
            }
        }
        close(request[1]);
        close(done[0]);
        run_init(request[0], done[1]);
    }
    close(request[0]);
    close(done[1]);
    next_init = (struct run_init){pid, request[1], done[0]};
}

/* A run init told it is done (it ends at the end of its pipe), and its end
 * awaited: then nothing of its runs is left. */
static void retire(struct run_init *init) {
    if (init->pid > 0) {
        close(init->request_fd);
        close(init->done_fd);
        while (waitpid(init->pid, NULL, __WALL) < 0 && errno == EINTR) {
        }
        init->pid = -1;
    }
}

/* Every run init ended and reaped, the next one too (a reset's, a warm's
 * first step): then nothing of any run is left. */
static void end_run_inits(void) {
    retire(&current_init);
    if (next_init.pid > 0) kill(next_init.pid, SIGKILL);
    retire(&next_init);
}

/* A run init that ended untold (died) may have left an answer half sent:
 * the conversation is over (-1). */
static int reap_run_inits(void) {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG | __WALL)) > 0)
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
    return 0;
}

/* One request: a reset and a warm here, with no run init alive; a run
 * handed to the job's run init (a new one for the job's first run and for
 * a fresh one). */
static int serve(char *buf, uint32_t len) {
    struct request rq;
    char header[256], error[512] = "";
    /* Parsing writes into the buffer: the run init gets the request as sent. */
    static char parsed[MAX_REQUEST];
    memcpy(parsed, buf, len);
    if (parse_request(parsed, len, &rq) < 0) {
        send_failure("bad request");
        return 0;
    }
    if (rq.kind == KIND_RESET || rq.kind == KIND_WARM) {
        end_run_inits();
        if (rq.kind == KIND_RESET) {
            int failed = reset((uid_t)rq.next_uid, error, sizeof error);
            /* What the last jobs left charged to the container (caches of
             * what they read, kernel memory): the host retires a container
             * that keeps too much, which a later job would pay for in
             * reclaim. */
            snprintf(header, sizeof header, "ok=%d\nerror=%s\nmem_kb=%lld\nprotocol=%d\n",
                     failed ? 0 : 1, error, read_memory_kb(), PROTOCOL_VERSION);
        } else {
            long long files = 0, bytes = 0;
            warm(&files, &bytes);
            snprintf(header, sizeof header, "ok=1\nerror=\nfiles=%lld\nbytes=%lld\nprotocol=%d\n",
                     files, bytes, PROTOCOL_VERSION);
        }
        if (send_header(header) < 0) _exit(0);
        prefork(); /* with the next job's uid */
        return 0;
    }
    if (rq.fresh || current_init.pid < 0) {
        retire(&current_init);
        current_init = next_init;
        prefork();
    }
    char done = 0;
    int answered = write_all(current_init.request_fd, &len, sizeof len) == 0 &&
                   write_all(current_init.request_fd, buf, len) == 0 &&
                   read(current_init.done_fd, &done, 1) == 1;
    if (!answered) return -1;
    if (done != 'D') retire(&current_init); /* it has ended */
    return reap_run_inits();
}

int main(int argc, char **argv) {
    char *end = NULL;
    long long uid = argc == 3 || argc == 4 ? strtoll(argv[2], &end, 10) : 0;
    if ((argc != 3 && argc != 4) || *end || uid < MIN_RUN_UID || uid > MAX_RUN_UID) {
        fprintf(stderr, "usage: %s SOCKET RUN_UID (%d..%d) [IMAGE_COPY]\n", argv[0], MIN_RUN_UID,
                MAX_RUN_UID);
        return 2;
    }
    run_uid = (uid_t)uid;
    static char copy_root[256], copy_stamp[256];
    if (argc == 4) {
        /* The host's copy of the image in memory (a tmpfs every container of
         * the image mounts read-only): its root, complete once stamped. A
         * copy gone (no container held it) is an empty folder: nothing to
         * serve runs from. */
        snprintf(copy_root, sizeof copy_root, "%s/root", argv[3]);
        snprintf(copy_stamp, sizeof copy_stamp, "%s/stamp", argv[3]);
        if (access(copy_stamp, F_OK) < 0) {
            fprintf(stderr, "%s: the image's copy is not there\n", argv[3]);
            return 3;
        }
        image_root = copy_root;
    }
    drop_to_supervisor();
    prepare_landlock();
    /* Opened once, here: every run init inherits them. */
    read_memory_kb();
    read_oom_kills();
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    /* A run init gone before its request: a write to its pipe fails, and
     * says so (serve). */
    sigaddset(&chld, SIGPIPE);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    struct sigaction alarm_action = {.sa_handler = on_alarm}; /* no SA_RESTART */
    sigaction(SIGALRM, &alarm_action, NULL);

    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(argv[1]) >= sizeof addr.sun_path) return 2;
    strcpy(addr.sun_path, argv[1]);
    sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sock < 0 || connect(sock, (struct sockaddr *)&addr, sizeof addr) < 0) die("connect");

    prefork();
    static char buf[MAX_REQUEST];
    for (;;) {
        uint32_t len;
        if (read_all(sock, &len, sizeof len) < 0) return 0; /* host closed: done */
        if (len == 0 || len > MAX_REQUEST || read_all(sock, buf, len) < 0) return 1;
        if (serve(buf, len) < 0) return 1;
    }
}
