/*
 * _judge_zygote: the Python zygote, a job's `python3 main.py` paused in its
 * start-up, from which the job's cases are forked.
 *
 * Why: a Python case's own work is often a few milliseconds, and starting
 * the interpreter (its runtime, its first modules, site) costs about ten
 * more, case after case. Here most of it is paid once per job.
 *
 * How: the supervisor's run init starts the job's first Python case's own
 * command, `python3 main.py`, with the case's environment plus
 * JUDGE_ZYGOTE=1 (supervisor.c, start_zygote). The interpreter is the
 * image's python3 itself: nothing is linked again, so a case runs exactly
 * as fast as an exec'd one. While site processes its .pth files, the one
 * this image adds (judge_zygote.pth) imports this module and calls serve():
 * with the marker set and the zygote's socket on descriptor 3 it takes the
 * marker out of the environment and serves requests (struct spawn, with the
 * case's stdin, stdout, stderr and a report pipe as SCM_RIGHTS); anywhere
 * else it returns at once and the run goes on as ever. For each request it
 * forks a child that forks the case's process and exits at once: the case's
 * process is an orphan, adopted by the run init (its namespace's init),
 * which waits for it and reads its CPU time and peak memory as it does for
 * any run, and kills it. The zygote answers with the case's pid once that
 * child is reaped, -1 when no process of the case was made, or
 * ZYGOTE_UNKNOWN. The case's process returns from serve(), and its
 * start-up goes on where the zygote's stopped: the rest of site, then the
 * script, its end and the interpreter's end, all python3's own. So a case
 * sees what `python3 main.py` shows it, but for what the zygote shares with
 * every case of its job: the hash seed and the addresses of what start-up
 * made. The script is never read in the zygote.
 *
 * The zygote runs as a uid of its own with the capabilities to switch uid
 * and to empty the bounding set (supervisor.c, become_zygote): a case
 * reaches it by no call that checks only the uid (setpriority, prlimit,
 * sched_setaffinity), which would reach every later case through it.
 *
 * The case's process, before it returns: its descriptors, the run's limits,
 * an empty bounding set, the run's uid without any capability, a new
 * session, its working folder, a Landlock domain nested in the zygote's
 * (descriptor 4: the same rules; Landlock's scope keeps it from signalling
 * anything outside its own domain, the zygote included), the zygote's
 * descriptors closed, and the run's seccomp filter (sent by the run init
 * with each request), whose rules are the case's: threads only, no further
 * filter. A failure of any step is written to the report pipe (an errno)
 * before the process exits, as a failed exec is.
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

/* In the case's process: all but the script, in exec_child's order. */
static void become_case(const struct spawn *rq, const int fds[SPAWN_FDS]) {
    report_fd = fds[3];
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setsid();
    for (int i = 0; i < 3; i++)
        if (dup2(fds[i], i) < 0) fail();
    if (spawn_apply_limits(rq->limits) < 0) fail();
    /* The run's uid, with no capability, none to regain (the bounding set
     * emptied, CAP_SETPCAP last), and dumpable again as after an exec. */
    static const int zygote_caps[] = {CAP_SETUID, CAP_SETGID, CAP_SETPCAP};
    for (size_t i = 0; i < sizeof zygote_caps / sizeof *zygote_caps; i++)
        if (prctl(PR_CAPBSET_DROP, zygote_caps[i], 0, 0, 0) < 0) fail();
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
    /* The zygote's socket and ruleset and the received copies are closed;
     * the report pipe only once the filter is in. What else is open is
     * python3's own (the .pth file site reads), which it closes as ever. */
    close(ZYGOTE_SOCKET_FD);
    close(ZYGOTE_RULESET_FD);
    for (int i = 0; i < 3; i++)
        if (fds[i] > 2) close(fds[i]);
    struct sock_fprog prog = {(unsigned short)rq->filter_len, (struct sock_filter *)rq->filter};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) fail();
    close(report_fd);
    report_fd = -1;
}

