// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * What apply made, per namespace, in a JSON file under the state directory
 * (not in bpffs: it must outlive a reboot, so that the first apply after
 * one still knows what is its own to remove). Written whole to a temporary
 * file and renamed: a crash leaves the old state or the new one.
 */
#include <errno.h>
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
	json_object_put(root);
	return err;
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
	err = silo_mkdir_p(dir, 0755);
	if (!err && json_object_to_file_ext(tmp, root, JSON_C_TO_STRING_PRETTY))
		err = -EIO;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		pr_err("cannot write apply's state to %s: %s\n", path,
		       strerror(-err));
		unlink(tmp);
	}
	json_object_put(root);
	return err;
}
