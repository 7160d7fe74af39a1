/* A SIGXFSZ the program raises itself, with no output: RE, not a chosen OLE. */
#include <signal.h>
int main(void) {
    raise(SIGXFSZ);
    return 0;
}
