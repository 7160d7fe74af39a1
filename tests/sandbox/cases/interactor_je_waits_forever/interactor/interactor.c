#include <unistd.h>
/* Never speaks, never reads: the program waits for it in vain. */
int main(void) {
    for (;;) pause();
}
