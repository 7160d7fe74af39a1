#define _GNU_SOURCE
/* Memory outside the resident set: read faults on a PROT_READ private
 * anonymous mapping map the shared zero page (not in RSS, not in RLIMIT_DATA)
 * but each 2 MiB touched costs a 4 KiB page table: 700 MiB of them once went
 * unjudged under a 64 MiB limit. Page tables count. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
int main(int argc, char **argv) {
    long mib = 1000; /* MiB of page tables */
    if (scanf("%ld", &mib) != 1) mib = 1000;
    size_t span = (size_t)mib * 256 * (2ul << 20); /* 256 PTE pages per MiB */
    volatile char *p = mmap(NULL, span, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); return 1; }
    long sum = 0;
    for (size_t off = 0; off < span; off += 2ul << 20) sum += p[off];
    fprintf(stderr, "touched %zu GiB of address space, sum %ld\n", span >> 30, sum);
    puts("done");
    return 0;
}
