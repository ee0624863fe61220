// SPDX-License-Identifier: GPL-2.0
/* silo reuseport: not built yet. */
#include "cli.h"

int do_reuseport(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return usage_error("reuseport: not implemented yet\n");
}
