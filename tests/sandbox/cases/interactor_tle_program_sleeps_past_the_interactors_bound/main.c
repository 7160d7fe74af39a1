#include <stdio.h>
#include <unistd.h>
/* Reads N, then sleeps without a word, with a time limit whose wall bound
 * (3 T + 1 s) is longer than the interactor's own (2 x its time + 1 s): the
 * interactor's bound must outlast the program's, or the sleeper's TLE would
 * read as the interactor's failure (JE, and no later case judged). */
int main(void) {
    long n;
    if (scanf("%ld", &n) != 1) return 0;
    for (;;) pause();
}
