print("forty-two")
