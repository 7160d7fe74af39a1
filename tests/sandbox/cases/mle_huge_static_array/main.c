#include <stdio.h>
char big[1u << 30];
int main(void) {
    ((volatile char *)big)[12345] = 1;
    printf("%d\n", big[12345]);
    return 0;
}
