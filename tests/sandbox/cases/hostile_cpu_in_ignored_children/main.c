/* Tries to do ~3 s of CPU work in auto-reaped children (SIGCHLD ignored) under
 * a 1 s limit: a case cannot start processes, so the forks fail. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
int main(void) {
    signal(SIGCHLD, SIG_IGN);
    int p[2];
    pipe(p);
    for (int k = 0; k < 14; k++) {
        if (fork() == 0) {
            close(p[0]);
            for (volatile unsigned long i = 0; i < 300000000UL; i++) {}
            _exit(0);
        }
    }
    close(p[1]);
    char c;
    read(p[0], &c, 1); /* EOF once every worker has exited */
    puts("42");
    return 0;
}
