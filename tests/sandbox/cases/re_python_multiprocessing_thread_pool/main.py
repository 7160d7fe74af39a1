# multiprocessing's ThreadPool makes pipes (its queues' notifier), which a
# run may not make (a pipe's inode number moves a counter the whole host
# shares): it fails at once, saying so, and is RE (the README's known limits).
import multiprocessing.pool

with multiprocessing.pool.ThreadPool(2) as pool:
    print(sum(pool.map(abs, range(10))))
