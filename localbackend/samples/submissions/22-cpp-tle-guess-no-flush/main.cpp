// Binary search with the fast-I/O lines, which untie std::cin from
// std::cout: nothing flushes its guesses any more ("\n", not std::endl). They
// stay in its own buffer, the interactor waits for them, and it waits for the
// replies.
#include <iostream>
#include <string>

int main() {
    std::ios::sync_with_stdio(false);
    std::cin.tie(nullptr);
    long n;
    std::cin >> n;
    long lo = 1, hi = n;
    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        std::cout << mid << "\n";
        std::string reply;
        if (!(std::cin >> reply) || reply == "=") return 0;
        if (reply == ">") lo = mid + 1;
        else hi = mid - 1;
    }
}
