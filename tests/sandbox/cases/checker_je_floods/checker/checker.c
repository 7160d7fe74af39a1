#include <stdio.h>
int main(void){for (;;) fputs("gigabytes of text ", stderr);}
