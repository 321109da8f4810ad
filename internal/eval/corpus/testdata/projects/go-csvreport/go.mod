module example.com/csvreport

go 1.26
