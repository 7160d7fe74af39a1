/* A SIGXCPU the program raises itself, within its time: RE, not a chosen TLE. */
#include <signal.h>
int main(void) {
    raise(SIGXCPU);
    return 0;
}
