/* What every harness shares: libFuzzer's entry point, and ASSERT, the
 * oracle's check, which names the broken condition and aborts (the
 * fuzzer then saves the input that did it). */
#ifndef STEWARD_FUZZ_H
#define STEWARD_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(x)                                                                         \
	do {                                                                              \
		if (!(x)) {                                                               \
			fprintf(stderr, "%s:%d: ASSERT(%s) failed\n", __FILE__, __LINE__, #x); \
			abort();                                                          \
		}                                                                         \
	} while (0)

#endif
