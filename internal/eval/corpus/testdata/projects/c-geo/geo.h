/* geo.h - great-circle distances and a bounded stack of waypoints. */
#ifndef GEO_H
#define GEO_H

struct point {
	double lat, lon; /* degrees */
};

struct route {
	struct point pts[32];
	int n;
};

double geo_distance_km(struct point a, struct point b);
int route_push(struct route *r, struct point p);
int route_peek(const struct route *r, struct point *out);
double route_length_km(const struct route *r);

#endif
