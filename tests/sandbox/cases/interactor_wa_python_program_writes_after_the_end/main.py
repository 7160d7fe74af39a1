import sys
# Goes on guessing after the interactor gave up: its writes meet a closed pipe
# (BrokenPipeError), which is the interactor's verdict, not the program's failure.
input()
g = 1
while True:
    print(g, flush=True)
    g += 1
