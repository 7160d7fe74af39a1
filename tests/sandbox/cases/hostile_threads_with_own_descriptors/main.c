/* Threads with descriptor tables of their own (clone without CLONE_FILES, or
 * unshare) once got 128 descriptors each and kept 172 MiB in pipes. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static int child(void *arg) {
    (void)arg;
    return 0;
}
int main(void) {
    char *stack = malloc(1 << 16);
    int refused = 0;
    int flags = CLONE_VM | CLONE_SIGHAND | CLONE_THREAD; /* no CLONE_FILES, no CLONE_FS */
    refused += clone(child, stack + (1 << 16), flags, NULL) < 0 && errno == EAGAIN;
    refused += clone(child, stack + (1 << 16), flags | CLONE_FS, NULL) < 0 && errno == EAGAIN;
    refused += unshare(CLONE_FILES) < 0;
    refused += unshare(CLONE_FS) < 0;
    printf("refused %d of 4\n", refused);
    return 0;
}
