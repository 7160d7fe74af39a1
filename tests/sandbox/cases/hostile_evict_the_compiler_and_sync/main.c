#define _GNU_SOURCE
/* A run may neither drop the pages of files it does not own from the host's
 * page cache (the compiler, the precompiled header and the libraries every
 * job reads: the next job would pay for reading them again) nor make the
 * host flush its disks. It prints what each attempt did: only refusals are
 * the expected output. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *said(long r) { return r == 0 ? "done" : errno == EPERM ? "refused" : "failed"; }

int main(void) {
    const char *shared[] = {"/usr/bin/gcc", "/usr/bin/python3", "/usr/lib/x86_64-linux-gnu/libc.so.6",
                            "/usr/lib/aarch64-linux-gnu/libc.so.6"};
    int evicted = 0, tried = 0;
    for (unsigned i = 0; i < sizeof shared / sizeof *shared; i++) {
        int fd = open(shared[i], O_RDONLY);
        if (fd < 0) continue;
        tried++;
        int r = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        if (r == 0) evicted++;
        else if (r != EPERM) printf("fadvise %s: error %d\n", shared[i], r);
        close(fd);
    }
    printf("fadvise: %s\n", !tried ? "nothing to try" : evicted ? "done" : "refused");
    printf("sync: %s\n", said(syscall(SYS_sync)));
    int fd = open("/tmp", O_RDONLY);
    printf("syncfs: %s\n", said(syncfs(fd)));
    return 0;
}
