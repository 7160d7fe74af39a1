print("1")
print()
print("2")
