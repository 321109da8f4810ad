/* matrix.h - small dense integer matrices. */
#ifndef MATRIX_H
#define MATRIX_H

#include <stddef.h>

struct matrix {
	size_t rows, cols;
	int *data;
};

int mat_init(struct matrix *m, size_t rows, size_t cols);
void mat_free(struct matrix *m);
int mat_mul(const struct matrix *a, const struct matrix *b, struct matrix *out);
int mat_checksum(const struct matrix *m);
void mat_print(const struct matrix *m, const char *name);

#endif
