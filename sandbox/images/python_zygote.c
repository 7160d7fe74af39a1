/*
 * judge-python-zygote: a Python interpreter started once per job, from which
 * the job's cases are forked, each then running its script as `python3
 * main.py` would.
 *
 * Why: a Python case's own work is often a few milliseconds, and starting
 * the interpreter (its runtime, its first modules, site) costs about ten
 * more, case after case. Here it is paid once per job. The interpreter is
 * the one `python3` is (the same static library, linked the same way), set
 * up by the same two calls python3's own main makes: Py_InitializeFromConfig
 * with the run's argv and environment, here, and Py_RunMain, in each case's
 * process after the fork. So a case sees what `python3 main.py` shows it:
 * sys.argv, sys.path (its first entry is computed when the script runs, as
 * python3 does), __main__, exit statuses, tracebacks, the streams on
 * descriptors 0 to 2 (never a terminal: same buffering), the finalisation.
 * What differs: the hash seed is the job's, not the case's, and the
 * interpreter's start is nobody's CPU time.
 *
 * It runs nothing of the submission's itself: the supervisor's run init
 * starts it as the run's uid, with the job's Landlock domain and a seccomp
 * filter that lets it fork and lets its children add their own filter and
 * Landlock domain (supervisor.c, start_zygote). Then, for each request on
 * descriptor 3 (a SOCK_SEQPACKET socket; the message is struct spawn, with
 * the case's stdin, stdout, stderr and a report pipe as SCM_RIGHTS), it
 * forks a child that forks the case's process and exits at once: the case's
 * process is an orphan, adopted by the run init (its namespace's init),
 * which waits for it and reads its CPU time and peak memory as it does for
 * any run, and kills it. The zygote answers with the case's pid once that
 * child is reaped (so the case is the run init's child by then), or -1.
 *
 * The zygote runs as a uid of its own (supervisor.c, become_zygote), with
 * the capabilities to switch uid alone: a case can then reach it by no call
 * that checks only the uid (setpriority, prlimit, sched_setaffinity), which
 * would reach every later case through it.
 *
 * The case's process, before anything of the submission runs: its
 * descriptors, the run's limits, the run's uid without any capability, a
 * new session, its working folder, a
 * Landlock domain nested in the zygote's (descriptor 4: the same rules;
 * Landlock's scope keeps it from signalling anything outside its own
 * domain, the zygote included), every other descriptor closed, and the
 * run's seccomp filter (sent by the run init with each request), whose
 * rules are the case's: threads only, no further filter. A failure of any
 * step is written to the report pipe (an errno) before the process exits,
 * as a failed exec is.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zygote.h"

static int report_fd = -1;

static void fail(void) {
    int err = errno;
    if (report_fd >= 0) (void)!write(report_fd, &err, sizeof err);
    _exit(127);
}

/* In the case's process: everything but the script, in exec_child's order. */
static void become_case(const struct spawn *rq, const int fds[SPAWN_FDS]) {
    report_fd = fds[3];
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setsid();
    for (int i = 0; i < 3; i++)
        if (dup2(fds[i], i) < 0) fail();
    if (spawn_apply_limits(rq->limits) < 0) fail();
    /* The run's uid, with no capability left (the zygote's two, to switch
     * uid, are not kept: permitted, effective, inheritable and ambient
     * emptied), and dumpable again as after an exec. */
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct none_at_all[2] = {{0, 0, 0}, {0, 0, 0}};
    gid_t gid = (gid_t)rq->uid;
    if (rq->uid == 0 || setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
        setresuid(rq->uid, rq->uid, rq->uid) < 0 || syscall(SYS_capset, &header, none_at_all) < 0 ||
        prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 ||
        prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
        fail();
    if (chdir(rq->workdir) < 0) fail();
    umask(022);
    if (syscall(__NR_landlock_restrict_self, ZYGOTE_RULESET_FD, 0) < 0) fail();
    /* The socket, the ruleset and the received copies: only 0 to 2 and
     * the report pipe stay, and the pipe only until the filter is in. */
    int keep = fcntl(report_fd, F_DUPFD_CLOEXEC, 3);
    if (keep < 0 || (keep > 3 && syscall(SYS_close_range, 3, keep - 1, 0) < 0) ||
        syscall(SYS_close_range, keep + 1, ~0U, 0) < 0)
        fail();
    report_fd = keep;
    struct sock_fprog prog = {(unsigned short)rq->filter_len, (struct sock_filter *)rq->filter};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) fail();
    close(report_fd);
    report_fd = -1;
}

/* A request received: 0, else -1 (the conversation is over). */
static int receive(struct spawn *rq, int fds[SPAWN_FDS]) {
    char control[CMSG_SPACE(sizeof(int) * SPAWN_FDS)];
    struct iovec iov = {rq, sizeof *rq};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                         .msg_controllen = sizeof control};
    ssize_t n;
    do {
        n = recvmsg(ZYGOTE_SOCKET_FD, &msg, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    int got = 0;
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
        got = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    if (got > 0) memcpy(fds, CMSG_DATA(c), sizeof(int) * (got < SPAWN_FDS ? got : SPAWN_FDS));
    int ok = n == (ssize_t)sizeof *rq && got == SPAWN_FDS && !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) &&
             rq->magic == SPAWN_MAGIC && rq->filter_len > 0 && rq->filter_len <= SPAWN_MAX_FILTER &&
             memchr(rq->workdir, '\0', sizeof rq->workdir) != NULL;
    if (!ok) {
        for (int i = 0; i < got && i < SPAWN_FDS; i++) close(fds[i]);
        return -1;
    }
    return 0;
}

static void answer(int32_t pid) {
    if (send(ZYGOTE_SOCKET_FD, &pid, sizeof pid, MSG_NOSIGNAL) != (ssize_t)sizeof pid) _exit(0);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    /* What python3's own main does with its argv and environment. */
    PyStatus status = PyConfig_SetBytesArgv(&config, argc - 1, argv + 1);
    if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) return 1;
    answer(ZYGOTE_READY);
    for (;;) {
        static struct spawn rq;
        int fds[SPAWN_FDS];
        if (receive(&rq, fds) < 0) return 0;
        /* What os.fork does around fork(): Python's own locks and thread
         * state, made whole again in each process. */
        int link[2];
        int32_t pid = -1;
        if (pipe2(link, O_CLOEXEC) == 0) {
            PyOS_BeforeFork();
            pid_t middle = fork();
            if (middle == 0) {
                close(link[0]);
                pid_t child = fork();
                if (child == 0) {
                    close(link[1]);
                    PyOS_AfterFork_Child();
                    become_case(&rq, fds);
                    exit(Py_RunMain());
                }
                int32_t told = child;
                (void)!write(link[1], &told, sizeof told);
                _exit(0);
            }
            PyOS_AfterFork_Parent();
            close(link[1]);
            if (middle > 0) {
                if (read(link[0], &pid, sizeof pid) != (ssize_t)sizeof pid) pid = -1;
                while (waitpid(middle, NULL, 0) < 0 && errno == EINTR) {
                }
            }
            close(link[0]);
        }
        for (int i = 0; i < SPAWN_FDS; i++) close(fds[i]);
        answer(pid);
    }
}
