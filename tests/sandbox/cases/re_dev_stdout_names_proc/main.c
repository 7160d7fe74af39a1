/* /dev/stdout names /proc/self/fd/1, and /proc is nothing for a run (its
 * paths' lookups once carried a value to a later run): writing the answer
 * there fails, and is RE (the README's known limits). Its stdout works. */
#include <stdio.h>
int main(void) {
    FILE *out = fopen("/dev/stdout", "w");
    if (!out) {
        perror("fopen /dev/stdout");
        return 1;
    }
    fputs("42\n", out);
    return 0;
}
