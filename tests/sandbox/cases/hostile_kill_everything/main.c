#include <signal.h>
#include <stdio.h>
/* Tries to take the supervisor down with it. */
int main(void) {
    puts("trying");
    fflush(stdout);
    kill(1, SIGKILL);
    kill(1, SIGSTOP);
    kill(-1, SIGKILL);
    return 0;
}
