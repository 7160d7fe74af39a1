#include <stdio.h>
#include <stdlib.h>
int main(void) {
    char *p = malloc(1ul << 34);
    if (!p) {
        fputs("out of memory\n", stderr);
        return 1;
    }
    p[0] = 1;
    return 0;
}
