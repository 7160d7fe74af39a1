/* A stopped program has not ended: it sleeps until the wall bound (TLE). */
#include <signal.h>
#include <stdio.h>
int main(void) {
    puts("42");
    fflush(stdout);
    raise(SIGSTOP);
    return 0;
}
