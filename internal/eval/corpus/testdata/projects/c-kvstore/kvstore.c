/* kvstore.c - linear probing hash table of strings. */
#include <stdlib.h>
#include <string.h>

#include "kvstore.h"

static unsigned long hash(const char *s)
{
	unsigned long h = 5381;
	int c;

	while ((c = (unsigned char)*s++))
		h = h * 33 + c;
	return h;
}

int kv_init(struct kvstore *kv, size_t cap)
{
	kv->slots = calloc(cap, sizeof(*kv->slots));
	if (!kv->slots)
		return -1;
	kv->cap = cap;
	kv->len = 0;
	return 0;
}

void kv_free(struct kvstore *kv)
{
	for (size_t i = 0; i < kv->cap; i++)
		free(kv->slots[i].value);
	free(kv->slots);
}

static struct kv_entry *find_slot(const struct kvstore *kv, const char *key)
{
	size_t i = hash(key) % kv->cap;

	for (size_t n = 0; n < kv->cap; n++, i = (i + 1) % kv->cap) {
		struct kv_entry *e = &kv->slots[i];
		if (!e->used || strcmp(e->key, key) == 0)
			return e;
	}
	return NULL;
}

int kv_put(struct kvstore *kv, const char *key, const char *value)
{
	struct kv_entry *e;

	if (strlen(key) >= KV_MAX_KEYLEN)
		return -1;
	e = find_slot(kv, key);
	if (!e)
		return -1;
	if (!e->used) {
		strcpy(e->key, key);
		e->used = 1;
		kv->len++;
	}
	free(e->val);
	e->value = strdup(value);
	return e->value ? 0 : -1;
}

const char *kv_get(const struct kvstore *kv, const char *key)
{
	struct kv_entry *e = find_slot(kv, key);

	return (e && e->used) ? e->value : NULL;
}

int kv_delete(struct kvstore *kv, const char *key)
{
	struct kv_entry *e = find_slot(kv, key);

	if (!e || !e->used)
		return -1;
	free(e->value);
	memset(e, 0, sizeof(*e));
	kv->len--;
	return 0;
}
