// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* libsilo core: messages, namespaces, bpffs, paths. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <bpf/libbpf.h>
#include "pins.h"
#include "util.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static void default_print(enum silo_log_level level, const char *fmt,
			  va_list ap)
{
	if (level > SILO_LOG_WARN)
		return;
	fprintf(stderr,
		"silo: %s: ", level == SILO_LOG_ERROR ? "error" : "warning");
	vfprintf(stderr, fmt, ap);
}

static silo_print_fn print_fn = default_print;

void silo_set_print(silo_print_fn fn)
{
	print_fn = fn ? fn : default_print;
}

void silo_log(enum silo_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_fn(level, fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	/* libbpf's own errors are followed by ours, which say what to do. */
	(void)level;
	print_fn(SILO_LOG_DEBUG, fmt, ap);
	return 0;
}

void silo_libbpf_print_init(void)
{
	libbpf_set_print(libbpf_print);
}

const char *silo_pin_dir(const struct silo *s)
{
	return s->pin_dir;
}

int silo_netns_cookie(__u64 *cookie)
{
	socklen_t len = sizeof(*cookie);
	int fd, err = 0;

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, cookie, &len))
		err = -errno;
	close(fd);
	return err;
}

static int have_caps(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = {};
	__u64 eff;

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	eff = data[0].effective | ((__u64)data[1].effective << 32);
	if (!(eff & (1ULL << CAP_NET_ADMIN)))
		return 0;
	return (eff & (1ULL << CAP_BPF)) || (eff & (1ULL << CAP_SYS_ADMIN));
}

static bool is_bpffs(const char *path)
{
	struct statfs st;

	return statfs(path, &st) == 0 && st.f_type == BPF_FS_MAGIC;
}

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa) || stat(b, &sb))
		return -errno;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The name "ip netns" knows the current namespace by, if any. */
static int netns_name(char *name, size_t len)
{
	static const char *const dirs[] = { "/run/netns", "/var/run/netns" };
	char path[PATH_MAX];
	struct dirent *de;
	unsigned int i;
	DIR *d;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		d = opendir(dirs[i]);
		if (!d)
			continue;
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dirs[i],
				 de->d_name);
			if (same_file(path, "/proc/self/ns/net") == 1) {
				snprintf(name, len, "%s", de->d_name);
				closedir(d);
				return 0;
			}
		}
		closedir(d);
	}
	return -ENOENT;
}

static int enter_netns(struct silo *s, const char *name)
{
	char path[PATH_MAX];

	if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
		pr_err("bad network namespace name '%s'\n", name);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	s->netns_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->netns_fd < 0) {
		int err = -errno;

		pr_err("no network namespace '%s' (%s): see 'ip netns list'\n",
		       name, strerror(-err));
		return err;
	}
	if (setns(s->netns_fd, CLONE_NEWNET)) {
		int err = -errno;

		pr_err("cannot enter network namespace '%s': %s\n", name,
		       strerror(-err));
		return err;
	}
	return 0;
}

/* Pins of the initial namespace sit in the root; others in netns/NAME. */
static int choose_pin_dir(struct silo *s, const char *netns)
{
	char name[NAME_MAX + 1];
	int init, n;

	if (netns) {
		n = snprintf(s->pin_dir, sizeof(s->pin_dir), "%s/netns/%s",
			     s->pin_root, netns);
		return n >= (int)sizeof(s->pin_dir) ? -ENAMETOOLONG : 0;
	}
	init = same_file("/proc/self/ns/net", "/proc/1/ns/net");
	if (init == 1) {
		snprintf(s->pin_dir, sizeof(s->pin_dir), "%s", s->pin_root);
		return 0;
	}
	if (netns_name(name, sizeof(name)) == 0)
		n = snprintf(s->pin_dir, sizeof(s->pin_dir), "%s/netns/%s",
			     s->pin_root, name);
	else
		n = snprintf(s->pin_dir, sizeof(s->pin_dir),
			     "%s/netns/cookie-%llu", s->pin_root,
			     (unsigned long long)s->netns_cookie);
	return n >= (int)sizeof(s->pin_dir) ? -ENAMETOOLONG : 0;
}

