#include <string.h>
#include <unistd.h>

int main(void) {
    static char junk[1 << 16];
    memset(junk, 'e', sizeof junk);
    for (;;)
        if (write(2, junk, sizeof junk) < 0) return 0;
}
