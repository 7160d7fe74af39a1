/* Recursion without end: its stack is memory, judged as memory (MLE). */
#include <stdio.h>
#include <string.h>
static long down(long n) {
    volatile char frame[1024];
    memset((char *)frame, (int)n, sizeof frame);
    return down(n + 1) + frame[n % 1024];
}
int main(void) {
    printf("%ld\n", down(0));
    return 0;
}
