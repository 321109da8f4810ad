/* main.c - multiply two matrices and print the product and its checksum. */
#include <stdio.h>

#include "matrix.h"

static void fill(struct matrix *m, int seed)
{
	for (size_t i = 0; i < m->rows * m->cols; i++)
		m->data[i] = (int)((i * 7 + seed) % 11) - 5;
}

int main(int argc, char **argv)
{
	struct matrix a, b, c;

	if (mat_init(&a, 4, 3) != 0 || mat_init(&b, 3, 5) != 0)
		return 1;
	fill(&a, 1);
	fill(&b, 4);
	if (mat_mul(&a, &b, &c) != 0) {
		fprintf(stderr, "dimension mismatch\n");
		return 1;
	}
	mat_print(&a, "A");
	mat_print(&b, "B");
	mat_print(&c, "A*B");
	printf("checksum(A*B) = %d\n", mat_checksum(&c));
	mat_free(&a);
	mat_free(&b);
	mat_free(&c);
	return 0;
}
