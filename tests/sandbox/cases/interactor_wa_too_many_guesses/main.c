#include <stdio.h>
/* From 1 upwards: far more guesses than allowed. */
int main(void) {
    long n;
    char r[4];
    if (scanf("%ld", &n) != 1) return 0;
    for (long g = 1; g <= n; g++) {
        printf("%ld\n", g);
        fflush(stdout);
        if (scanf("%3s", r) != 1 || r[0] == '=') return 0;
    }
    return 0;
}
