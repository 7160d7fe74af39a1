#include <iostream>

#include "magic.h"

int main() {
    long long n;
    std::cin >> n;
    std::cout << n + MAGIC << '\n';
    return 0;
}
