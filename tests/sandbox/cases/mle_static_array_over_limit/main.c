#include <stdio.h>
char big[48u << 20];
int main(void) {
    ((volatile char *)big)[12345] = 1;
    printf("%d\n", big[12345]);
    return 0;
}
