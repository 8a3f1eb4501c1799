module kiln.bench/peers/go

go 1.22
