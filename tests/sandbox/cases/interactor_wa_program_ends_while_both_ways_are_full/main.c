#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
/* Never reads; writes what fits without blocking (the relay's pipe and the
 * FIFO, about 128 KiB), then ends: some of its words are still in the relay
 * while the interactor is busy writing a large block to it. The interactor's
 * write to a program that has gone must go through (dropped), then it
 * reads and says WA; it must not wait for the relay, which waits for it. */
int main(void) {
    static char junk[4096];
    memset(junk, '7', sizeof junk);
    fcntl(1, F_SETFL, fcntl(1, F_GETFL) | O_NONBLOCK);
    for (int i = 0; i < 1000; i++)
        if (write(1, junk, sizeof junk) < 0 && errno == EAGAIN) {
            usleep(20000);
            if (write(1, junk, sizeof junk) < 0) break;
        }
    return 0;
}
