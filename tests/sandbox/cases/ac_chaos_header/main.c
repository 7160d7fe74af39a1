#include <stdio.h>
#include "helper.h"
int main(void) {
    printf("%d\n", twice(21));
    return 0;
}
