/* Tries every call that once reached PID 1 through a shared uid: its CPU
 * limit, priority, scheduling policy, affinity and I/O priority. Each must be
 * refused; the supervisor must survive to judge the answer. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void) {
    int refused = 0;
    struct rlimit none = {0, 0};
    refused += prlimit(1, RLIMIT_CPU, &none, NULL) < 0;
    refused += setpriority(PRIO_PROCESS, 1, 19) < 0;
    refused += setpriority(PRIO_USER, 0, 19) == 0 && getpriority(PRIO_PROCESS, 1) == 0;
    struct sched_param param = {0};
    refused += sched_setscheduler(1, SCHED_IDLE, &param) < 0;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    refused += sched_setaffinity(1, sizeof one, &one) < 0;
    refused += syscall(SYS_ioprio_set, 1, 1, 3 << 13) < 0; /* IOPRIO_WHO_PROCESS, idle */
    printf("refused %d of 6\n", refused);
    return 0;
}
