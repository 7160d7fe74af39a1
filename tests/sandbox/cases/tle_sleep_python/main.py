import time
time.sleep(1000)
