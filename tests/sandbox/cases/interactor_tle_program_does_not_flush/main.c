#include <stdio.h>
/* Never flushes: its guess stays in its own buffer, and both wait. */
int main(void) {
    long n;
    char r[4];
    if (scanf("%ld", &n) != 1) return 0;
    printf("%ld\n", n / 2);
    if (scanf("%3s", r) != 1) return 0;
    return 0;
}
