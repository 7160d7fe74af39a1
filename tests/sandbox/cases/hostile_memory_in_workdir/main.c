/* The working folder holds the job's files, read-only: nothing is written there. */
#include <stdio.h>
int main(void) {
    FILE *f = fopen("keep", "w");
    if (!f) {
        perror("fopen");
        return 1;
    }
    puts("written");
    return 0;
}
