/* Deep recursion in the main thread: about 150 MiB of stack under a 256 MiB
 * limit (the main thread's stack is bounded by the memory limit alone). */
#include <stdio.h>
#include <string.h>
static long depth(long n) {
    volatile char frame[1024];
    memset((char *)frame, (int)n, sizeof frame);
    if (n == 0) return frame[7];
    return depth(n - 1) + frame[n % 1024] % 2;
}
int main(void) {
    printf("%ld\n", depth(150000) >= 0);
    return 0;
}
