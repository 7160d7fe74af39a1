#include <stdio.h>
#include <string.h>
int main(void) {
    static char chunk[1 << 16];
    memset(chunk, 'a', sizeof chunk);
    for (int i = 0; i < 64; i++) fwrite(chunk, 1, sizeof chunk, stdout);
    return 0;
}
