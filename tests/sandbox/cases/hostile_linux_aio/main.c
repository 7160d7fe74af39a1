/* Linux AIO's event count is one for the whole host: a run that took it all
 * once blocked io_setup on the host itself. */
#include <errno.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void) {
    unsigned long ctx = 0;
    long r = syscall(SYS_io_setup, 4096, &ctx);
    puts(r < 0 && errno == ENOSYS ? "no aio" : "aio");
    return 0;
}
