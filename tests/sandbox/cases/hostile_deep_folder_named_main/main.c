/* Replaces the link "main" in the working folder by a folder chain deeper than the wipe goes. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
int main(void) {
    puts("42");
    fflush(stdout);
    unlink("main");
    int d = open(".", O_RDONLY | O_DIRECTORY);
    const char *name = "main";
    for (int i = 0; i < 70; i++) {
        mkdirat(d, name, 0700);
        int n = openat(d, name, O_RDONLY | O_DIRECTORY);
        close(d);
        d = n;
        name = "d";
    }
    return 0;
}
