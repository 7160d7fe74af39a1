#include <stdio.h>
#include <unistd.h>
int main(void) {
    puts("42");
    fflush(stdout);
    close(1);
    close(2);
    for (volatile int i = 0; i < 1000000; i++) {}
    return 0;
}
