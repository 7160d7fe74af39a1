/* Keeps 800 MiB of data in memfds via pwrite/pread (never mapped; each file
 * under RLIMIT_FSIZE): RSS stays tiny, limit is 64 MiB. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(void) {
    static char buf[1 << 20];
    int fds[25];
    for (int f = 0; f < 25; f++) {
        fds[f] = memfd_create("x", 0);
        for (int i = 0; i < 32; i++) {
            memset(buf, f + i, sizeof buf);
            if (pwrite(fds[f], buf, sizeof buf, (off_t)i << 20) != sizeof buf) { perror("pwrite"); return 1; }
        }
    }
    long bad = 0;
    for (int f = 0; f < 25; f++)
        for (int i = 0; i < 32; i++) { pread(fds[f], buf, sizeof buf, (off_t)i << 20); bad += buf[4095] != (char)(f + i); }
    printf("%d\n", bad == 0);
    return 0;
}
