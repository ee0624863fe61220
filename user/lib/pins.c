// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* A namespace's pins, the one place that knows which exist: the shared maps
 * (meta last), the per-node route caches, each device's XDP link, the
 * reuseport objects every group shares and each group's own. Makes, adopts
 * (opens, checked), counts the users of (links, groups, silod) and removes
 * them when the last user goes. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "pins.h"
#include "util.h"

const char *const silo_map_names[SILO_MAP_COUNT] = {
	[SILO_MAP_META] = SILO_PIN_META,
	[SILO_MAP_LOCAL_ADDRS] = SILO_PIN_LOCAL_ADDRS,
	[SILO_MAP_GENID] = SILO_PIN_GENID,
	[SILO_MAP_CPU_NODE] = SILO_PIN_CPU_NODE,
	[SILO_MAP_DEVICES] = SILO_PIN_DEVICES,
	[SILO_MAP_TX_PORTS] = SILO_PIN_TX_PORTS,
	[SILO_MAP_STATS] = SILO_PIN_STATS,
	[SILO_MAP_ROUTE_CACHE] = SILO_PIN_ROUTE_CACHE,
	[SILO_MAP_HEARTBEAT] = SILO_PIN_HEARTBEAT,
	[SILO_MAP_DAEMON] = SILO_PIN_DAEMON,
	[SILO_MAP_FILL_LOG] = SILO_PIN_FILL_LOG,
	[SILO_MAP_PMTU_MARKS] = SILO_PIN_PMTU_MARKS,
	[SILO_MAP_PMTU_UNSEEN] = SILO_PIN_PMTU_UNSEEN,
	[SILO_MAP_ROUTE_MTUS] = SILO_PIN_ROUTE_MTUS,
	[SILO_MAP_SRC_CHECKED] = SILO_PIN_SRC_CHECKED,
	[SILO_MAP_LOCAL_BITS] = SILO_PIN_LOCAL_BITS,
	[SILO_MAP_DIRECT_SKIP] = SILO_PIN_DIRECT_SKIP,
	[SILO_MAP_CSUM_STATS] = SILO_PIN_CSUM_STATS,
	[SILO_MAP_CT_STATS] = SILO_PIN_CT_STATS,
	[SILO_MAP_CT_ASK] = SILO_PIN_CT_ASK,
	[SILO_MAP_SERVICES] = SILO_PIN_SERVICES,
	[SILO_MAP_SERVICE_NODES] = SILO_PIN_SERVICE_NODES,
	[SILO_MAP_SERVICE_STATS] = SILO_PIN_SERVICE_STATS,
	[SILO_MAP_QUEUE_CPU] = SILO_PIN_QUEUE_CPU,
	[SILO_MAP_CPUMAP] = SILO_PIN_CPUMAP,
};

