module kiln.bench/clients/study-go

go 1.22
