// SPDX-License-Identifier: GPL-2.0
/*
 * silod --metrics ADDR:PORT: GET /metrics serves silo_metrics_write()'s
 * Prometheus text (libmicrohttpd, its own thread). The socket is bound
 * before silod enters --netns, so it listens in the namespace silod was
 * started in: where the scraper runs.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include "silod.h"

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* "PORT" (127.0.0.1), "ADDR:PORT", "[ADDR6]:PORT". */
static int parse_addr(const char *spec, struct sockaddr_storage *ss,
		      socklen_t *len)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	char host[INET6_ADDRSTRLEN + 2];
	const char *port_s = spec, *colon;
	unsigned long port;
	char *end;

	memset(ss, 0, sizeof(*ss));
	strcpy(host, "127.0.0.1");
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');

		if (!close || close[1] != ':' ||
		    (size_t)(close - spec - 1) >= sizeof(host))
			return -EINVAL;
		memcpy(host, spec + 1, close - spec - 1);
		host[close - spec - 1] = '\0';
		port_s = close + 2;
	} else if ((colon = strrchr(spec, ':'))) {
		if ((size_t)(colon - spec) >= sizeof(host))
			return -EINVAL;
		memcpy(host, spec, colon - spec);
		host[colon - spec] = '\0';
		port_s = colon + 1;
	}
	errno = 0;
	port = strtoul(port_s, &end, 10);
	if (errno || end == port_s || *end || port < 1 || port > 65535 ||
	    !isdigit((unsigned char)*port_s))
		return -EINVAL;
	if (spec[0] != '[' && inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		*len = sizeof(*s4);
		return 0;
	}
	if (spec[0] == '[' && inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		*len = sizeof(*s6);
		return 0;
	}
	return -EINVAL;
}

int metrics_check(const char *spec)
{
	struct sockaddr_storage ss;
	socklen_t len;

	if (!parse_addr(spec, &ss, &len))
		return 0;
	pr_err("bad metrics address '%s': PORT (on 127.0.0.1), ADDR:PORT or [ADDR6]:PORT\n",
	       spec);
	return -EINVAL;
}

int metrics_listen(const char *spec)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, err;

	err = metrics_check(spec);
	if (err)
		return err;
	parse_addr(spec, &ss, &len);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		pr_err("metrics: cannot make a socket: %s\n", strerror(-err));
		return err;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){ 1 },
		       sizeof(int)) ||
	    (ss.ss_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &(int){ 1 },
			sizeof(int))) ||
	    bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 16)) {
		err = -errno;
		pr_err("metrics: cannot listen on %s: %s\n", spec,
		       strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned int code,
			       const char *type, char *body, size_t len,
			       const char *allow)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result respond_text(struct MHD_Connection *conn,
				    unsigned int code, const char *text,
				    const char *allow)
{
	char *body = strdup(text);

	if (!body)
		return MHD_NO;
	return respond(conn, code, "text/plain; charset=utf-8", body,
		       strlen(body), allow);
}

/* What of silo.conf(5) is pending after silod's last apply, full or
 * partial (a link event's, the groups' poll), as 'silo xdp status' shows
 * it from the state file (the log says what and why). */
static void apply_metrics(const struct silod *d, FILE *f)
{
	fprintf(f,
		"# HELP silo_apply_failed changes of silo.conf that failed and are pending (silod's log says why)\n"
		"# TYPE silo_apply_failed gauge\nsilo_apply_failed %u\n"
		"# HELP silo_apply_waiting declared objects that cannot be made yet (no such device or process)\n"
		"# TYPE silo_apply_waiting gauge\nsilo_apply_waiting %u\n",
		d->rec.failed, d->rec.waiting);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_size, void **con_cls)
{
	struct silod *d = cls;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	(void)version;
	(void)upload_data;
	(void)upload_size;
	(void)con_cls;
	if (strcmp(url, "/metrics"))
		return respond_text(conn, MHD_HTTP_NOT_FOUND,
				    "not found: silod serves /metrics\n", NULL);
	/* HEAD: libmicrohttpd sends the headers only. */
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return respond_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				    "method not allowed: GET /metrics\n",
				    "GET, HEAD");
	f = open_memstream(&buf, &len);
	if (!f)
		return MHD_NO;
	err = silo_metrics_write(d->silo, f);
	if (!err && d->rec.decl)
		apply_metrics(d, f);
	fclose(f);
	if (err) {
		free(buf);
		pr_warn("metrics: cannot read them: %s\n", strerror(-err));
		return respond_text(
			conn, MHD_HTTP_SERVICE_UNAVAILABLE,
			"cannot read silo's maps: see silod's log\n", NULL);
	}
	return respond(conn, MHD_HTTP_OK, METRICS_CONTENT_TYPE, buf, len, NULL);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[256];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	pr_warn("metrics: %s%s", msg,
		msg[0] && msg[strlen(msg) - 1] == '\n' ? "" : "\n");
}

int metrics_start(struct silod *d, int fd)
{
	d->metrics = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL,
		NULL, handle, d, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
		MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT, 32U,
		MHD_OPTION_CONNECTION_TIMEOUT, 10U, MHD_OPTION_END);
	if (!d->metrics) {
		pr_err("metrics: cannot start the HTTP server\n");
		close(fd);
		return -EIO;
	}
	return 0;
}

void metrics_stop(struct silod *d)
{
	if (d->metrics)
		MHD_stop_daemon(d->metrics); /* closes the socket */
	d->metrics = NULL;
}
