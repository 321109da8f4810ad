/* kvstore.h - a tiny open-addressing string key/value store. */
#ifndef KVSTORE_H
#define KVSTORE_H

#include <stddef.h>

#define KV_MAX_KEYLEN 64

struct kv_entry {
	char key[KV_MAX_KEYLEN];
	char *value;
	int used;
};

struct kvstore {
	struct kv_entry *slots;
	size_t cap;
	size_t len;
};

int kv_init(struct kvstore *kv, size_t cap);
void kv_free(struct kvstore *kv);
int kv_put(struct kvstore *kv, const char *key, const char *value);
const char *kv_get(const struct kvstore *kv, const char *key);
int kv_delete(struct kvstore *kv, const char *key);

#endif
