raise ValueError("boom")
