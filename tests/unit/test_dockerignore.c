/* .dockerignore (src/driver/dockerignore.c). The expected answers are
 * Docker's documented behaviour (docs.docker.com/build/concepts/context/
 * #dockerignore-files) and the cases moby's patternmatcher and ignorefile
 * document in their tests: written from those, not from this code. */
#include <errno.h>
#include <stdlib.h>
#include "driver/driver_internal.h"
#include "test_help.h"

/* Whether path is excluded by the file text; -2 when text is refused. */
static int excluded(const char *text, const char *path)
{
	char err[256];
	struct sw_dockerignore *m = sw_dockerignore_parse(text, strlen(text), err, sizeof(err));
	if (!m)
		return -2;
	int r = sw_dockerignore_excluded(m, path);
	sw_dockerignore_free(m);
	return r;
}

/* One case: (text, path, excluded?) with the file and line on failure. */
#define EX(text, path, want)                                                                  \
	do {                                                                                  \
		int got_ = excluded((text), (path));                                          \
		if (got_ != (want)) {                                                         \
			fprintf(stderr, "  %s:%d: %s against \"%s\": %d, wanted %d\n", __FILE__, \
				__LINE__, #text, (path), got_, (want));                       \
			*sw_failed_ = 1;                                                      \
		}                                                                             \
	} while (0)

/* The sentence of a refused text (len bytes), or "" when it parses. */
static const char *refusal_n(const char *text, size_t len, int *ret_errno)
{
	static char err[256];
	err[0] = '\0';
	errno = 0;
	struct sw_dockerignore *m = sw_dockerignore_parse(text, len, err, sizeof(err));
	*ret_errno = errno;
	if (m) {
		sw_dockerignore_free(m);
		return "";
	}
	return err;
}

static const char *refusal(const char *text, int *ret_errno)
{
	return refusal_n(text, strlen(text), ret_errno);
}

/* ---- the documentation's examples ---- */

TEST(documentation_example_with_comment_and_wildcards)
{
	const char *f = "# comment\n*/temp*\n*/*/temp*\ntemp?\n";
	EX(f, "somedir/temporary.txt", 1);
	EX(f, "somedir/temp", 1);
	EX(f, "somedir/temp/inside", 1); /* a directory excluded: its subtree too */
	EX(f, "somedir/subdir/temporary.txt", 1);
	EX(f, "tempa", 1);
	EX(f, "tempb", 1);
	EX(f, "temp", 0);       /* '?' is exactly one character */
	EX(f, "tempab", 0);
	EX(f, "temporary.txt", 0); /* "*" + "/temp*" needs one directory above */
	EX(f, "a/b/c/temp.txt", 0);
	EX(f, "# comment", 0);
	EX(f, "somedir/other.txt", 0);
}

TEST(double_star_matches_any_number_of_directories)
{
	EX("**/*.go", "main.go", 1);
	EX("**/*.go", "cmd/tool/main.go", 1);
	EX("**/*.go", "main.go.txt", 0);
}

TEST(last_matching_line_wins)
{
	const char *f = "*.md\n!README.md\n";
	EX(f, "CHANGES.md", 1);
	EX(f, "README.md", 0);
	/* the documentation's two orders of the same lines */
	f = "*.md\n!README*.md\nREADME-secret.md\n";
	EX(f, "README-secret.md", 1);
	EX(f, "README-public.md", 0);
	EX(f, "other.md", 1);
	f = "*.md\nREADME-secret.md\n!README*.md\n";
	EX(f, "README-secret.md", 0);
	EX(f, "README-public.md", 0);
	EX(f, "other.md", 1);
}

TEST(leading_slash_and_trailing_slash_mean_the_same)
{
	EX("/foo/bar", "foo/bar", 1);
	EX("foo/bar", "foo/bar", 1);
	EX("/foo/bar/", "foo/bar/baz", 1);
	EX("foo/", "foo", 1);
	EX("/foo/bar", "bar", 0);
}

TEST(patterns_are_cleaned_as_filepath_clean_does)
{
	EX("./foo", "foo", 1);
	EX("foo//bar", "foo/bar", 1);
	EX("foo/./bar", "foo/bar", 1);
	EX("foo/../bar", "bar", 1);
	EX("foo/../bar", "foo", 0);
	EX("../foo", "foo", 0); /* outside the context: matches nothing */
	EX(".", "foo", 0);      /* "for historical reasons, the pattern . is ignored" */
	EX("!./keep", "keep", 0);
}

/* ---- reading the file ---- */

TEST(comments_blank_lines_and_whitespace)
{
	EX("#secret\n", "#secret", 0);     /* a comment, not a pattern */
	EX(" #secret\n", "#secret", 1);    /* '#' after a space is a pattern */
	EX("\n\n   \n\t\nfoo\n", "foo", 1);
	EX("   foo  \t\n", "foo", 1);
	EX("foo\r\nbar\r\n", "bar", 1);    /* CRLF line ends */
	EX("foo\r\nbar\r\n", "foo", 1);
	EX("foo", "foo", 1);               /* no final newline */
	EX("! foo\n", "foo", 0);
	EX("*\n!  foo  \n", "foo", 0);     /* space after '!' is trimmed */
	EX("*\n!  foo  \n", "bar", 1);
	EX("\xEF\xBB\xBF" "foo\n", "foo", 1); /* a UTF-8 BOM opens the file */
	EX("\xEF\xBB\xBF#foo\n", "#foo", 0);  /* ... and a comment may follow it */
	EX("\xC2\xA0" "foo\xC2\xA0\n", "foo", 1); /* Go's TrimSpace trims U+00A0 */
	EX("foo bar\n", "foo bar", 1);     /* inner spaces are the pattern's */
}

TEST(no_pattern_excludes_nothing)
{
	EX("", "foo", 0);
	EX("# only a comment\n\n", "foo", 0);
}

/* ---- the syntax (Go's filepath.Match plus "**") ---- */

TEST(star_question_mark_and_classes)
{
	EX("*", "fileutils.go", 1);
	EX("*.go", "fileutils.go", 1);
	EX("*.go", "dir/fileutils.go", 0); /* '*' never crosses '/' */
	EX("*", "dir/file", 1);            /* ... but dir matches, and its subtree goes */
	EX(".*", ".foo", 1);
	EX(".*", "foo", 0);
	EX("abc.def", "abcdef", 0);
	EX("abc.def", "abc.def", 1);
	EX("abc.def", "abcZdef", 0);       /* '.' is not a wildcard */
	EX("abc?def", "abcZdef", 1);
	EX("abc?def", "abcdef", 0);
	EX("a?b", "a/b", 0);               /* '?' never matches '/' */
	EX("a[b-d]e", "ae", 0);
	EX("a[b-d]e", "ace", 1);
	EX("a[b-d]e", "aae", 0);
	EX("a[^b-d]e", "aze", 1);
	EX("a[^b-d]e", "ace", 0);
	EX("a[bc]", "ac", 1);
	EX("a[\\]]", "a]", 1);             /* an escaped ']' inside a class */
	EX("a\\*b", "a*b", 1);             /* '\' takes '*' literally */
	EX("a\\*b", "axb", 0);
	EX("a\\\\", "a\\", 1);
	EX("a(b)c/def", "a(b)c/def", 1);   /* regexp characters are plain */
	EX("a(b)c/def", "a(b)c/xyz", 0);
	EX("a.|)$(}+{bc", "a.|)$(}+{bc", 1);
	EX("dist/*.whl", "dist/proxy.py-2.4.0rc3.dev36+g08acad9-py3-none-any.whl", 1);
	EX("dist/proxy.py-2.4.0rc3.dev36+g08acad9-py3-none-any.whl",
	   "dist/proxy.py-2.4.0rc3.dev36+g08acad9-py3-none-any.whl", 1);
	EX("caf\xC3\xA9?", "caf\xC3\xA9x", 1); /* characters are code points */
	EX("caf?", "caf\xC3\xA9", 1);
}

TEST(double_star_cases_documented_by_patternmatcher)
{
	EX("**", "file", 1);
	EX("**", "dir/file", 1);
	EX("**/", "dir/file", 1);
	EX("**/**", "dir/file", 1);
	EX("dir/**", "dir/file", 1);
	EX("dir/**", "dir/dir2/file", 1);
	EX("dir/**", "dir", 0); /* the directory itself is not under itself */
	EX("**/dir", "dir", 1);
	EX("**/dir", "dir/file", 1);
	EX("**/dir2/*", "dir/dir2/file", 1);
	EX("**/dir2/**", "dir/dir2/dir3/file", 1);
	EX("**file", "file", 1);
	EX("**file", "dir/file", 1);
	EX("**/file", "dir/dir/file", 1);
	EX("**file", "dir/dir/file", 1);
	EX("**/file*", "dir/dir/file", 1);
	EX("**/file*txt", "dir/dir/file.txt", 1);
	EX("**/file*.txt", "dir/dir/file.txt", 1);
	EX("**/**/*.txt", "dir/dir/file.txt", 1);
	EX("**/**/*.txt2", "dir/dir/file.txt", 0);
	EX("**/*.txt", "file.txt", 1);
	EX("**/**/*.txt", "file.txt", 1);
	EX("a**/*.txt", "a/file.txt", 1);
	EX("a**/*.txt", "a/dir/file.txt", 1);
	EX("a**/*.txt", "a/dir/dir/file.txt", 1);
	EX("a/*.txt", "a/dir/file.txt", 0);
	EX("a/*.txt", "a/file.txt", 1);
	EX("a/*.txt**", "a/file.txt", 1);
	EX("**/foo/bar", "foo/bar", 1);
	EX("**/foo/bar", "dir/foo/bar", 1);
	EX("**/foo/bar", "dir/dir2/foo/bar", 1);
	EX("**/.foo", ".foo", 1);
	EX("**/.foo", "bar.foo", 0);
}

/* ---- exceptions and directories ---- */

TEST(an_exception_reincludes_inside_an_excluded_directory)
{
	EX("docs\n!docs/README.md\n", "docs/README.md", 0);
	EX("docs\n!docs/README.md\n", "docs/other.md", 1);
	EX("docs/\n!docs/README.md\n", "docs/README.md", 0);
	EX("docs/*\n!docs/README.md\n", "docs/README.md", 0);
	EX("docs/*\n!docs/README.md\n", "docs/a.md", 1);
	EX("*.go\n!fileutils.go\n", "fileutils.go", 0);
	EX("!fileutils.go\n*.go\n", "fileutils.go", 1); /* the later line wins */
}

TEST(an_unmatched_path_follows_its_parent)
{
	/* a/b matches no line itself: a's decision (excluded) holds */
	EX("a\n!a/b/c\n", "a/b", 1);
	EX("a\n!a/b/c\n", "a/b/c", 0);
	EX("a\n!a/b/c\n", "a/b/c/d", 0); /* under a re-included directory */
	/* an exception on a/b applies to its subtree */
	EX("a\n!a/b\n", "a/b/c", 0);
	/* A line is not tried where it cannot change the answer so far, so it
	 * does not pass a parent's match on (moby's MatchesUsingParentResults):
	 * the third line, tried at a/b/c against a/b/c itself, does not match. */
	EX("a\n!a/b\na\n", "a/b/c", 0);
	/* "!a" matched a, which nothing excluded: it is not passed on */
	EX("a/b\n!a\n", "a/b", 1);
}

TEST(walking_into_an_excluded_directory_needs_an_exception_under_it)
{
	char err[256];
	const char *f = "docs\nbuild\n!docs/README.md\n!*/keep\n";
	struct sw_dockerignore *m = sw_dockerignore_parse(f, strlen(f), err, sizeof(err));
	REQUIRE(m);
	CHECK(sw_dockerignore_walk_into(m, "docs"));
	CHECK(!sw_dockerignore_walk_into(m, "build"));  /* "!*" + "/keep": Docker's test is textual */
	CHECK(!sw_dockerignore_walk_into(m, "doc"));
	CHECK(!sw_dockerignore_walk_into(m, "docs/README.md/x"));
	sw_dockerignore_free(m);
	f = "docs\n";
	m = sw_dockerignore_parse(f, strlen(f), err, sizeof(err));
	REQUIRE(m);
	CHECK(!sw_dockerignore_walk_into(m, "docs")); /* no exception at all */
	sw_dockerignore_free(m);
	f = "a\n!a\n";
	m = sw_dockerignore_parse(f, strlen(f), err, sizeof(err));
	REQUIRE(m);
	CHECK(sw_dockerignore_walk_into(m, "a"));
	sw_dockerignore_free(m);
}

TEST(dockerfile_and_dockerignore_are_always_kept)
{
	char err[256];
	const char *f = "*\nbuild\n";
	struct sw_dockerignore *m = sw_dockerignore_parse(f, strlen(f), err, sizeof(err));
	REQUIRE(m);
	CHECK_INT_EQ(sw_dockerignore_keep(m, ".dockerignore"), 0);
	CHECK_INT_EQ(sw_dockerignore_keep(m, "./build/app.Dockerfile"), 0);
	CHECK_INT_EQ(sw_dockerignore_count(m), 4);
	CHECK_INT_EQ(sw_dockerignore_excluded(m, "src"), 1);
	CHECK_INT_EQ(sw_dockerignore_excluded(m, ".dockerignore"), 0);
	CHECK(sw_dockerignore_walk_into(m, "build"));
	CHECK_INT_EQ(sw_dockerignore_excluded(m, "build"), 1);
	CHECK_INT_EQ(sw_dockerignore_excluded(m, "build/app.Dockerfile"), 0);
	CHECK_INT_EQ(sw_dockerignore_excluded(m, "build/other"), 1);
	CHECK_INT_EQ(sw_dockerignore_keep(m, ""), -EINVAL);
	sw_dockerignore_free(m);
}

TEST(answers_do_not_depend_on_the_order_paths_are_asked)
{
	char err[256];
	const char *f = "a\n!a/b\n*/c\n!a/b/c/d\n";
	const char *paths[] = { "a", "a/b", "a/b/c", "a/b/c/d", "a/x", "z/c", "z", "a/b/c/e" };
	int want[] = { 1, 0, 0, 0, 1, 1, 0, 0 };
	struct sw_dockerignore *m = sw_dockerignore_parse(f, strlen(f), err, sizeof(err));
	REQUIRE(m);
	for (size_t i = 0; i < SW_ARRAY_SIZE(paths); i++)
		CHECK_INT_EQ(sw_dockerignore_excluded(m, paths[i]), want[i]);
	for (size_t i = SW_ARRAY_SIZE(paths); i-- > 0;)
		CHECK_INT_EQ(sw_dockerignore_excluded(m, paths[i]), want[i]);
	sw_dockerignore_free(m);
	/* each alone, from a fresh matcher */
	for (size_t i = 0; i < SW_ARRAY_SIZE(paths); i++)
		CHECK_INT_EQ(excluded(f, paths[i]), want[i]);
}

/* ---- refusals ---- */

TEST(malformed_patterns_fail_naming_the_line)
{
	int e;
	CHECK_STR_EQ(refusal("foo\n# fine\n[abc\n", &e),
		     ".dockerignore line 3: \"[abc\" is not a valid pattern: a character class \"[\" is not closed");
	CHECK_INT_EQ(e, EINVAL);
	CHECK(strstr(refusal("[]a]\n", &e), "line 1: \"[]a]\"") != NULL);
	CHECK(strstr(refusal("ok\nfoo\\\n", &e), "line 2: \"foo\\\" is not a valid pattern: it ends with") != NULL);
	CHECK(strstr(refusal("!\n", &e), "line 1: \"!\" is not a valid pattern") != NULL);
	CHECK(strstr(refusal("! \n", &e), "\"!\" alone names no pattern") != NULL);
	CHECK(strstr(refusal("a[z-a]\n", &e), "runs backwards") != NULL);
	CHECK(strstr(refusal("a[b-]\n", &e), "line 1") != NULL);
	CHECK(strstr(refusal("a[-b]\n", &e), "line 1") != NULL);
	CHECK(strstr(refusal("a[\n", &e), "not closed") != NULL);
	CHECK(strstr(refusal("a\\d\n", &e), "escapes a letter") != NULL);
	CHECK(strstr(refusal("[\xff]\n", &e), "not UTF-8") != NULL);
	/* the quotation keeps to printable ASCII */
	CHECK(strstr(refusal("\x01[\n", &e), "\"?[\"") != NULL);
	CHECK_STR_EQ(refusal("a[]]b]\n# a comment [\n", &e)[0] ? "refused" : "", "refused");
	CHECK_STR_EQ(refusal("# [ in a comment\n[a]\n", &e), "");
}

TEST(file_over_64_kib_is_refused_and_64_kib_is_fine)
{
	size_t n = SW_DOCKERIGNORE_MAX_BYTES;
	char *text = malloc(n + 1);
	REQUIRE(text);
	memset(text, '\n', n + 1);
	memcpy(text, "foo", 3);
	int e;
	CHECK_STR_EQ(refusal_n(text, n, &e), "");
	CHECK_STR_EQ(refusal_n(text, n + 1, &e), "the .dockerignore file is larger than 65536 bytes");
	CHECK_INT_EQ(e, EFBIG);
	free(text);
}

TEST(nul_bytes_are_part_of_a_pattern)
{
	char err[256];
	const char text[] = "a\0b\nc\n";
	struct sw_dockerignore *m = sw_dockerignore_parse(text, sizeof(text) - 1, err, sizeof(err));
	REQUIRE(m);
	CHECK_INT_EQ(sw_dockerignore_excluded(m, "a"), 0); /* "a\0b" is not "a" */
	CHECK_INT_EQ(sw_dockerignore_excluded(m, "c"), 1);
	sw_dockerignore_free(m);
}

TEST_MAIN()
