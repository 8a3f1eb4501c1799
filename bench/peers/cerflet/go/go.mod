module kiln.bench/peers/cerflet/go

go 1.22
