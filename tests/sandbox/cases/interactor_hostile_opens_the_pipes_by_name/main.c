#define _GNU_SOURCE
/* The program's pipes are opened for it; by name they are the supervisor's
 * only. It tries to open each of the case's FIFOs (and to list their folder)
 * every way it could, then guesses as a fair program does: any open that
 * worked makes it guess wrong, and one guess is all it has. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
    long n;
    if (scanf("%ld", &n) != 1) return 0;
    const char *names[] = {"/box/fifo/to-program", "/box/fifo/from-program", "/box/fifo/clock"};
    const int modes[] = {O_RDONLY, O_WRONLY, O_RDWR};
    int opened = 0;
    for (int i = 0; i < 3; i++)
        for (int m = 0; m < 3; m++) {
            int fd = open(names[i], modes[m] | O_NONBLOCK);
            if (fd >= 0) {
                fprintf(stderr, "opened %s\n", names[i]);
                opened++;
                close(fd);
            }
        }
    DIR *d = opendir("/box/fifo");
    if (d) {
        fprintf(stderr, "listed /box/fifo\n");
        opened++;
        closedir(d);
    }
    printf("%ld\n", opened ? n + 1 : 1);
    fflush(stdout);
    char reply[8];
    return scanf("%7s", reply) == 1 ? 0 : 0;
}
