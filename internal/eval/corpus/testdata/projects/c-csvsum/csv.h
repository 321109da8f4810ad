/* csv.h - split comma-separated lines into fields (no quoting). */
#ifndef CSV_H
#define CSV_H

struct row {
	char **fields;
	int n;
};

int csv_split(char *line, struct row *out);
const char *csv_field(const struct row *r, int i);
int csv_column(const struct row *header, const char *name);
void csv_free(struct row *r);

#endif
