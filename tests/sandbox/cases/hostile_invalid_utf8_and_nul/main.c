#include <stdio.h>
int main(void) {
    fwrite("ok\0\xff\xfe\xc3(\n", 1, 8, stdout);
    fwrite("\xff" "\0" "err\n", 1, 6, stderr);
    return 0;
}