/* bpffs must be mounted where the pins go, and be the host's. */
static int check_bpffs(const struct silo *s, bool own_netns)
{
	char parent[PATH_MAX], *slash;

	/* A bpffs mount itself may be the pin root. */
	if (is_bpffs(s->pin_root))
		return 0;
	snprintf(parent, sizeof(parent), "%s", s->pin_root);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	if (is_bpffs(parent))
		return 0;
	if (strcmp(parent, "/sys/fs/bpf")) {
		pr_err("%s is not on a bpffs mount: mount one with 'mount -t bpf bpf DIR'\n",
		       s->pin_root);
		return -ENOTDIR;
	}
	if (!own_netns &&
	    same_file("/proc/self/ns/net", "/proc/1/ns/net") != 1) {
		/* ip netns exec: a private /sys that dies with the command,
		 * and the pins (and the program) with it. */
		pr_err("bpffs is not mounted in this mount namespace (as under 'ip netns exec'), so pins would vanish with this command: run 'silo --netns NAME ...' from the host instead\n");
		return -ENOTDIR;
	}
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
		int err = -errno;

		pr_err("bpffs is not mounted at /sys/fs/bpf and mounting it failed (%s): mount -t bpf bpf /sys/fs/bpf\n",
		       strerror(-err));
		return err;
	}
	pr_info("mounted bpffs at /sys/fs/bpf\n");
	return 0;
}

/*
 * Whether directory fd (path, for messages) may hold silo's pins: only its
 * owner can add, remove or rename entries in it, so the owner must be root
 * or us. Anyone else could unlink an xdp_link_* pin (which detaches XDP),
 * plant maps of their own, or swap the directory under us.
 */
static int check_pin_dir_fd(int fd, const char *path)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		pr_err("%s is owned by uid %u, not root: that user could remove silo's pins (and detach its XDP program) or plant their own; remove it: 'rm -r %s'\n",
		       path, (unsigned int)st.st_uid, path);
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		pr_err("%s is writable by group or others (mode %04o): another user could remove silo's pins (and detach its XDP program) or plant their own; 'chmod 0700 %s' if it holds only silo's pins, else remove it: 'rm -r %s'\n",
		       path, (unsigned int)(st.st_mode & 07777), path, path);
		return -EPERM;
	}
	return 0;
}

/*
 * The bpffs mount that holds path's parent, as a prefix length of path:
 * the shortest prefix on the same bpffs (and device) as the parent.
 */
static int bpffs_mount_len(const char *path, size_t *mount_len)
{
	char buf[PATH_MAX], *slash;
	struct stat st, up;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	/* path may be a mount itself, else its parent must be on one */
	if (!is_bpffs(buf)) {
		slash = strrchr(buf, '/');
		if (!slash || slash == buf)
			return -EINVAL;
		*slash = '\0';
	}
	if (!is_bpffs(buf) || stat(buf, &st))
		return -ENOTDIR;
	for (;;) {
		*mount_len = strlen(buf);
		slash = strrchr(buf, '/');
		if (!slash || slash == buf)
			return 0; /* bpffs on / itself: never, but stop */
		*slash = '\0';
		if (!is_bpffs(buf) || stat(buf, &up) || up.st_dev != st.st_dev)
			return 0;
	}
}

/* Why component comp of path (under fd) did not open as a directory:
 * -ELOOP for a link, said what to do. */
static int open_dir_error(int fd, const char *comp, const char *path)
{
	int err = -errno;
	struct stat st;

	if (!fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) &&
	    S_ISLNK(st.st_mode)) {
		pr_err("%s is a symbolic link: silo keeps its pins only in directories of its own; remove the link: 'rm %s'\n",
		       path, path);
		return -ELOOP;
	}
	pr_err("cannot open %s as a directory: %s\n", path, strerror(-err));
	return err;
}

