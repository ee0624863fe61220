// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * What apply made, per namespace, in a JSON file under the state directory
 * (not in bpffs: it must outlive a reboot, so that the first apply after
 * one still knows what is its own to remove). Written whole to a temporary
 * file and renamed: a crash leaves the old state or the new one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <json-c/json.h>
#include "config.h"
#include "../util.h"

static const char *const kind_keys[CFG_KINDS] = {
	[CFG_DEVICE] = "devices",
	[CFG_SERVICE] = "services",
	[CFG_GROUP] = "reuseport",
	[CFG_QUEUE] = "queue-maps",
};

static const char *const op_names[] = {
	[SILO_CHANGE_ADD] = "add",	 [SILO_CHANGE_UPDATE] = "change",
	[SILO_CHANGE_REMOVE] = "remove", [SILO_CHANGE_ADOPT] = "adopt",
	[SILO_CHANGE_WAIT] = "wait",
};

const char *silo_change_op_name(enum silo_change_op op)
{
	return (unsigned int)op < ARRAY_SIZE(op_names) ? op_names[op] : "?";
}

void cfg_service_name(char *buf, size_t len, const struct silo_service_opts *o)
{
	char addr[INET6_ADDRSTRLEN] = "any";

	if (o->family)
		inet_ntop(o->family == SILO_AF_INET ? AF_INET : AF_INET6,
			  o->addr, addr, sizeof(addr));
	snprintf(buf, len, "%s %u %s",
		 o->protocol == IPPROTO_TCP ? "tcp" : "udp", o->port, addr);
}

