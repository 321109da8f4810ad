/* main.c - load "key=value" lines from a file and answer lookups. */
#include <stdio.h>
#include <string.h>

#include "kvstore.h"

static int load(struct kvstore *kv, FILE *f)
{
	char line[256];
	int lineno = 0, loaded;

	while (fgets(line, sizeof(line), f)) {
		char *eq = strchr(line, '=');
		lineno++;
		if (!eq || line[0] == '#')
			continue;
		*eq = '\0';
		line[strcspn(eq + 1, "\n") + (eq + 1 - line)] = '\0';
		if (strlen(line) >= KV_MAX_KEY) {
			fprintf(stderr, "line %d: key too long\n", lineno);
			continue;
		}
		if (kv_put(kv, line) != 0)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct kvstore kv;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: %s FILE KEY...\n", argv[0]);
		return 2;
	}
	if (kv_init(&kv, 128) != 0)
		return 1;
	f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	if (load(&kv, f) != 0) {
		fprintf(stderr, "%s: out of memory\n", argv[1]);
		return 1;
	}
	fclose(f);
	for (int i = 2; i < argc; i++) {
		const char *v = kv_get(&kv, i);
		printf("%s=%s\n", argv[i], v ? v : "(unset)");
	}
	kv_dump(&kv, stdout);
	kv_free(&kv);
	return 0;
}
