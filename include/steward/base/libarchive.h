/* libarchive, loaded on first use (steward/base/dynlib.h).
 *
 * Linked, libarchive brings libxml2, ICU and so libstdc++ into every
 * stewardd at start: about 2 MB of resident pages for a library that
 * only a build uses (unpacking an uploaded archive, sw_archive_unpack;
 * streaming a build context as tar, the local driver). The first of
 * them opens it; a server that never builds never maps it. Its face is
 * in base because both of its users (deploy and driver) reach base. */
#ifndef STEWARD_BASE_LIBARCHIVE_H
#define STEWARD_BASE_LIBARCHIVE_H

#include <stddef.h>
#include <archive.h>
#include <archive_entry.h>
#include "steward/base/dynlib.h"

/* The functions of libarchive that Steward calls, without their
 * archive_ prefix. */
#define SW_LIBARCHIVE_FUNCTIONS(X)                                                                  \
	X(entry_clear) X(entry_filetype) X(entry_free) X(entry_hardlink) X(entry_hardlink_utf8)     \
	X(entry_is_encrypted) X(entry_new) X(entry_pathname) X(entry_pathname_utf8) X(entry_perm)   \
	X(entry_set_gid) X(entry_set_mode) X(entry_set_mtime) X(entry_set_pathname)                  \
	X(entry_set_size) X(entry_set_symlink) X(entry_set_uid) X(entry_size) X(entry_size_is_set)  \
	X(entry_stat) X(entry_symlink) X(entry_symlink_utf8) X(error_string) X(format)               \
	X(read_data) X(read_disk_descend) X(read_disk_new) X(read_disk_open)                         \
	X(read_disk_set_behavior) X(read_disk_set_symlink_physical) X(read_free) X(read_new)         \
	X(read_next_header) X(read_next_header2) X(read_open_filename)                               \
	X(read_support_filter_gzip) X(read_support_format_tar) X(read_support_format_zip)            \
	X(write_add_filter_none) X(write_close) X(write_data) X(write_free) X(write_header)          \
	X(write_new) X(write_open2) X(write_set_bytes_per_block) X(write_set_format_pax_restricted)

#define SW_LIBARCHIVE_MEMBER(name) SW_DYNLIB_MEMBER(archive_, name)
struct sw_libarchive {
	SW_LIBARCHIVE_FUNCTIONS(SW_LIBARCHIVE_MEMBER)
};
#undef SW_LIBARCHIVE_MEMBER

/* The loaded library, the same for every caller (sw_dynlib_open()):
 * NULL when it cannot be loaded, why in err (errlen bytes; may be NULL). */
const struct sw_libarchive *sw_libarchive(char *err, size_t errlen);

#endif
