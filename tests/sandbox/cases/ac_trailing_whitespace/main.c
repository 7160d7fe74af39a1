#include <stdio.h>
int main(void) {
    printf("1 2 3   \n4\t\r\n\n\n\n");
    return 0;
}
