/* main.c - print the length of a route given as lat,lon pairs. */
#include <stdio.h>
#include <stdlib.h>

#include "geo.h"

int main(int argc, char **argv)
{
	struct route r = {0};
	struct point last;

	for (int i = 1; i < argc; i++) {
		struct point p;
		if (sscanf(argv[i], "%lf,%lf", &p.lat, &p.lon) != 2) {
			fprintf(stderr, "bad point %s (want lat,lon)\n", argv[i]);
			return 2;
		}
		if (route_push(&r, p) != 0) {
			fprintf(stderr, "too many points\n");
			return 2;
		}
	}
	if (route_peek(&r, &last) == 0)
		printf("destination: %.4f,%.4f\n", last.lat, last.lon);
	printf("route: %d points, %.1f km\n", r.n, route_length_km(&r));
	return 0;
}
