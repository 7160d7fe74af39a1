#include <stdio.h>
#include <unistd.h>
/* The child detaches and keeps running after main exits: it must not survive
 * the case. */
int main(void) {
    if (fork() == 0) {
        setsid();
        if (fork() == 0) {
            for (;;) pause();
        }
        for (volatile unsigned long n = 0;; n++) {}
    }
    puts("ok");
    return 0;
}
