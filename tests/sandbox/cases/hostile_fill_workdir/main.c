#include <stdio.h>
#include <string.h>
/* Fills the working folder with files until the disk says no. */
int main(void) {
    static char block[1 << 16];
    memset(block, 'x', sizeof block);
    char name[32];
    for (int i = 0; i < 100000; i++) {
        snprintf(name, sizeof name, "fill%d", i);
        FILE *f = fopen(name, "w");
        if (!f) break;
        int ok = 1;
        for (int j = 0; j < 64 && ok; j++) ok = fwrite(block, 1, sizeof block, f) == sizeof block;
        if (fclose(f) != 0 || !ok) break;
    }
    puts("full");
    return 0;
}
