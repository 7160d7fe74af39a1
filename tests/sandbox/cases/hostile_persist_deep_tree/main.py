# Prints "fresh" unless an earlier case left a mark below the supervisor's wipe depth (64).
import os
d = os.open("/tmp", os.O_RDONLY)
for _ in range(70):
    try:
        os.mkdir("d", dir_fd=d)
    except FileExistsError:
        pass
    d = os.open("d", os.O_RDONLY, dir_fd=d)
try:
    os.stat("mark", dir_fd=d)
    print("persisted")
except FileNotFoundError:
    print("fresh")
os.close(os.open("mark", os.O_CREAT | os.O_WRONLY, dir_fd=d))
