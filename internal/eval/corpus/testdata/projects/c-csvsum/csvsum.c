/* csvsum.c - sum one numeric column of a CSV file: csvsum FILE COLUMN */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"

int main(int argc, char **argv)
{
	char header_line[1024], line[1024];
	struct row header, row;
	double sum = 0;
	int col, lineno = 1;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: csvsum FILE COLUMN\n");
		return 2;
	}
	f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	if (!fgets(header_line, sizeof(header_line), f) || csv_split(header_line, &header) != 0) {
		fprintf(stderr, "%s: no header\n", argv[1]);
		return 1;
	}
	col = csv_column(&header, argv[2]);
	if (col < 0) {
		fprintf(stderr, "%s: no column %s\n", argv[1], argv[2]);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (csv_split(line, &row) != 0)
			return 1;
		sum += strtod(csv_field(&row, col), NULL);
		csv_free(&row);
	}
	fclose(f);
	printf("%s: %d rows, %s total %.2f\n", argv[1], lineno - 1, argv[2], sum);
	return 0;
}
