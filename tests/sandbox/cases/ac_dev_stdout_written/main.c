/* Writing the answer through /dev/stdout still works. */
#include <stdio.h>
int main(void) {
    FILE *out = fopen("/dev/stdout", "w");
    if (!out) {
        perror("fopen");
        return 1;
    }
    fputs("42\n", out);
    return 0;
}
