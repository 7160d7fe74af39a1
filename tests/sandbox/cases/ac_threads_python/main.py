# Ordinary threads work: threading, and a thread pool (concurrent.futures;
# multiprocessing's ThreadPool needs pipes, which a run may not make).
import concurrent.futures
import threading

seen = []
threads = [threading.Thread(target=seen.append, args=(i, )) for i in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
with concurrent.futures.ThreadPoolExecutor(4) as pool:
    squares = sum(pool.map(lambda x: x * x, range(100)))
with concurrent.futures.ThreadPoolExecutor(2) as pool:
    total = sum(pool.map(abs, range(10)))
print(len(seen), squares, total)
