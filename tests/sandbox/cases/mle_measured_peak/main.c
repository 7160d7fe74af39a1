#include <stdio.h>
#include <stdlib.h>
/* Touches 48 MiB, over its 32 MiB limit, and still ends normally. */
int main(void) {
    size_t n = 48u << 20;
    volatile char *p = malloc(n);
    for (size_t i = 0; i < n; i += 4096) p[i] = 1;
    printf("%d\n", p[n - 4096]);
    return 0;
}
