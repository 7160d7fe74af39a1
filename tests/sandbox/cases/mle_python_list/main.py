keep = []
while True:
    keep.append(bytearray(1 << 20))
