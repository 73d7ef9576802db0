/* SPDX-License-Identifier: MIT */
/*
 * One helper the tools share for their --json output.
 */
#ifndef D3DQ_TOOLS_JSON_H
#define D3DQ_TOOLS_JSON_H

#include <stdio.h>

/*
 * Print @s as a JSON string literal: quotes and backslashes escaped, control
 * characters as \uXXXX. The strings the tools print (paths, driver names,
 * process names, strerror texts) are UTF-8 or ASCII, which JSON takes as is.
 * A NULL @s prints "".
 */
static inline void json_str(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

#endif
