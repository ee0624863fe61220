/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* silo.conf's reader: YAML nodes to values (config_yaml.c), the entries'
 * keys (config_fields.c), the file (config_parse.c). */
#ifndef SILO_CONFIG_YAML_H
#define SILO_CONFIG_YAML_H

#include <yaml.h>
#include "config.h"

struct pctx {
	yaml_document_t doc;
	const char *file;
	char *err; /* "FILE:LINE: what" */
	size_t len;
};

/* Says what is wrong at n's line; returns -EINVAL. */
int y_bad(struct pctx *c, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int y_line(const yaml_node_t *n);
yaml_node_t *y_node(struct pctx *c, int id);
/* n's text, or NULL (and the error) when n is a list or mapping. */
const char *y_scalar(struct pctx *c, const yaml_node_t *n, const char *key);
int y_str(struct pctx *c, const yaml_node_t *n, const char *key, char *buf,
	  size_t len);
/* y_str of a name the kernel takes for an interface. */
int y_ifname(struct pctx *c, const yaml_node_t *n, const char *key, char *buf,
	     size_t len);
int y_bool(struct pctx *c, const yaml_node_t *n, const char *key, bool *val);
int y_u32(struct pctx *c, const yaml_node_t *n, const char *key, __u32 lo,
	  __u32 hi, __u32 *val);
/* One of names (ends with NULL): its index in *val. */
int y_choice(struct pctx *c, const yaml_node_t *n, const char *key,
	     const char *const *names, int *val);
int y_proto(struct pctx *c, const yaml_node_t *n, int *proto);

/* Calls fn for each key and value of mapping n; fn returns -ENOENT for a
 * key it does not know. */
typedef int (*field_fn)(struct pctx *c, const char *key, yaml_node_t *val,
			void *obj);
int y_each(struct pctx *c, yaml_node_t *n, const char *what, field_fn fn,
	   void *obj);

/* A kind of entry: its size, keys and checks (config_fields.c). */
struct kind {
	const char *what; /* in messages: "a device" */
	size_t size, line_off;
	field_fn field;
	int (*check)(struct pctx *c, yaml_node_t *n, void *obj);
	void (*init)(void *obj);
};

extern const struct kind cfg_kind_devices, cfg_kind_services, cfg_kind_groups,
	cfg_kind_qmaps;

#endif /* SILO_CONFIG_YAML_H */
