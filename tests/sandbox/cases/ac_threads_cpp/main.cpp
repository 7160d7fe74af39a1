// Ordinary threads work: eight std::threads and a std::async.
#include <atomic>
#include <future>
#include <iostream>
#include <thread>
#include <vector>
int main() {
    std::atomic<long> sum{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; i++)
        threads.emplace_back([&sum, i] {
            for (int k = 0; k < 100000; k++) sum += (k % 8 == i);
        });
    for (auto &t : threads) t.join();
    auto answer = std::async(std::launch::async, [] { return 42; });
    std::cout << sum << " " << answer.get() << "\n";
}
