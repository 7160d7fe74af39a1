print("unclosed"
