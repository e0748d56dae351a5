/* Replays a fuzz corpus through a harness without libFuzzer, so the
 * committed corpus runs in the ordinary test suite (and under ASan/UBSan
 * when the suite is built with them). Usage: replay_X DIR_OR_FILE... */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	uint8_t *data = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 4096;
			uint8_t *n = realloc(data, cap);
			if (!n) {
				free(data);
				fclose(f);
				return -1;
			}
			data = n;
		}
		size_t r = fread(data + len, 1, cap - len, f);
		if (r == 0)
			break;
		len += r;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, len);
	free(data);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0, errors = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			errors++;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			errors += replay_file(argv[i]) != 0;
			files++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		if (!d) {
			perror(argv[i]);
			errors++;
			continue;
		}
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			errors += replay_file(path) != 0;
			files++;
		}
		closedir(d);
	}
	printf("%d passed, %d failed\n", files - errors, errors);
	if (files == 0) {
		fprintf(stderr, "no corpus files found\n");
		return 1;
	}
	return errors ? 1 : 0;
}
