/* /dev/shm is for POSIX semaphores: 1 MiB, not a place for 100 MiB. */
#include <stdio.h>
#include <string.h>
int main(void) {
    static char block[1 << 20];
    memset(block, 1, sizeof block);
    FILE *f = fopen("/dev/shm/keep", "w");
    if (!f) {
        perror("fopen");
        return 2;
    }
    for (int i = 0; i < 100; i++)
        if (fwrite(block, 1, sizeof block, f) != sizeof block || fflush(f) != 0) {
            perror("fwrite");
            return 1;
        }
    puts("kept");
    return 0;
}
