/* Once: after PTRACE_TRACEME a crash stops the program instead of killing it,
 * and the stop was taken for the end of the run: this segfault was AC. */
#include <stdio.h>
#include <sys/ptrace.h>
int main(void) {
    ptrace(PTRACE_TRACEME, 0, NULL, NULL);
    puts("42");
    fflush(stdout);
    volatile int *nothing = NULL;
    return *nothing;
}
