/*
 * Part of this project's test shim (not from Linux): just enough of the kernel's types for
 * rnbd-proto.h to compile in user space. The widths are the kernel's; the __le types are plain
 * integers because the golden program runs on a little-endian host (it checks that).
 */
#ifndef SHIM_LINUX_TYPES_H
#define SHIM_LINUX_TYPES_H
#include <stdint.h>
#include <stdbool.h>
typedef uint8_t u8;
typedef int8_t s8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef uint16_t __le16;
typedef uint32_t __le32;
typedef uint64_t __le64;
#define __force
#define __maybe_unused __attribute__((unused))
#endif
