// SPDX-License-Identifier: GPL-2.0
/*
 * What compare reads off its command lines (see compare_table.h): the labels of the
 * variants, from the words in which the commands differ, and the files named on them.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cells.h"
#include "compare_table.h"

/* ---- labels ---- */

#define MAX_WORDS 64

static int split_words(char *s, char **words)
{
	char *save = NULL;
	int n = 0;

	for (char *w = strtok_r(s, " \t\n", &save); w && n < MAX_WORDS;
	     w = strtok_r(NULL, " \t\n", &save))
		words[n++] = w;
	return n;
}

/* Words [from, to) joined, a path reduced to its last component ("tr2u" for ./workloads/tr2u). */
static void join_words(char *const *words, int from, int to, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (int i = from; i < to && used < len; i++) {
		const char *w = strrchr(words[i], '/') && strrchr(words[i], '/')[1]
					? strrchr(words[i], '/') + 1 : words[i];

		used += snprintf(buf + used, len - used, "%s%s", used ? " " : "", w);
	}
	if (!buf[0])
		snprintf(buf, len, "(none)");
}

static bool labels_usable(const struct compare_variant *v, int n, char (*derived)[256])
{
	char shown[4 * 256 + 8];

	for (int i = 0; i < n; i++) {
		if (v[i].label[0])
			continue;
		if (text_width(name_cell(derived[i], 0, shown, sizeof(shown))) > LABEL_MAX)
			return false;
		for (int j = 0; j < i; j++)
			if (!strcmp(derived[i], v[j].label[0] ? v[j].label : derived[j]))
				return false;
	}
	return n > 1;
}

static void words_in_common(char *(*words)[MAX_WORDS], const int *nw, int n, int *pre, int *suf)
{
	*pre = *suf = MAX_WORDS;
	for (int i = 1; i < n; i++) {
		int p = 0, s = 0, most = nw[i] < nw[0] ? nw[i] : nw[0];

		while (p < most && !strcmp(words[i][p], words[0][p]))
			p++;
		while (s < most - p && !strcmp(words[i][nw[i] - 1 - s], words[0][nw[0] - 1 - s]))
			s++;
		*pre = p < *pre ? p : *pre;
		*suf = s < *suf ? s : *suf;
	}
}

static void set_label(struct compare_variant *v, const char *label)
{
	size_t len = strnlen(label, sizeof(v->label) - 1);

	memcpy(v->label, label, len);
	v->label[len] = 0;
}

void compare_label(struct compare_variant *v, int n)
{
	char *copies[MAX_VARIANTS], *words[MAX_VARIANTS][MAX_WORDS];
	char derived[MAX_VARIANTS][256];
	int nw[MAX_VARIANTS], pre, suf;

	for (int i = 0; i < n; i++) {
		copies[i] = strdup(v[i].command);
		nw[i] = copies[i] ? split_words(copies[i], words[i]) : 0;
	}
	words_in_common(words, nw, n, &pre, &suf);
	for (int i = 0; i < n; i++)
		join_words(words[i], pre, nw[i] - suf, derived[i], sizeof(derived[i]));
	if (labels_usable(v, n, derived)) {
		for (int i = 0; i < n; i++)
			if (!v[i].label[0])
				set_label(&v[i], derived[i]);
	} else {
		for (int i = 0; i < n; i++)
			if (!v[i].label[0])
				snprintf(v[i].label, sizeof(v[i].label), "%c", 'A' + i % 26);
	}
	for (int i = 0; i < n; i++)
		free(copies[i]);
}

/* ---- the files named on the commands ---- */

static bool command_position(char *const *words, int i)
{
	static const char *const separators[] = { "|", "||", "&&", ";", "&", "(", NULL };

	if (i == 0 || words[i - 1][strlen(words[i - 1]) - 1] == ';')
		return true;
	for (const char *const *s = separators; *s; s++)
		if (!strcmp(words[i - 1], *s))
			return true;
	return false;
}

static void add_named_file(struct comparison *c, const char *word)
{
	char path[PATH_MAX], clean[PATH_MAX];
	size_t len;
	struct stat st;

	/* "<in", ">out", "2>>log", "'f'": the path inside. */
	word += strspn(word, "0123456789");
	word += strspn(word, "<>&'\"");
	snprintf(clean, sizeof(clean), "%s", word);
	len = strlen(clean);
	while (len && strchr("'\";", clean[len - 1]))
		clean[--len] = 0;
	if (!len || clean[0] == '-' || !realpath(clean, path) || stat(path, &st) ||
	    !S_ISREG(st.st_mode))
		return;
	for (int i = 0; i < c->nfiles; i++)
		if (!strcmp(c->files[i], path))
			return;
	if (c->nfiles < MAX_NAMED_FILES)
		c->files[c->nfiles++] = strdup(path);
}

void compare_find_files(struct comparison *c)
{
	for (int v = 0; v < c->n; v++) {
		char *copy = strdup(c->v[v].command), *words[MAX_WORDS];
		int n = copy ? split_words(copy, words) : 0;

		for (int i = 0; i < n; i++)
			if (!command_position(words, i))
				add_named_file(c, words[i]);
		free(copy);
	}
	/* A failed strdup leaves a NULL: drop it. */
	for (int i = 0; i < c->nfiles; i++)
		if (!c->files[i])
			c->files[i--] = c->files[--c->nfiles];
}

void compare_free_files(struct comparison *c)
{
	for (int i = 0; i < c->nfiles; i++)
		free(c->files[i]);
	c->nfiles = 0;
}