/* A request received: 0, else -1 (the conversation is over). */
static int receive(struct spawn *rq, int fds[SPAWN_FDS]) {
    char control[CMSG_SPACE(sizeof(int) * SPAWN_FDS)];
    memset(control, 0, sizeof control);
    struct iovec iov = {rq, sizeof *rq};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                         .msg_controllen = sizeof control};
    ssize_t n;
    do {
        n = recvmsg(ZYGOTE_SOCKET_FD, &msg, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return -1;
    int got = 0;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len >= CMSG_LEN(0))
        got = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    if (got > SPAWN_FDS) got = SPAWN_FDS;
    if (got > 0) memcpy(fds, CMSG_DATA(c), sizeof(int) * (size_t)got);
    int ok = n == (ssize_t)sizeof *rq && got == SPAWN_FDS &&
             !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) && rq->magic == SPAWN_MAGIC &&
             rq->filter_len > 0 && rq->filter_len <= SPAWN_MAX_FILTER &&
             memchr(rq->workdir, '\0', sizeof rq->workdir) != NULL;
    if (!ok) {
        for (int i = 0; i < got; i++) close(fds[i]);
        return -1;
    }
    return 0;
}

static void answer(int32_t pid) {
    if (send(ZYGOTE_SOCKET_FD, &pid, sizeof pid, MSG_NOSIGNAL) != (ssize_t)sizeof pid) _exit(0);
}

/* Whether this process was started as a zygote: the marker, and its socket. */
static int is_zygote(void) {
    const char *marker = getenv(ZYGOTE_MARKER);
    struct stat st;
    return marker && !strcmp(marker, "1") && fstat(ZYGOTE_SOCKET_FD, &st) == 0 &&
           S_ISSOCK(st.st_mode);
}

/* The marker out of os.environ (which takes it out of the C environment too). */
static int forget_marker(void) {
    PyObject *os = PyImport_ImportModule("os");
    PyObject *environ = os ? PyObject_GetAttrString(os, "environ") : NULL;
    PyObject *gone = environ ? PyObject_CallMethod(environ, "pop", "sO", ZYGOTE_MARKER, Py_None)
                             : NULL;
    Py_XDECREF(gone);
    Py_XDECREF(environ);
    Py_XDECREF(os);
    return gone && !getenv(ZYGOTE_MARKER) ? 0 : -1;
}

/* Returns in a case's process (and in any run that is not a zygote); the
 * zygote itself never returns: it ends when its socket does. */
static PyObject *serve(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    if (!is_zygote()) Py_RETURN_NONE;
    if (forget_marker() < 0) _exit(1);
    answer(ZYGOTE_READY);
    for (;;) {
        static struct spawn rq;
        int fds[SPAWN_FDS];
        if (receive(&rq, fds) < 0) _exit(0);
        int link[2];
        int32_t pid = -1;
        if (pipe2(link, O_CLOEXEC) == 0) {
            /* What os.fork does around fork(): Python's own locks and
             * thread state, made whole again in each process. */
            PyOS_BeforeFork();
            pid_t middle = fork();
            if (middle == 0) {
                close(link[0]);
                pid_t child = fork();
                if (child == 0) {
                    close(link[1]);
                    PyOS_AfterFork_Child();
                    become_case(&rq, fds);
                    Py_RETURN_NONE;
                }
                int32_t told = child;
                (void)!write(link[1], &told, sizeof told);
                _exit(0);
            }
            PyOS_AfterFork_Parent();
            close(link[1]);
            if (middle > 0) {
                /* A middle that did not end as it should may have forked
                 * the case: then nobody knows whether it ran. */
                int status = 0;
                if (read(link[0], &pid, sizeof pid) != (ssize_t)sizeof pid) pid = ZYGOTE_UNKNOWN;
                while (waitpid(middle, &status, 0) < 0 && errno == EINTR) {
                }
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) pid = ZYGOTE_UNKNOWN;
            }
            close(link[0]);
        }
        for (int i = 0; i < SPAWN_FDS; i++) close(fds[i]);
        answer(pid);
    }
}

static PyMethodDef methods[] = {
    {"serve", serve, METH_NOARGS, "Serve as the job's Python zygote when started as one."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_judge_zygote", NULL, -1, methods};

PyMODINIT_FUNC PyInit__judge_zygote(void) {
    return PyModule_Create(&module);
}
