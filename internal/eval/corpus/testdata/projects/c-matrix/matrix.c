/* matrix.c - naive matrix product and helpers. */
#include <stdio.h>
#include <stdlib.h>

#include "matrix.h"

#define AT(m, i, j) ((m)->data[(i) * (m)->cols + (j)])

int mat_init(struct matrix *m, size_t rows, size_t cols)
{
	m->data = calloc(rows * cols, sizeof(int));
	if (!m->data)
		return -1;
	m->rows = rows;
	m->cols = cols;
	return 0;
}

void mat_free(struct matrix *m)
{
	free(m->data);
	m->data = NULL;
}

int mat_mul(const struct matrix *a, const struct matrix *b, struct matrix *out)
{
	if (a->cols != b->rows)
		return -1;
	if (mat_init(out, a->rows, b->cols) != 0)
		return -1;
	for (size_t i = 0; i < a->rows; i++)
		for (size_t j = 0; j < b->cols; j++) {
			int sum = 0;
			for (size_t k = 0; k < a->cols; k++)
				sum += AT(a, i, k) * AT(b, k, j);
			AT(out, i, j) = sum;
		}
	return 0;
}

/* mat_checksum mixes every element into a single value. */
int mat_checksum(const struct matrix *m)
{
	int h = 17;

	for (int i = 0; i < m->rows * m->cols; i++)
		h = h * 31 + m->data[i];
	return h;
}

void mat_print(const struct matrix *m, const char *name)
{
	printf("%s (%zux%zu):\n", name, m->rows, m->cols);
	for (size_t i = 0; i < m->rows; i++) {
		for (size_t j = 0; j < m->cols; j++)
			printf(" %6d", AT(m, i, j));
		putchar('\n');
	}
}
