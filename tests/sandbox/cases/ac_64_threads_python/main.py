# 64 threads alive at once under a 256 MiB limit.
import threading

results = [0] * 64
all_started = threading.Barrier(64)


def work(i):
    all_started.wait()
    results[i] = sum(range(i * 1000))


threads = [threading.Thread(target=work, args=(i, )) for i in range(64)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(sum(results))
