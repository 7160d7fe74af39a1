#define _GNU_SOURCE
/* Sends the program a large block (as an interactor may: the whole array),
 * then reads what the program said (all of it: nothing is lost). Its writes
 * to a program that has gone are dropped, never failed. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static long long now_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000LL + t.tv_nsec / 1000000; }
int main(void) {
    long long t0 = now_ms();
    static char block[256 * 1024];
    memset(block, '1', sizeof block);
    block[sizeof block - 1] = '\n';
    ssize_t w = 0, n = 0;
    while (w < (ssize_t)sizeof block && (n = write(1, block + w, sizeof block - w)) > 0) w += n;
    long long t1 = now_ms();
    static char buf[1 << 16];
    long long got = 0;
    while ((n = read(0, buf, sizeof buf)) > 0) got += n;
    fprintf(stderr, "wrote %zd bytes (blocked %lld ms), then read %lld bytes\n", w, t1 - t0, got);
    return 1;
}
