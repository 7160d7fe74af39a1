#define _GNU_SOURCE
/* Memory out of sight in record locks: 30000 open-file-description locks on
 * 60 files in /tmp (a lock list per file keeps it quick), each placed to
 * hold one byte of data (its offset in its slot), about 6 MiB of the
 * kernel's memory under a 4 MiB limit, read back through a second
 * descriptor of each file. Where locks are refused the program fails (RE);
 * it must never get AC. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#define FILES 60
#define LOCKS 500 /* a file */
#define SLOT 512

static int lock_at(int fd, int cmd, off_t start, off_t len, struct flock *fl) {
    *fl = (struct flock){.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
    return fcntl(fd, cmd, fl);
}

static off_t place(long i) { return i * SLOT + (i * 7919) % 256; }

int main(void) {
    int held[FILES], probe[FILES];
    struct flock fl;
    for (int f = 0; f < FILES; f++) {
        char path[32];
        snprintf(path, sizeof path, "/tmp/locks-%d", f);
        held[f] = open(path, O_CREAT | O_RDWR, 0600);
        probe[f] = open(path, O_RDWR);
        if (held[f] < 0 || probe[f] < 0) return 2;
        for (long i = 0; i < LOCKS; i++) {
            if (lock_at(held[f], F_OFD_SETLK, place(i), 1, &fl) < 0) {
                perror("lock");
                return 1;
            }
        }
    }
    long right = 0;
    for (int f = 0; f < FILES; f++)
        for (long i = 0; i < LOCKS; i++)
            right += lock_at(probe[f], F_OFD_GETLK, i * SLOT, SLOT, &fl) == 0 &&
                     fl.l_type == F_WRLCK && fl.l_start == place(i);
    printf("%s\n", right == (long)FILES * LOCKS ? "all read back" : "lost some");
    return 0;
}
