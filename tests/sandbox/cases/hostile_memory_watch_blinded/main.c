/* The main thread exits alone: its status shows no memory, and once the
 * memory watch was blind while another thread held 400 MiB (limit 64 MiB)
 * until the wall bound. It must be stopped as soon as it passes the limit. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
static void *hold(void *arg) {
    (void)arg;
    size_t n = 400ul << 20;
    char *p = malloc(n);
    for (size_t i = 0; p && i < n; i += 4096) p[i] = 1;
    for (;;) pause();
}
int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, hold, NULL);
    syscall(SYS_exit, 0);
}
