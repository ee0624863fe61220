// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* What a socket is as a reuseport group key: family, protocol, address,
 * port, device, namespace and cookie; and whether it fits a group. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "reuseport.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

static bool addr_is_any(const struct silo_reuseport_key *key)
{
	static const __u8 zero[16];

	return !memcmp(key->addr, zero, sizeof(zero));
}

void silo_reuseport_key_str(const struct silo_reuseport_key *key, char *buf,
			    size_t len)
{
	char addr[INET6_ADDRSTRLEN] = "?", dev[IF_NAMESIZE + 8] = "";
	bool v6 = key->family == SILO_AF_INET6;

	inet_ntop(v6 ? AF_INET6 : AF_INET, key->addr, addr, sizeof(addr));
	if (key->bound_dev_if) {
		char ifname[IF_NAMESIZE];

		if (if_indextoname(key->bound_dev_if, ifname))
			snprintf(dev, sizeof(dev), "%%%s", ifname);
		else
			snprintf(dev, sizeof(dev), "%%if%u", key->bound_dev_if);
	}
	snprintf(buf, len, "%s%c %s%s%s:%u%s",
		 key->protocol == IPPROTO_TCP ? "tcp" : "udp", v6 ? '6' : '4',
		 v6 ? "[" : "", addr, v6 ? "]" : "", key->port, dev);
}

static int getsockopt_int(int fd, int name, int *val)
{
	socklen_t len = sizeof(*val);

	return getsockopt(fd, SOL_SOCKET, name, val, &len) ? -errno : 0;
}

int silo_socket_cookie(int fd, __u64 *cookie)
{
	socklen_t len = sizeof(*cookie);

	return getsockopt(fd, SOL_SOCKET, SO_COOKIE, cookie, &len) ? -errno : 0;
}

/* The address and port fd is bound to, into key. */
static int sock_addr(int fd, int domain, struct silo_reuseport_key *key,
		     char *why, size_t len)
{
	struct sockaddr_storage ss = {};
	socklen_t sslen = sizeof(ss);
	int err;

	if (getsockname(fd, (struct sockaddr *)&ss, &sslen)) {
		err = -errno;
		snprintf(why, len, "getsockname: %s", strerror(-err));
		return err;
	}
	if (domain == AF_INET) {
		const struct sockaddr_in *sin = (const void *)&ss;

		key->port = ntohs(sin->sin_port);
		memcpy(key->addr, &sin->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *sin6 = (const void *)&ss;

		key->port = ntohs(sin6->sin6_port);
		memcpy(key->addr, &sin6->sin6_addr, 16);
	}
	return 0;
}

int silo_reuseport_sock_key(const struct silo *s, int fd,
			    struct silo_reuseport_key *key, char *why,
			    size_t len)
{
	int domain, protocol, on, err;
	__u64 cookie;
	struct stat st;

	memset(key, 0, sizeof(*key));
	if (fstat(fd, &st)) {
		err = -errno;
		snprintf(why, len, "%s", strerror(-err));
		return err;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(why, len, "not a socket");
		return -ENOTSOCK;
	}
	if (getsockopt_int(fd, SO_DOMAIN, &domain) ||
	    getsockopt_int(fd, SO_PROTOCOL, &protocol) ||
	    getsockopt_int(fd, SO_REUSEPORT, &on)) {
		err = -errno;
		snprintf(why, len, "cannot read its options: %s",
			 strerror(-err));
		return err;
	}
	if (domain != AF_INET && domain != AF_INET6) {
		snprintf(why, len, "not an IPv4 or IPv6 socket");
		return -EINVAL;
	}
	if (protocol != IPPROTO_UDP && protocol != IPPROTO_TCP) {
		snprintf(why, len, "neither TCP nor UDP");
		return -EINVAL;
	}
	if (!on) {
		snprintf(
			why, len,
			"no SO_REUSEPORT: set it before bind(), on every socket of the group");
		return -EINVAL;
	}
	err = sock_addr(fd, domain, key, why, len);
	if (err)
		return err;
	key->family = domain == AF_INET ? SILO_AF_INET : SILO_AF_INET6;
	key->protocol = protocol;
	if (!key->port) {
		snprintf(why, len, "not bound: bind() it to the group's port");
		return -EINVAL;
	}
	if (protocol == IPPROTO_TCP &&
	    (getsockopt_int(fd, SO_ACCEPTCONN, &on) || !on)) {
		snprintf(why, len, "a TCP socket that is not listening");
		return -EINVAL;
	}
	if (!getsockopt_int(fd, SO_BINDTOIFINDEX, &on))
		key->bound_dev_if = on;
	if (s &&
	    getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie,
		       &(socklen_t){ sizeof(cookie) }) == 0 &&
	    cookie != s->netns_cookie) {
		snprintf(
			why, len,
			"a socket of another network namespace than silo's (see --netns)");
		return -EINVAL;
	}
	return 0;
}

