// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the kernel identity check in user/kernel/kbtf.c, against fake kernel files: the
 * minimal BTF is handed out only for the build kernel's build ID and BTF size.
 * tests/test_startup.py runs it; it prints one line per case and exits 0 if all pass.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kernel/kbtf.h"

static const unsigned char fake_btf[] = "not really BTF";
static const unsigned char fake_id[20] = { 0xab, 0xf9, 0xec, 0x0e, 0xc5, 0x94, 0x66, 0x00, 0xc9, 0x06,
					   0x41, 0xcf, 0x5d, 0xb9, 0x98, 0x47, 0x2f, 0xac, 0x41, 0x0b };
static const struct kbtf_type fake_types[] = { { "inode", 895 }, { NULL, 0 } };

/* What a build recorded; the cases below edit it. */
static struct kbtf_cut cut;

static char dir[] = "/tmp/kbtf_test.XXXXXX";
static int failures;

/* Writes notes holding an unrelated note, then a GNU build ID note with id[0..len). */
static void write_notes(const char *path, const unsigned char *id, uint32_t len, uint32_t type,
			size_t truncate)
{
	unsigned char buf[256] = { 0 };
	size_t n = 0;
	uint32_t hdr[3] = { 6, 4, 0x100 };

	memcpy(buf + n, hdr, 12), n += 12;
	memcpy(buf + n, "Linux\0\0\0", 8), n += 8;
	memcpy(buf + n, "\1\1\0\0", 4), n += 4;
	hdr[0] = 4, hdr[1] = len, hdr[2] = type;
	memcpy(buf + n, hdr, 12), n += 12;
	memcpy(buf + n, "GNU", 4), n += 4;
	memcpy(buf + n, id, len), n += (len + 3) & ~3u;
	FILE *f = fopen(path, "wb");

	fwrite(buf, 1, truncate ? truncate : n, f);
	fclose(f);
}

static void write_size(const char *path, size_t size)
{
	FILE *f = fopen(path, "wb");

	for (size_t i = 0; i < size; i++)
		fputc(0, f);
	fclose(f);
}

static void expect(const char *name, bool want_fd, const char *want_why)
{
	char notes[64], btf[64];
	const char *why = NULL;

	snprintf(notes, sizeof(notes), "%s/notes", dir);
	snprintf(btf, sizeof(btf), "%s/vmlinux", dir);
	int fd = kbtf_open(&cut, btf, notes, &why);
	bool ok = want_fd ? fd >= 0 : fd < 0 && why && strstr(why, want_why);

	if (ok && fd >= 0) {
		char got[sizeof(fake_btf)] = { 0 };

		ok = pread(fd, got, sizeof(got), 0) == (ssize_t)cut.btf_len &&
		     !memcmp(got, fake_btf, cut.btf_len);
	}
	if (fd >= 0)
		close(fd);
	printf("%s %s%s%s\n", ok ? "ok" : "FAIL", name, why ? ": " : "", why ? why : "");
	failures += !ok;
}

int main(void)
{
	char path[64], notes[64], btf[64];
	unsigned char other[20];

	if (!mkdtemp(dir))
		return perror("mkdtemp"), 2;
	snprintf(notes, sizeof(notes), "%s/notes", dir);
	snprintf(btf, sizeof(btf), "%s/vmlinux", dir);
	cut = (struct kbtf_cut){ .btf = fake_btf, .btf_len = sizeof(fake_btf),
				      .build_id = fake_id, .build_id_len = sizeof(fake_id),
				      .vmlinux_btf_size = 1000, .types = fake_types };
	write_size(btf, 1000);

	write_notes(notes, fake_id, 20, 3, 0);
	expect("same kernel", true, NULL);
	if (kbtf_type_id(&cut, "inode") != 895 || kbtf_type_id(&cut, "folio") != 0)
		printf("FAIL type ids\n"), failures++;

	memcpy(other, fake_id, 20);
	other[19] ^= 1;
	write_notes(notes, other, 20, 3, 0);
	expect("other build ID", false, "not the one iotrace was built on");
	write_notes(notes, fake_id, 16, 3, 0);
	expect("shorter build ID", false, "not the one iotrace was built on");
	write_notes(notes, fake_id, 20, 4, 0);
	expect("no build ID note", false, "not the one iotrace was built on");
	write_notes(notes, fake_id, 20, 3, 50);
	expect("truncated notes", false, "not the one iotrace was built on");

	write_notes(notes, fake_id, 20, 3, 0);
	write_size(btf, 999);
	expect("other BTF size", false, "BTF differs");
	unlink(btf);
	expect("no kernel BTF", false, "BTF differs");
	write_size(btf, 1000);
	unlink(notes);
	expect("no notes", false, "unreadable");

	cut.btf_len = 0;
	cut.why_none = "no kernel BTF at build time";
	expect("built without BTF", false, "no kernel BTF at build time");

	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path))
		failures++;
	return failures ? 1 : 0;
}
