/* Well under the output limit: 150 000 spaces and an x on one line. A naive
 * trailing-whitespace regex is quadratic on it (hours for a few MiB). */
#include <stdio.h>
#include <string.h>
int main(void) {
    static char buf[150000];
    memset(buf, ' ', sizeof buf);
    fwrite(buf, 1, sizeof buf, stdout);
    puts("x");
    return 0;
}