int cfg_state_path(char *buf, size_t len, const char *dir, const char *netns)
{
	int n;

	if (netns)
		n = snprintf(buf, len, "%s/netns/%s.json", dir, netns);
	else
		n = snprintf(buf, len, "%s/host.json", dir);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int cfg_owned_add(struct cfg_owned *own, enum cfg_kind kind, const char *name)
{
	char(*names)[CFG_NAME_MAX];

	if (cfg_owned_has(own, kind, name))
		return 0;
	names = realloc(own->names[kind], (own->nr[kind] + 1) * sizeof(*names));
	if (!names)
		return -ENOMEM;
	snprintf(names[own->nr[kind]], CFG_NAME_MAX, "%s", name);
	own->names[kind] = names;
	own->nr[kind]++;
	return 0;
}

bool cfg_owned_has(const struct cfg_owned *own, enum cfg_kind kind,
		   const char *name)
{
	size_t i;

	for (i = 0; i < own->nr[kind]; i++)
		if (!strcmp(own->names[kind][i], name))
			return true;
	return false;
}

bool cfg_owned_equal(const struct cfg_owned *a, const struct cfg_owned *b)
{
	size_t i;
	int k;

	if (strcmp(json_object_to_json_string(a->pending) ?: "",
		   json_object_to_json_string(b->pending) ?: ""))
		return false;
	for (k = 0; k < CFG_KINDS; k++) {
		if (a->nr[k] != b->nr[k])
			return false;
		for (i = 0; i < a->nr[k]; i++)
			if (!cfg_owned_has(b, k, a->names[k][i]))
				return false;
	}
	return true;
}

void cfg_owned_free(struct cfg_owned *own)
{
	int k;

	for (k = 0; k < CFG_KINDS; k++)
		free(own->names[k]);
	json_object_put(own->pending);
	memset(own, 0, sizeof(*own));
}

/* No file: nothing owned (a first apply). */
int cfg_state_read(const char *path, struct cfg_owned *own)
{
	json_object *root, *list;
	int k, err = 0;
	size_t i;

	memset(own, 0, sizeof(*own));
	if (access(path, F_OK))
		return errno == ENOENT ? 0 : -errno;
	root = json_object_from_file(path);
	if (!root || !json_object_is_type(root, json_type_object)) {
		pr_err("%s: not silo's state (%s): remove it, and what it listed is no longer apply's to remove\n",
		       path, json_util_get_last_err());
		json_object_put(root);
		return -EINVAL;
	}
	for (k = 0; k < CFG_KINDS && !err; k++) {
		if (!json_object_object_get_ex(root, kind_keys[k], &list) ||
		    !json_object_is_type(list, json_type_array))
			continue;
		for (i = 0; i < json_object_array_length(list) && !err; i++) {
			const char *name = json_object_get_string(
				json_object_array_get_idx(list, i));

			if (name)
				err = cfg_owned_add(own, k, name);
		}
	}
	if (json_object_object_get_ex(root, "pending", &list) &&
	    json_object_is_type(list, json_type_array))
		own->pending = json_object_get(list);
	json_object_put(root);
	return err;
}

/*
 * path's new contents, whole or not at all: written to path.new and synced,
 * then renamed over path and the folder synced. A crash or a full disk
 * before the rename leaves the old file as it was (a stale path.new is
 * overwritten next time); after it, the new one is on disk.
 */
static int write_whole(const char *path, const char *tmp, const char *dir,
		       const char *text)
{
	size_t len = strlen(text), off = 0;
	ssize_t n;
	int fd, dfd, err = 0;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (!err && off < len) {
		n = write(fd, text + off, len - off);
		if (n < 0 && errno != EINTR)
			err = -errno;
		else if (n > 0)
			off += n;
	}
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	/* Tests only: a crash between the write and the rename. */
	if (!err && getenv("SILO_TEST_STATE_CRASH"))
		_exit(137);
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		return err;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

int cfg_state_write(const char *path, const struct cfg_owned *own)
{
	json_object *root = json_object_new_object();
	char tmp[PATH_MAX], dir[PATH_MAX];
	int k, err = 0;
	size_t i;

	if (snprintf(tmp, sizeof(tmp), "%s.new", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	for (k = 0; k < CFG_KINDS; k++) {
		json_object *list = json_object_new_array();

		for (i = 0; i < own->nr[k]; i++)
			json_object_array_add(
				list, json_object_new_string(own->names[k][i]));
		json_object_object_add(root, kind_keys[k], list);
	}
	if (own->pending)
		json_object_object_add(root, "pending",
				       json_object_get(own->pending));
	err = silo_mkdir_p(dir, 0755);
	if (!err)
		err = write_whole(path, tmp, dir,
				  json_object_to_json_string_ext(
					  root, JSON_C_TO_STRING_PRETTY));
	if (err) {
		pr_err("cannot write apply's state to %s: %s\n", path,
		       strerror(-err));
		unlink(tmp);
	}
	json_object_put(root);
	return err;
}

static const struct {
	const char *object;
	unsigned int what;
} objects[] = {
	{ "device", SILO_APPLY_DEVICES },
	{ "service", SILO_APPLY_SERVICES },
	{ "reuseport", SILO_APPLY_GROUPS },
	{ "queue-map", SILO_APPLY_QUEUES },
};

/* The object names of a change, as static strings; NULL: not one. */
static const char *object_of(const char *name, unsigned int *what)
{
	size_t i;

	for (i = 0; name && i < ARRAY_SIZE(objects); i++) {
		if (!strcmp(objects[i].object, name)) {
			*what = objects[i].what;
			return objects[i].object;
		}
	}
	return NULL;
}

static json_object *change_json(const struct silo_change *c)
{
	json_object *o = json_object_new_object();

	json_object_object_add(
		o, "op", json_object_new_string(silo_change_op_name(c->op)));
	json_object_object_add(o, "object", json_object_new_string(c->object));
	json_object_object_add(o, "name", json_object_new_string(c->name));
	json_object_object_add(o, "detail", json_object_new_string(c->detail));
	json_object_object_add(o, "line", json_object_new_int(c->line));
	json_object_object_add(o, "error", json_object_new_int(c->err));
	return o;
}

int cfg_pending_update(struct cfg_owned *now, const struct cfg_owned *old,
		       const struct silo_change *ch, size_t n,
		       unsigned int what, cfg_keep_fn keep, void *ctx)
{
	json_object *arr = json_object_new_array(), *o, *v, *name;
	const char *object;
	unsigned int kind;
	size_t i;

	if (!arr)
		return -ENOMEM;
	for (i = 0; old->pending && i < json_object_array_length(old->pending);
	     i++) {
		o = json_object_array_get_idx(old->pending, i);
		if (!json_object_object_get_ex(o, "object", &v))
			continue;
		object = object_of(json_object_get_string(v), &kind);
		if (object &&
		    (!(kind & what) ||
		     (json_object_object_get_ex(o, "name", &name) &&
		      keep(ctx, object, json_object_get_string(name)))))
			json_object_array_add(arr, json_object_get(o));
	}
	for (i = 0; i < n; i++)
		if (ch[i].err || ch[i].op == SILO_CHANGE_WAIT)
			json_object_array_add(arr, change_json(&ch[i]));
	json_object_put(now->pending);
	now->pending = arr;
	return 0;
}

static void change_read(json_object *o, struct silo_change *c)
{
	unsigned int what;
	json_object *v;
	size_t i;

	memset(c, 0, sizeof(*c));
	if (json_object_object_get_ex(o, "op", &v))
		for (i = 0; i < ARRAY_SIZE(op_names); i++)
			if (!strcmp(json_object_get_string(v), op_names[i]))
				c->op = i;
	c->object = json_object_object_get_ex(o, "object", &v) ?
			    object_of(json_object_get_string(v), &what) :
			    NULL;
	if (!c->object)
		c->object = "?";
	if (json_object_object_get_ex(o, "name", &v))
		snprintf(c->name, sizeof(c->name), "%s",
			 json_object_get_string(v));
	if (json_object_object_get_ex(o, "detail", &v))
		snprintf(c->detail, sizeof(c->detail), "%s",
			 json_object_get_string(v));
	if (json_object_object_get_ex(o, "line", &v))
		c->line = json_object_get_int(v);
	if (json_object_object_get_ex(o, "error", &v))
		c->err = json_object_get_int(v);
}

int silo_apply_pending(const char *state_dir, const char *netns,
		       struct silo_change **out, size_t *n)
{
	struct cfg_owned own;
	char path[PATH_MAX];
	size_t i, len;
	int err;

	*out = NULL;
	*n = 0;
	err = cfg_state_path(path, sizeof(path),
			     state_dir ?: SILO_STATE_DIR_DEFAULT, netns);
	if (!err)
		err = cfg_state_read(path, &own);
	if (err)
		return err;
	len = own.pending ? json_object_array_length(own.pending) : 0;
	*out = len ? calloc(len, sizeof(**out)) : NULL;
	if (len && !*out)
		err = -ENOMEM;
	for (i = 0; !err && i < len; i++)
		change_read(json_object_array_get_idx(own.pending, i),
			    &(*out)[i]);
	*n = err ? 0 : len;
	cfg_owned_free(&own);
	return err;
}
