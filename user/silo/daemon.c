// SPDX-License-Identifier: GPL-2.0
/* silo daemon: not built yet. */
#include "cli.h"

int do_daemon(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return usage_error("daemon: not implemented yet\n");
}
