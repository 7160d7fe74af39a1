raise ValueError("bad token: MemoryError")
