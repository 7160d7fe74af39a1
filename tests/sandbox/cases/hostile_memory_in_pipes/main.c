/* Pipes hold memory out of sight (64 KiB each, more with F_SETPIPE_SZ), and
 * their inode numbers come from a counter the whole host shares, which one
 * run once moved on to tell a later one a value: a case may make none. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int main(void) {
    int p[2];
    if (pipe(p) < 0) {
        perror("pipe");
        return 1;
    }
    if (fcntl(p[1], F_SETPIPE_SZ, 1 << 20) < 0) {
        perror("F_SETPIPE_SZ");
        return 2;
    }
    puts("grown");
    return 0;
}
