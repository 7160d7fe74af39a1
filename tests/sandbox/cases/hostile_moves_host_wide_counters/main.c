#define _GNU_SOURCE
/* What a run could move on that a later run, in any container of the host,
 * can read back: a pipe's inode number (pipes), its output's (a memory
 * file: shared anonymous mappings make them, and shared mappings of
 * /dev/zero), hugetlbfs's (huge page mappings, even failed ones). It tries
 * each, and a Landlock domain and a seccomp filter of its own (kernel
 * memory, and the host's audit log), and sysinfo (the host's free memory,
 * which moves with what runs read, and its process count, which moves with
 * the threads of jobs judged at once), and prints what it was allowed. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

static void say(const char *what, int allowed) { printf("%s: %s\n", what, allowed ? "allowed" : "refused"); }

int main(void) {
    int p[2];
    say("pipe", pipe(p) == 0);
    say("shared anonymous mapping",
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0) != MAP_FAILED);
    say("huge page mapping",
        mmap(NULL, 2 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0) !=
                MAP_FAILED ||
            errno != EPERM);
    say("/dev/zero", open("/dev/zero", O_RDWR) >= 0);
    say("landlock ruleset", syscall(SYS_landlock_create_ruleset, NULL, 0, 1) >= 0);
    struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG);
    struct sock_fprog prog = {1, &allow};
    say("seccomp filter", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0);
    struct sysinfo host;
    say("sysinfo", sysinfo(&host) == 0);
    return 0;
}
