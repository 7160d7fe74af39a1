#include <stdio.h>
/* Binary search; when one candidate is left it must be the number: says it
 * and ends, as a correct program may, without waiting for the "=". */
int main(void) {
    long n;
    if (scanf("%ld", &n) != 1) return 0;
    long lo = 1, hi = n;
    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        printf("%ld\n", mid);
        fflush(stdout);
        if (lo == hi) return 0;
        char r[4];
        if (scanf("%3s", r) != 1 || r[0] == '=') return 0;
        if (r[0] == '>') lo = mid + 1;
        else hi = mid - 1;
    }
    return 0;
}
