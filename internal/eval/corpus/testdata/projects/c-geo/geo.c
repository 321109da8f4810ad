/* geo.c - haversine distance and route helpers. */
#include <math.h>

#include "geo.h"

#define EARTH_RADIUS_KM 6371.0
#define DEG2RAD(d) ((d) * M_PI / 180.0)

double geo_distance_km(struct point a, struct point b)
{
	double dlat = DEG2RAD(b.lat - a.lat);
	double dlon = DEG2RAD(b.lon - a.lon);
	double h = sin(dlat / 2) * sin(dlat / 2) +
		   cos(DEG2RAD(a.lat)) * cos(DEG2RAD(b.lat)) * sin(dlon / 2) * sin(dlon / 2);

	return 2 * EARTH_RADIUS_KM * asin(sqrt(h));
}

int route_push(struct route *r, struct point p)
{
	if (r->n >= (int)(sizeof(r->pts) / sizeof(r->pts[0])))
		return -1;
	r->pts[r->n++] = p;
	return 0;
}

double route_length_km(const struct route *r)
{
	double total = 0;

	for (int i = 1; i < r->n; i++)
		total += geo_distance_km(r->pts[i - 1], r->pts[i]);
	return total;
}
