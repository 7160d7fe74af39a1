// 64 std::threads alive at once under a 256 MiB limit.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <iostream>
#include <thread>
#include <vector>
int main() {
    std::atomic<long> sum{0};
    std::mutex m;
    std::condition_variable cv;
    int started = 0;
    std::vector<std::thread> threads;
    for (int i = 0; i < 64; i++)
        threads.emplace_back([&, i] {
            {
                std::unique_lock<std::mutex> lock(m);
                if (++started == 64) cv.notify_all();
                cv.wait(lock, [&] { return started == 64; });
            }
            std::vector<int> mine(1000, i);
            for (int v : mine) sum += v;
        });
    for (auto &t : threads) t.join();
    std::cout << sum << "\n";
}
