/* /out belongs to the sandbox uid: taking it away makes the next run fail. */
#include <stdio.h>
#include <sys/stat.h>
int main(void) { chmod("/out", 0); puts("42"); return 0; }
