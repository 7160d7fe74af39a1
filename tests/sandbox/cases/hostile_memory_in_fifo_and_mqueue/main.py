# FIFOs and POSIX message queues would hold memory out of sight too.
import os

made = []
for make in (lambda: os.mkfifo("/tmp/fifo"),
             lambda: os.close(os.open("/dev/mqueue/q", os.O_CREAT | os.O_RDONLY)),
             lambda: os.close(os.open("/dev/mqueue/q", os.O_CREAT | os.O_RDWR))):
    try:
        make()
        made.append(True)
    except OSError:
        made.append(False)
print("made" if any(made) else "refused")