int silo_pin_path(const struct silo *s, char *buf, size_t len, const char *name)
{
	if (snprintf(buf, len, "%s/%s", s->pin_dir, name) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

int silo_link_pin_path(const struct silo *s, char *buf, size_t len,
		       __u32 ifindex)
{
	if (snprintf(buf, len, "%s/%s%u", s->pin_dir, SILO_PIN_XDP_LINK,
		     ifindex) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

int silo_link_pin_get(const struct silo *s, __u32 ifindex)
{
	char path[PATH_MAX];
	int fd;

	if (silo_link_pin_path(s, path, sizeof(path), ifindex))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

int silo_link_pin(const struct silo *s, __u32 ifindex, int link_fd,
		  bool replace)
{
	char path[PATH_MAX];

	if (silo_link_pin_path(s, path, sizeof(path), ifindex))
		return -ENAMETOOLONG;
	if (replace)
		unlink(path);
	return bpf_obj_pin(link_fd, path) ? -errno : 0;
}

void silo_link_unpin(const struct silo *s, __u32 ifindex)
{
	char path[PATH_MAX];

	if (!silo_link_pin_path(s, path, sizeof(path), ifindex))
		unlink(path);
}

static int node_pin_name(char *buf, size_t len, __u32 node)
{
	if (snprintf(buf, len, "%s%u", SILO_PIN_ROUTE_CACHE_NODE, node) >=
	    (int)len)
		return -ENAMETOOLONG;
	return 0;
}

int silo_pin_node_cache(const struct silo *s, __u32 node, int fd)
{
	char path[PATH_MAX], name[64];

	node_pin_name(name, sizeof(name), node);
	if (silo_pin_path(s, path, sizeof(path), name))
		return -ENAMETOOLONG;
	if (bpf_obj_pin(fd, path) && errno != EEXIST)
		return -errno;
	return 0;
}

int silo_obj_get(const struct silo *s, const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (silo_pin_path(s, path, sizeof(path), name))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

void silo_maps_init(struct silo_maps *m)
{
	unsigned int i;

	for (i = 0; i < SILO_MAP_COUNT; i++)
		m->fd[i] = -1;
	for (i = 0; i < SILO_MAX_NODES; i++)
		m->node_fd[i] = -1;
	m->nr_nodes = 0;
}

void silo_maps_close(struct silo_maps *m)
{
	unsigned int i;

	for (i = 0; i < SILO_MAP_COUNT; i++)
		if (m->fd[i] >= 0)
			close(m->fd[i]);
	for (i = 0; i < SILO_MAX_NODES; i++)
		if (m->node_fd[i] >= 0)
			close(m->node_fd[i]);
	silo_maps_init(m);
}

int silo_maps_open(struct silo *s, struct silo_maps *m)
{
	struct silo_meta meta;
	char name[64];
	__u32 zero = 0, i;
	int fd, err;

	silo_maps_init(m);
	fd = silo_obj_get(s, SILO_PIN_META);
	if (fd < 0)
		return fd == -ENOENT ? -ENOENT : fd;
	m->fd[SILO_MAP_META] = fd;
	if (bpf_map_lookup_elem(fd, &zero, &meta)) {
		err = -ESTALE;
		goto err_close;
	}
	if (meta.layout_version != SILO_LAYOUT_VERSION) {
		pr_debug("pins in %s have layout %u, this silo %u\n",
			 s->pin_dir, meta.layout_version, SILO_LAYOUT_VERSION);
		err = -ESTALE;
		goto err_close;
	}
	if (meta.netns_cookie != s->netns_cookie ||
	    meta.nr_nodes > SILO_MAX_NODES) {
		pr_debug(
			"pins in %s belong to another network namespace (or are damaged)\n",
			s->pin_dir);
		err = -ESTALE;
		goto err_close;
	}
	/* meta, the first, is open */
	for (i = SILO_MAP_META + 1; i < SILO_MAP_COUNT; i++) {
		fd = silo_obj_get(s, silo_map_names[i]);
		if (fd == -ENOENT && silo_map_added(i))
			continue; /* added later: a load makes them */
		if (fd < 0) {
			err = fd == -ENOENT ? -ESTALE : fd;
			goto err_close;
		}
		m->fd[i] = fd;
	}
	for (i = 0; i < meta.nr_nodes; i++) {
		node_pin_name(name, sizeof(name), i);
		fd = silo_obj_get(s, name);
		if (fd < 0) {
			err = fd == -ENOENT ? -ESTALE : fd;
			goto err_close;
		}
		m->node_fd[i] = fd;
	}
	m->nr_nodes = meta.nr_nodes;
	return 0;

err_close:
	silo_maps_close(m);
	return err;
}

/* Pins every map of m; on failure removes the pins it made. */
int silo_maps_pin(struct silo *s, const struct silo_maps *m)
{
	char path[PATH_MAX], name[64];
	unsigned int i, nodes = 0, maps = 0;
	int err;

	err = silo_pin_dir_make(s);
	if (err)
		return err;
	for (; nodes < m->nr_nodes; nodes++) {
		node_pin_name(name, sizeof(name), nodes);
		silo_pin_path(s, path, sizeof(path), name);
		if (bpf_obj_pin(m->node_fd[nodes], path))
			goto err_unpin;
	}
	/* meta last: its presence says the set is complete. */
	for (i = SILO_MAP_COUNT; i-- > 0; maps++) {
		silo_pin_path(s, path, sizeof(path), silo_map_names[i]);
		if (bpf_obj_pin(m->fd[i], path))
			goto err_unpin;
	}
	return 0;

err_unpin:
	err = -errno;
	pr_err("cannot pin %s: %s\n", path, strerror(-err));
	while (maps-- > 0) {
		silo_pin_path(s, path, sizeof(path),
			      silo_map_names[SILO_MAP_COUNT - 1 - maps]);
		unlink(path);
	}
	while (nodes-- > 0) {
		node_pin_name(name, sizeof(name), nodes);
		silo_pin_path(s, path, sizeof(path), name);
		unlink(path);
	}
	return err;
}

/* Removes the map pins (meta first, so a half-removed set is never used). */
void silo_maps_unpin(struct silo *s)
{
	char path[PATH_MAX], name[64];
	unsigned int i;

	for (i = 0; i < SILO_MAP_COUNT; i++) {
		silo_pin_path(s, path, sizeof(path), silo_map_names[i]);
		unlink(path);
	}
	for (i = 0; i < SILO_MAX_NODES; i++) {
		node_pin_name(name, sizeof(name), i);
		silo_pin_path(s, path, sizeof(path), name);
		if (unlink(path) && errno == ENOENT)
			break;
	}
}

int silo_for_each_link_pin(struct silo *s,
			   int (*fn)(struct silo *s, __u32 ifindex, void *ctx),
			   void *ctx)
{
	size_t plen = strlen(SILO_PIN_XDP_LINK);
	struct dirent *de;
	int err = 0;
	DIR *d;

	d = opendir(s->pin_dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!err && (de = readdir(d))) {
		char *end;
		unsigned long ifindex;

		if (strncmp(de->d_name, SILO_PIN_XDP_LINK, plen))
			continue;
		ifindex = strtoul(de->d_name + plen, &end, 10);
		if (*end || !ifindex)
			continue;
		err = fn(s, ifindex, ctx);
	}
	closedir(d);
	return err;
}

void silo_pin_dirs_remove_empty(const struct silo *s)
{
	char path[PATH_MAX], *slash;

	snprintf(path, sizeof(path), "%s", s->pin_dir);
	while (strlen(path) >= strlen(s->pin_root)) {
		if (rmdir(path))
			return;
		slash = strrchr(path, '/');
		if (!slash)
			return;
		*slash = '\0';
	}
}

static int count_one(struct silo *s, __u32 ifindex, void *ctx)
{
	(void)s;
	(void)ifindex;
	++*(int *)ctx;
	return 0;
}

/* Entries in a subdirectory of the pin directory (reuseport groups). */
static int count_dir(const struct silo *s, const char *sub)
{
	char path[PATH_MAX];
	struct dirent *de;
	int n = 0;
	DIR *d;

	if (silo_pin_path(s, path, sizeof(path), sub))
		return 0;
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

int silo_proc_start_ticks(int pid, __u64 *ticks)
{
	char path[64], buf[1024], *p;
	int i, n;

	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	n = silo_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	/* The name (field 2) may hold spaces and parentheses: count from
	 * its last ')'. Then state is field 3, starttime field 22. */
	p = strrchr(buf, ')');
	/* Field k + 2 follows the k-th space after it. */
	for (i = 0; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", (unsigned long long *)ticks) != 1)
		return -EINVAL;
	return 0;
}

int silo_daemon_pid(struct silo *s)
{
	char path[64], comm[32];
	struct silo_daemon d;
	struct stat a, b;
	__u64 ticks;
	__u32 zero = 0;
	int fd, err;

	fd = silo_obj_get(s, silo_map_names[SILO_MAP_DAEMON]);
	if (fd < 0)
		return 0;
	err = bpf_map_lookup_elem(fd, &zero, &d);
	close(fd);
	if (err || !d.pid || (kill(d.pid, 0) && errno == ESRCH))
		return 0;
	/* The pid may have been reused since silod died. */
	snprintf(path, sizeof(path), "/proc/%u/comm", d.pid);
	if (silo_read_file(path, comm, sizeof(comm)) < 0 ||
	    strncmp(comm, "silod", 5))
		return 0;
	/* The name alone is not enough: another silod (for another
	 * namespace) may have taken the pid. Its start time tells. */
	if (silo_proc_start_ticks(d.pid, &ticks) || ticks != d.start_ticks)
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/ns/net", d.pid);
	if (stat(path, &a) || stat("/proc/thread-self/ns/net", &b) ||
	    a.st_ino != b.st_ino || a.st_dev != b.st_dev)
		return 0;
	return d.pid;
}

bool silo_maps_in_use(struct silo *s)
{
	int links = 0, pid;

	silo_for_each_link_pin(s, count_one, &links);
	pid = silo_daemon_pid(s);
	return links || count_dir(s, SILO_PIN_REUSEPORT_DIR) ||
	       (pid && pid != getpid());
}

void silo_maps_release(struct silo *s)
{
	if (silo_maps_in_use(s))
		return;
	silo_maps_unpin(s);
	if (!count_dir(s, SILO_PIN_REUSEPORT_DIR)) {
		char path[PATH_MAX];

		silo_pin_path(s, path, sizeof(path), SILO_PIN_REUSEPORT_DIR);
		rmdir(path);
	}
	silo_pin_dirs_remove_empty(s);
}

/* What every reuseport group shares, pinned as PIN_DIR/reuseport_*. */
static const char *const rp_pin_names[SILO_RP_COUNT] = {
	[SILO_RP_GROUPS] = SILO_PIN_REUSEPORT_GROUPS,
	[SILO_RP_SOCKETS] = SILO_PIN_REUSEPORT_SOCKETS,
	[SILO_RP_NODES] = SILO_PIN_REUSEPORT_NODES,
	[SILO_RP_STATS] = SILO_PIN_REUSEPORT_STATS,
	[SILO_RP_QUEUES] = SILO_PIN_REUSEPORT_QUEUES,
	[SILO_RP_SELECT] = SILO_PIN_REUSEPORT_SELECT,
	[SILO_RP_MIGRATE] = SILO_PIN_REUSEPORT_MIGRATE,
};

int silo_rp_pin_get(const struct silo *s, enum silo_rp_pin which)
{
	return silo_obj_get(s, rp_pin_names[which]);
}

int silo_rp_pins_open(const struct silo *s, int fd[SILO_RP_COUNT],
		      int *cpu_node_fd)
{
	unsigned int i;
	int f;

	for (i = 0; i < SILO_RP_COUNT; i++) {
		f = silo_obj_get(s, rp_pin_names[i]);
		if (f < 0)
			return f == -ENOENT && i == 0 ? -ENOENT :
			       f == -ENOENT	      ? -ESTALE :
							f;
		fd[i] = f;
	}
	f = silo_obj_get(s, silo_map_names[SILO_MAP_CPU_NODE]);
	if (f < 0)
		return f == -ENOENT ? -ESTALE : f;
	*cpu_node_fd = f;
	return 0;
}

/* PIN_DIR/reuseport/NAME[/FILE]. Not inlined: gcc cannot then guess path
 * lengths it would warn about. */
static __attribute__((noinline)) int group_path(const struct silo *s,
						const char *name,
						const char *file, char *buf,
						size_t len)
{
	int n = snprintf(buf, len, "%s/%s/%s%s%s", s->pin_dir,
			 SILO_PIN_REUSEPORT_DIR, name, file ? "/" : "",
			 file ? file : "");

	return n >= (int)len ? -ENAMETOOLONG : 0;
}

static void shared_unpin(const struct silo *s)
{
	char path[PATH_MAX];
	unsigned int i;

	for (i = 0; i < SILO_RP_COUNT; i++)
		if (!silo_pin_path(s, path, sizeof(path), rp_pin_names[i]))
			unlink(path);
}

int silo_rp_pins_pin(const struct silo *s, const int fd[SILO_RP_COUNT])
{
	char path[PATH_MAX];
	unsigned int i;
	int err;

	for (i = 0; i < SILO_RP_COUNT; i++) {
		silo_pin_path(s, path, sizeof(path), rp_pin_names[i]);
		if (bpf_obj_pin(fd[i], path)) {
			err = -errno;
			pr_err("cannot pin %s: %s\n", path, strerror(-err));
			while (i-- > 0) {
				silo_pin_path(s, path, sizeof(path),
					      rp_pin_names[i]);
				unlink(path);
			}
			return err;
		}
	}
	return 0;
}

void silo_group_pins_remove(const struct silo *s, const char *name)
{
	char path[PATH_MAX];

	if (!group_path(s, name, SILO_PIN_GROUP_SOCKETS, path, sizeof(path)))
		unlink(path);
	if (!group_path(s, name, SILO_PIN_GROUP_SLOTS, path, sizeof(path)))
		unlink(path);
	if (!group_path(s, name, NULL, path, sizeof(path)))
		rmdir(path);
}

/* The last group gone: the shared objects, then unused shared maps go. */
void silo_rp_pins_release(struct silo *s)
{
	char path[PATH_MAX];

	silo_pin_path(s, path, sizeof(path), SILO_PIN_REUSEPORT_DIR);
	if (rmdir(path) && errno != ENOENT)
		return; /* groups remain */
	shared_unpin(s);
	silo_maps_release(s);
}

/* Group pins left when the shared maps had to be made anew: their sockets
 * are of a namespace that is gone, or of another silo. */
void silo_rp_pins_remove_orphans(struct silo *s, const char *keep)
{
	char path[PATH_MAX];
	struct dirent *de;
	bool warned = false;
	DIR *d;

	shared_unpin(s);
	silo_pin_path(s, path, sizeof(path), SILO_PIN_REUSEPORT_DIR);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, keep))
			continue;
		if (!warned)
			pr_warn("removing reuseport groups pinned for another namespace or silo version\n");
		warned = true;
		silo_group_pins_remove(s, de->d_name);
	}
	closedir(d);
}

/* Claims the name: the directory is made under the lock, or exists. */
int silo_group_pins_claim(const struct silo *s, const char *name)
{
	char path[PATH_MAX];
	int err;

	err = group_path(s, name, NULL, path, sizeof(path));
	if (err)
		return err;
	/* silo_rp_lock made (and checked) the pin directory. */
	silo_pin_path(s, path, sizeof(path), SILO_PIN_REUSEPORT_DIR);
	if (mkdir(path, 0700) && errno != EEXIST)
		err = -errno;
	if (!err) {
		group_path(s, name, NULL, path, sizeof(path));
		if (mkdir(path, 0700))
			err = -errno;
	}
	if (err == -EEXIST)
		pr_err("there is a group '%s' already: choose another name, or 'silo reuseport detach %s'\n",
		       name, name);
	else if (err && err != -ENOENT) /* -ENOENT: the caller tries again */
		pr_err("cannot create %s: %s\n", path, strerror(-err));
	return err;
}

int silo_group_pins_pin(const struct silo *s, const char *name, int sockets_fd,
			int slots_fd)
{
	char path[PATH_MAX];
	int err;

	err = group_path(s, name, SILO_PIN_GROUP_SOCKETS, path, sizeof(path));
	if (!err && bpf_obj_pin(sockets_fd, path))
		err = -errno;
	if (!err)
		err = group_path(s, name, SILO_PIN_GROUP_SLOTS, path,
				 sizeof(path));
	if (!err && bpf_obj_pin(slots_fd, path))
		err = -errno;
	if (err)
		pr_err("cannot pin %s: %s\n", path, strerror(-err));
	return err;
}

int silo_group_pins_open(const struct silo *s, const char *name,
			 int *sockets_fd, int *slots_fd)
{
	char path[PATH_MAX];

	group_path(s, name, SILO_PIN_GROUP_SOCKETS, path, sizeof(path));
	*sockets_fd = bpf_obj_get(path);
	group_path(s, name, SILO_PIN_GROUP_SLOTS, path, sizeof(path));
	*slots_fd = bpf_obj_get(path);
	return *sockets_fd < 0 || *slots_fd < 0 ? -ESTALE : 0;
}
