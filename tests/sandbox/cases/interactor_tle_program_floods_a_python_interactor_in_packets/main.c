#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
/* Packet mode on stdout (O_DIRECT on a pipe): were each one-byte write to
 * reach the interactor as a packet of its own, each read() of a Python
 * interactor would return one byte, and it would spend more CPU per byte than
 * the program: it would run out of its time first, a JE the program chose.
 * The relay copies: the interactor reads a stream. */
int main(void) {
    fcntl(1, F_SETFL, fcntl(1, F_GETFL) | O_DIRECT);
    for (;;)
        if (write(1, " ", 1) < 0) return 0;
}
