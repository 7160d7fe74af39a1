/* Pipes are allowed (thread pools use them) but keep their default 64 KiB:
 * growing one (F_SETPIPE_SZ) to keep memory there is refused. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int main(void) {
    int p[2];
    if (pipe(p) < 0) {
        perror("pipe");
        return 2;
    }
    if (fcntl(p[1], F_SETPIPE_SZ, 1 << 20) < 0) {
        perror("F_SETPIPE_SZ");
        return 1;
    }
    puts("grown");
    return 0;
}
