/* 64 threads alive at once under a 256 MiB limit (each once reserved a whole
 * memory limit of address space for its stack: nine did not fit). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
static long sums[64];
static pthread_barrier_t all_started;
static void *work(void *arg) {
    long i = (long)arg;
    pthread_barrier_wait(&all_started);
    volatile char stack_use[64 * 1024];
    stack_use[0] = (char)i;
    for (long k = 0; k < 10000; k++) sums[i] += k % 7 + stack_use[0];
    return NULL;
}
int main(void) {
    pthread_t t[64];
    pthread_barrier_init(&all_started, NULL, 64);
    for (long i = 0; i < 64; i++)
        if (pthread_create(&t[i], NULL, work, (void *)i) != 0) {
            perror("pthread_create");
            return 1;
        }
    long total = 0;
    for (int i = 0; i < 64; i++) {
        pthread_join(t[i], NULL);
        total += sums[i];
    }
    printf("%ld\n", total);
    return 0;
}
