#include <stdio.h>
#include <string.h>

static char chunk[1 << 20];

int main(void) {
    memset(chunk, 'y', sizeof chunk);
    for (int i = 0; i < 48; i++) fwrite(chunk, 1, sizeof chunk, stdout);
    return 0;
}
