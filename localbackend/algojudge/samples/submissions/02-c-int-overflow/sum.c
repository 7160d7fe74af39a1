#include <stdio.h>
int main(void) {
    int a, b;
    if (scanf("%d %d", &a, &b) != 2) return 1;
    printf("%d\n", a + b); /* 2000000000 + 2000000000 overflows */
    return 0;
}
