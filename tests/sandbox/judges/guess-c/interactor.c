/* Guess the number: the input holds N and the number of guesses allowed,
 * the answer the number. Exit codes as testlib's. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long n, limit, secret;
    FILE *in = argc > 3 ? fopen(argv[1], "r") : NULL, *ans = argc > 3 ? fopen(argv[3], "r") : NULL;
    if (!in || !ans || fscanf(in, "%ld %ld", &n, &limit) != 2 || fscanf(ans, "%ld", &secret) != 1) {
        fprintf(stderr, "bad test data\n");
        return 3;
    }
    printf("%ld\n", n);
    fflush(stdout);
    for (long q = 1;; q++) {
        char line[64];
        if (!fgets(line, sizeof line, stdin)) {
            fprintf(stderr, "the program stopped after %ld guesses\n", q - 1);
            return 1;
        }
        char *end;
        long g = strtol(line, &end, 10);
        if (end == line || (*end != '\n' && *end != '\0') || g < 1 || g > n) {
            fprintf(stderr, "guess %ld is not a number from 1 to %ld\n", q, n);
            return 2;
        }
        if (g == secret) {
            printf("=\n");
            fflush(stdout);
            fprintf(stderr, "found %ld in %ld guesses\n", secret, q);
            return 0;
        }
        if (q >= limit) {
            fprintf(stderr, "not found in %ld guesses\n", limit);
            return 1;
        }
        printf(g < secret ? ">\n" : "<\n");
        fflush(stdout);
    }
}
