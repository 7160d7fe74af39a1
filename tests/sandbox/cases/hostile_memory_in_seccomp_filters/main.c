#define _GNU_SOURCE
/* Memory out of sight in seccomp filters: each of 64 threads stacks filters
 * that answer a made-up system call with a value per argument (12 bits in
 * two instructions), 0.75 MiB of data held in the kernel in all, read back
 * through errno after the buffer it came from is freed. Where a run may not
 * add a filter it fails (RE); it must never get AC. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MADE_UP 999
#define ENTRIES 2000 /* a filter */
#define FILTERS 4    /* a thread: within the kernel's 32768 instructions */
#define THREADS 64

static unsigned value(long t, long f, long i) { return (unsigned)((t * 7919 + f * 104729 + i * 31) % 4095) + 1; }

static int store(long t, long f) {
    struct sock_filter *p = malloc(sizeof *p * (2 * ENTRIES + 8));
    int n = 0;
    p[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    p[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADE_UP, 1, 0);
    p[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    p[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
    p[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_SUB | BPF_K, (unsigned)(f * ENTRIES));
    p[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, ENTRIES, 0, 1);
    p[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    for (int i = 0; i < ENTRIES; i++) {
        p[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)i, 0, 1);
        p[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | value(t, f, i));
    }
    p[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {(unsigned short)n, p};
    int r = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) : -1;
    free(p);
    return r;
}

static pthread_barrier_t stored;

static void *thread(void *arg) {
    long t = (long)arg, wrong = 0;
    for (long f = 0; f < FILTERS; f++)
        if (store(t, f) < 0) return (void *)-1L;
    pthread_barrier_wait(&stored);
    for (long f = 0; f < FILTERS; f++)
        for (long i = 0; i < ENTRIES; i += 5)
            wrong += !(syscall(MADE_UP, f * ENTRIES + i) == -1 && (unsigned)errno == value(t, f, i));
    return (void *)wrong;
}

int main(void) {
    pthread_t threads[THREADS];
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_barrier_init(&stored, NULL, THREADS);
    for (long t = 0; t < THREADS; t++)
        if (pthread_create(&threads[t], &attr, thread, (void *)t) != 0) return 2;
    long wrong = 0;
    for (long t = 0; t < THREADS; t++) {
        void *r;
        pthread_join(threads[t], &r);
        if ((long)r < 0) {
            perror("seccomp");
            return 1;
        }
        wrong += (long)r;
    }
    puts(wrong == 0 ? "all read back" : "lost some");
    return 0;
}
