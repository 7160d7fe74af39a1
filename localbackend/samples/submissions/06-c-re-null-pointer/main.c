#include <stdio.h>

int main(void) {
    long long a, b;
    volatile long long *answer = NULL;
    if (scanf("%lld %lld", &a, &b) != 2) return 1;
    *answer = a + b;
    printf("%lld\n", *answer);
    return 0;
}
