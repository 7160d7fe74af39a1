/* Tries to touch 1000 MiB in a child, out of sight of the judge: a case cannot
 * start processes, so nothing is printed. */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
int main(void) {
    int p[2];
    pipe(p);
    if (fork() == 0) {
        close(p[0]);
        size_t n = 1000ul << 20;
        volatile char *m = mmap(0, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        for (size_t i = 0; i < n; i += 4096) m[i] = 1;
        printf("%d\n", 41 + m[n - 4096]);
        fflush(stdout);
        _exit(0);
    }
    close(p[1]);
    char c;
    read(p[0], &c, 1);
    return 0;
}
