BOUNDS = []
