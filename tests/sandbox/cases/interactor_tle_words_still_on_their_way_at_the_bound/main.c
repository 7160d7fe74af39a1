#include <string.h>
#include <unistd.h>
/* Says 256 KiB, more than the pipes between it and the interactor hold, and
 * ends at once. */
int main(void) {
    static char words[256 * 1024];
    memset(words, 'w', sizeof words);
    for (size_t done = 0; done < sizeof words;) {
        ssize_t n = write(1, words + done, sizeof words - done);
        if (n <= 0) return 1;
        done += (size_t)n;
    }
    return 0;
}
