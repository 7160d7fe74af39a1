#include <iostream>
int main() {
    long long n;
    std::cin >> n;
    std::cout << n << " " << 0 << "\n";
}
