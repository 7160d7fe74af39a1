/* io_uring is no interface a judged program needs (and one the engine's
 * default profile leaves open). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void) {
    char params[120];
    memset(params, 0, sizeof params);
    long fd = syscall(SYS_io_uring_setup, 8, params);
    puts(fd < 0 && errno == ENOSYS ? "no io_uring" : "io_uring");
    return 0;
}
