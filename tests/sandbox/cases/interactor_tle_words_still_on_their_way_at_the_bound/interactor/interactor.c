#include <stdio.h>
#include <time.h>
#include <unistd.h>
/* Listens only after the program's wall bound (7 s with the tests' limits):
 * the program's last words were still on their way when its bound came. The
 * conversation did not end within it: TLE, not a verdict on the part of
 * them that came through. */
int main(void) {
    struct timespec eight = {8, 0};
    nanosleep(&eight, NULL);
    static char buf[1 << 16];
    long long got = 0;
    ssize_t n;
    while ((n = read(0, buf, sizeof buf)) > 0) got += n;
    fprintf(stderr, "heard %lld bytes\n", got);
    return 0;
}
