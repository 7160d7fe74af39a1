#include <stdio.h>
#include <stdlib.h>

int main(void) {
    long n;
    char r[4];
    if (scanf("%ld", &n) != 1) return 0;
    printf("%ld\n", n / 2);
    fflush(stdout);
    if (scanf("%3s", r) != 1) return 0;
    abort();
}
