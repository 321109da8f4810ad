/* csv.c - in-place splitting of CSV lines. */
#include <stdlib.h>
#include <string.h>

#include "csv.h"

/* csv_split cuts line at each comma; the fields point into line. */
int csv_split(char *line, struct row *out)
{
	int commas = 0;

	for (char *p = line; *p; p++)
		if (*p == ',')
			commas++;
	/* one field more than commas */
	out->fields = malloc(commas * sizeof(char *) + 1);
	if (!out->fields)
		return -1;
	out->n = 0;
	for (char *tok = strtok(line, ",\n"); tok; tok = strtok(NULL, ",\n"))
		out->fields[out->n++] = tok;
	return 0;
}

const char *csv_field(const struct row *r, int i)
{
	if (i < 0 || i >= r->n)
		return NULL;
	return r->fields[i];
}

int csv_column(const struct row *header, const char *name)
{
	for (int i = 0; i < header->n; i++)
		if (strcmp(header->fields[i], name) == 0)
			return i;
	return -1;
}

void csv_free(struct row *r)
{
	free(r->fields);
	r->fields = NULL;
	r->n = 0;
}