int silo_pin_dirs_check(const struct silo *s)
{
	char path[PATH_MAX], *comp, *next;
	size_t mount_len;
	struct stat st;
	int fd, sub, err = 0;

	if (s->pin_root[0] != '/') {
		pr_err("the pin root '%s' is not an absolute path\n",
		       s->pin_root);
		return -EINVAL;
	}
	err = bpffs_mount_len(s->pin_root, &mount_len);
	if (err) {
		pr_err("%s is not on a bpffs mount: mount one with 'mount -t bpf bpf DIR'\n",
		       s->pin_root);
		return err;
	}
	snprintf(path, sizeof(path), "%s", s->pin_dir);
	path[mount_len] = '\0';
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		err = -errno;
		pr_err("cannot open %s: %s\n", path, strerror(-err));
		goto out;
	}
	/* The mount itself may be open to all, but then sticky (1777), so
	 * that nobody else can remove or rename what silo makes in it. */
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		pr_err("the bpffs mount %s is writable by group or others without the sticky bit (mode %04o): another user could rename silo's pin directory away; 'chmod +t %s' or 'chmod 0700 %s'\n",
		       path, (unsigned int)(st.st_mode & 07777), path, path);
		err = -EPERM;
		goto out;
	}
	/* Below the mount, one component at a time, never through a link. */
	path[mount_len] = '/';
	for (comp = path + mount_len + 1; *comp; comp = next) {
		next = strchr(comp, '/');
		if (next)
			*next = '\0';
		if (!*comp) { /* "//" */
			*next = '/';
			next++;
			continue;
		}
		if (!strcmp(comp, ".") || !strcmp(comp, "..")) {
			pr_err("the pin directory %s has a '.' or '..' component: give the pin root as a plain path\n",
			       s->pin_dir);
			err = -EINVAL;
			goto out;
		}
		sub = openat(fd, comp,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0 && errno == ENOENT)
			goto out; /* made later, 0700, in a checked parent */
		if (sub < 0) {
			err = open_dir_error(fd, comp, path);
			goto out;
		}
		close(fd);
		fd = sub;
		err = check_pin_dir_fd(fd, path);
		if (err)
			goto out;
		if (!next)
			break;
		*next = '/';
		next++;
	}
out:
	if (fd >= 0)
		close(fd);
	return err;
}

int silo_pin_dir_make(const struct silo *s)
{
	int err;

	/* Checked first: never make anything through a planted link. */
	err = silo_pin_dirs_check(s);
	if (err)
		return err;
	err = silo_mkdir_p(s->pin_dir, 0700);
	if (err) {
		pr_err("cannot create %s: %s\n", s->pin_dir, strerror(-err));
		return err;
	}
	/* And after: another user may have raced us to a missing one. */
	return silo_pin_dirs_check(s);
}

int silo_open(struct silo **out, const struct silo_opts *opts)
{
	const char *netns = opts ? opts->netns : NULL;
	struct silo *s;
	size_t n;
	int err;

	*out = NULL;
	silo_libbpf_print_init();
	err = have_caps();
	if (err <= 0) {
		pr_err("silo needs root (CAP_BPF and CAP_NET_ADMIN): run it with sudo\n");
		return err < 0 ? err : -EPERM;
	}
	if (opts && opts->pin_root &&
	    (opts->pin_root[0] != '/' ||
	     strlen(opts->pin_root) > SILO_PIN_ROOT_MAX)) {
		pr_err("bad pin root '%s': an absolute path of at most %d characters on a bpffs mount\n",
		       opts->pin_root, SILO_PIN_ROOT_MAX);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->netns_fd = -1;
	snprintf(s->pin_root, sizeof(s->pin_root), "%s",
		 opts && opts->pin_root ? opts->pin_root :
					  SILO_PIN_ROOT_DEFAULT);
	/* "/sys/fs/bpf/silo/" is "/sys/fs/bpf/silo" */
	for (n = strlen(s->pin_root); n > 1 && s->pin_root[n - 1] == '/'; n--)
		s->pin_root[n - 1] = '\0';
	if (netns) {
		err = enter_netns(s, netns);
		if (err)
			goto err_free;
	}
	err = silo_netns_cookie(&s->netns_cookie);
	if (err) {
		pr_err("cannot read the network namespace cookie (%s): silo needs Linux 5.14 or newer\n",
		       strerror(-err));
		goto err_free;
	}
	err = choose_pin_dir(s, netns);
	if (err)
		goto err_free;
	err = check_bpffs(s, netns != NULL);
	if (err)
		goto err_free;
	err = silo_pin_dirs_check(s);
	if (err)
		goto err_free;
	*out = s;
	return 0;

err_free:
	silo_close(s);
	return err;
}

void silo_close(struct silo *s)
{
	if (!s)
		return;
	if (s->netns_fd >= 0)
		close(s->netns_fd);
	free(s);
}
