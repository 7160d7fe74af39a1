print(" 3")