/* Why socket key got does not belong to group want; NULL when it does. */
const char *silo_rp_key_mismatch(const struct silo_reuseport_key *want,
				 const struct silo_reuseport_key *got)
{
	if (got->protocol != want->protocol)
		return "of another protocol";
	if (got->family != want->family)
		return "of another address family";
	if (got->port != want->port)
		return "bound to another port";
	if (memcmp(got->addr, want->addr, sizeof(got->addr)))
		return "bound to another address";
	if (got->bound_dev_if != want->bound_dev_if)
		return "bound to another device";
	return NULL;
}

/* fd must be a socket of g's kernel group. */
int silo_rp_check_member(const struct silo_group *g, int fd, const char *what)
{
	struct silo_reuseport_key key;
	char why[160], want[96];
	const char *bad;
	int err;

	err = silo_reuseport_sock_key(g->s, fd, &key, why, sizeof(why));
	if (err) {
		pr_err("cannot %s fd %d in group '%s': %s\n", what, fd,
		       g->val.name, why);
		return err;
	}
	bad = silo_rp_key_mismatch(&g->key, &key);
	if (bad) {
		silo_reuseport_key_str(&g->key, want, sizeof(want));
		pr_err("cannot %s fd %d in group '%s' (%s): the socket is %s\n",
		       what, fd, g->val.name, want, bad);
		return -EINVAL;
	}
	return 0;
}

/* "udp4_9000", "tcp6_80_fe80::1_if2"; bpffs takes no '.' in a name. */
void silo_rp_default_name(const struct silo_reuseport_key *key, char *name)
{
	char full[128], addr[INET6_ADDRSTRLEN] = "", *p;
	bool v6 = key->family == SILO_AF_INET6;
	int n, base;
	__u32 hash = 2166136261u;
	size_t i;

	base = snprintf(full, sizeof(full), "%s%c_%u",
			key->protocol == IPPROTO_TCP ? "tcp" : "udp",
			v6 ? '6' : '4', key->port);
	n = base;
	if (!addr_is_any(key)) {
		inet_ntop(v6 ? AF_INET6 : AF_INET, key->addr, addr,
			  sizeof(addr));
		for (p = addr; *p; p++)
			if (*p == '.')
				*p = '-';
		n += snprintf(full + n, sizeof(full) - n, "_%s", addr);
	}
	if (key->bound_dev_if)
		n += snprintf(full + n, sizeof(full) - n, "_if%u",
			      key->bound_dev_if);
	if (n < SILO_REUSEPORT_NAME_MAX) {
		memcpy(name, full, n + 1);
		return;
	}
	for (i = 0; i < sizeof(*key); i++)
		hash = (hash ^ ((const __u8 *)key)[i]) * 16777619u;
	snprintf(name, SILO_REUSEPORT_NAME_MAX, "%.*s_%08x", base, full, hash);
}
