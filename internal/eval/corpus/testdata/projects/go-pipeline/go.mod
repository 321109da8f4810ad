module example.com/pipeline

go 1.26
