/* A broken interactor: it dies of an assertion after the first guess. */
#include <assert.h>
#include <stdio.h>

int main(int argc, char **argv) {
    long n, limit;
    char line[64];
    FILE *in = argc > 1 ? fopen(argv[1], "r") : NULL;
    if (!in || fscanf(in, "%ld %ld", &n, &limit) != 2) return 3;
    printf("%ld\n", n);
    fflush(stdout);
    assert(fgets(line, sizeof line, stdin) == NULL);
    return 0;
}
