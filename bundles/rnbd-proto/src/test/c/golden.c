/*
 * Prints RNBD messages as Linux 7.2 builds them, compiled against 7.2's own rnbd-proto.h
 * (linux-7.2/, verbatim): the struct layouts, the enum values and the inline functions
 * rnbd_to_bio_flags and rq_to_rnbd_flags are the kernel's, not retyped. What this file adds is
 * only what the kernel's functions would fill in from a live device or request, each
 * assignment statement as the named function in rnbd-clt.c / rnbd-srv.c writes it.
 * LinuxHeaderGoldenTest compiles and runs it and holds rnbd-proto's codecs against every line.
 *
 * Output, one item a line:
 *   version MAJOR MINOR
 *   size STRUCT BYTES
 *   msg NAME HEX             a whole message, little-endian bytes
 *   bio RW OP FLAGS WARNED   what rnbd_to_bio_flags makes of rw (hex): the bio op, its flags
 *                            (comma-separated, "-" for none) and whether the kernel WARNs
 *
 * Part of this project (licence as the project's); the header it includes is GPL-2.0-or-later
 * (see README.md beside it).
 */
#include <stdio.h>
#include <string.h>
#include <stddef.h>
#include <limits.h>
#include "rnbd-proto.h"

int shim_warned;

#define cpu_to_le16(x) ((__le16)(x))
#define cpu_to_le32(x) ((__le32)(x))
#define cpu_to_le64(x) ((__le64)(x))

static void hex(const char *name, const void *p, size_t n)
{
	const unsigned char *b = p;
	printf("msg %s ", name);
	for (size_t i = 0; i < n; i++)
		printf("%02x", b[i]);
	printf("\n");
}

/* What rnbd_srv_fill_msg_open_rsp reads from the block device (bdev_* and queue_* helpers). */
struct bdev {
	u32 device_id;
	u64 nr_sectors;
	unsigned int logical_block_size, physical_block_size, max_segments, max_hw_sectors;
	unsigned int write_zeroes_sectors, max_discard_sectors, discard_granularity, discard_alignment;
	unsigned int max_secure_erase_sectors;
	bool write_cache, fua;
};

/* rnbd-srv.c rnbd_srv_fill_msg_open_rsp (7.2; 6.12 is the same), statement by statement */
static void fill_open_rsp(struct rnbd_msg_open_rsp *rsp, const struct bdev *bdev)
{
	memset(rsp, 0, sizeof(*rsp));

	rsp->hdr.type = cpu_to_le16(RNBD_MSG_OPEN_RSP);
	rsp->device_id = cpu_to_le32(bdev->device_id);
	rsp->nsectors = cpu_to_le64(bdev->nr_sectors);
	rsp->logical_block_size	= cpu_to_le16(bdev->logical_block_size);
	rsp->physical_block_size = cpu_to_le16(bdev->physical_block_size);
	rsp->max_segments = cpu_to_le16(bdev->max_segments);
	rsp->max_hw_sectors = cpu_to_le32(bdev->max_hw_sectors);
	rsp->max_write_zeroes_sectors = cpu_to_le32(bdev->write_zeroes_sectors);
	rsp->max_discard_sectors = cpu_to_le32(bdev->max_discard_sectors);
	rsp->discard_granularity = cpu_to_le32(bdev->discard_granularity);
	rsp->discard_alignment = cpu_to_le32(bdev->discard_alignment);
	rsp->secure_discard = cpu_to_le16(bdev->max_secure_erase_sectors);
	rsp->cache_policy = 0;
	if (bdev->write_cache)
		rsp->cache_policy |= RNBD_WRITEBACK;
	if (bdev->fua)
		rsp->cache_policy |= RNBD_FUA;
}

/* rnbd-clt.c rnbd_client_xfer_request: the message of one block request */
static void io(const char *name, blk_opf_t cmd_flags, u64 pos, u32 bytes, u16 ioprio)
{
	struct request rq = { .cmd_flags = cmd_flags };
	struct rnbd_msg_io msg;

	memset(&msg, 0, sizeof(msg)); /* the kernel's is on the stack: its padding is whatever was there */
	msg.sector	= cpu_to_le64(pos);
	msg.bi_size	= cpu_to_le32(bytes);
	msg.rw		= cpu_to_le32(rq_to_rnbd_flags(&rq));
	msg.prio	= cpu_to_le16(ioprio);
	msg.hdr.type	= cpu_to_le16(RNBD_MSG_IO);
	msg.device_id	= cpu_to_le32(3);
	hex(name, &msg, sizeof(msg));
}

static const char *op_name(blk_opf_t opf)
{
	switch (opf & REQ_OP_MASK) {
	case REQ_OP_READ: return "READ";
	case REQ_OP_WRITE: return "WRITE";
	case REQ_OP_FLUSH: return "FLUSH";
	case REQ_OP_DISCARD: return "DISCARD";
	case REQ_OP_SECURE_ERASE: return "SECURE_ERASE";
	case REQ_OP_WRITE_ZEROES: return "WRITE_ZEROES";
	default: return "OTHER";
	}
}

/* rnbd-srv.c process_rdma: what the server's bio becomes for a request's rw */
static void bio(u32 rw)
{
	blk_opf_t opf;
	char flags[64] = "";

	shim_warned = 0;
	opf = rnbd_to_bio_flags(rw);
	if (opf & REQ_SYNC)
		strcat(flags, ",SYNC");
	if (opf & REQ_FUA)
		strcat(flags, ",FUA");
	if (opf & REQ_PREFLUSH)
		strcat(flags, ",PREFLUSH");
	if (opf & REQ_NOUNMAP)
		strcat(flags, ",NOUNMAP");
	printf("bio %x %s %s %d\n", rw, op_name(opf), flags[0] ? flags + 1 : "-", shim_warned);
}

int main(void)
{
	const unsigned int one = 1;

	if (*(const unsigned char *)&one != 1) {
		fprintf(stderr, "golden: a little-endian host is needed\n");
		return 2;
	}
	printf("version %d %d\n", RNBD_PROTO_VER_MAJOR, RNBD_PROTO_VER_MINOR);
	printf("size rnbd_msg_sess_info %zu\n", sizeof(struct rnbd_msg_sess_info));
	printf("size rnbd_msg_sess_info_rsp %zu\n", sizeof(struct rnbd_msg_sess_info_rsp));
	printf("size rnbd_msg_open %zu\n", sizeof(struct rnbd_msg_open));
	printf("size rnbd_msg_open_rsp %zu\n", sizeof(struct rnbd_msg_open_rsp));
	printf("size rnbd_msg_io %zu\n", sizeof(struct rnbd_msg_io));
	printf("size rnbd_msg_close %zu\n", sizeof(struct rnbd_msg_close));

	{	/* rnbd-clt.c send_msg_sess_info */
		struct rnbd_msg_sess_info msg;
		memset(&msg, 0, sizeof(msg));
		msg.hdr.type = cpu_to_le16(RNBD_MSG_SESS_INFO);
		msg.ver      = RNBD_PROTO_VER_MAJOR;
		hex("sess_info", &msg, sizeof(msg));
	}
	{	/* rnbd-srv.c process_msg_sess_info: the version both sides use */
		struct rnbd_msg_sess_info_rsp rsp;
		u8 ver = RNBD_PROTO_VER_MAJOR;
		memset(&rsp, 0, sizeof(rsp));
		rsp.hdr.type = cpu_to_le16(RNBD_MSG_SESS_INFO_RSP);
		rsp.ver = ver < RNBD_PROTO_VER_MAJOR ? ver : RNBD_PROTO_VER_MAJOR;
		hex("sess_info_rsp", &rsp, sizeof(rsp));
	}
	{	/* rnbd-clt.c send_msg_open (strscpy is strncpy plus a terminating NUL here) */
		struct rnbd_msg_open msg;
		memset(&msg, 0, sizeof(msg));
		msg.hdr.type	= cpu_to_le16(RNBD_MSG_OPEN);
		msg.access_mode	= RNBD_ACCESS_RW;
		strncpy((char *)msg.dev_name, "/dev/ram0", sizeof(msg.dev_name) - 1);
		hex("open_rw", &msg, sizeof(msg));
		msg.access_mode	= RNBD_ACCESS_MIGRATION;
		hex("open_migration", &msg, sizeof(msg));
		msg.access_mode	= RNBD_ACCESS_RO;
		hex("open_ro", &msg, sizeof(msg));
	}
	{	/* rnbd-clt.c send_msg_close */
		struct rnbd_msg_close msg;
		memset(&msg, 0, sizeof(msg));
		msg.hdr.type	= cpu_to_le16(RNBD_MSG_CLOSE);
		msg.device_id	= cpu_to_le32(7);
		hex("close", &msg, sizeof(msg));
	}
	{	/*
		 * A 64 MiB brd of 6.12 and 7.2 (brd_alloc's queue_limits, completed by
		 * blk_validate_limits): physical PAGE_SIZE, max_hw_discard_sectors UINT_MAX, discard
		 * granularity PAGE_SIZE, no max_hw_sectors (BLK_SAFE_MAX_SECTORS, 255), no
		 * max_segments (BLK_MAX_SEGMENTS, 128), no write zeroes, no write cache. The OPEN_RSP
		 * the appliance's client refused with "max sectors out of range".
		 */
		struct bdev brd = {
			.device_id = 0, .nr_sectors = 131072, .logical_block_size = 512,
			.physical_block_size = 4096, .max_segments = 128, .max_hw_sectors = 255,
			.write_zeroes_sectors = 0, .max_discard_sectors = UINT_MAX,
			.discard_granularity = 4096, .discard_alignment = 0,
			.max_secure_erase_sectors = 0, .write_cache = false, .fua = false,
		};
		struct rnbd_msg_open_rsp rsp;
		fill_open_rsp(&rsp, &brd);
		hex("open_rsp_brd", &rsp, sizeof(rsp));
	}
	{	/*
		 * A disk with a volatile write cache and FUA, WRITE_ZEROES, and secure erase of up to
		 * UINT_MAX sectors, which secure_discard (16 bits) keeps as 0xffff
		 */
		struct bdev disk = {
			.device_id = 5, .nr_sectors = 0x123456789aULL, .logical_block_size = 4096,
			.physical_block_size = 4096, .max_segments = 254, .max_hw_sectors = 2560,
			.write_zeroes_sectors = 0x10000, .max_discard_sectors = 0x3fffff,
			.discard_granularity = 1 << 20, .discard_alignment = 4096,
			.max_secure_erase_sectors = UINT_MAX, .write_cache = true, .fua = true,
		};
		struct rnbd_msg_open_rsp rsp;
		fill_open_rsp(&rsp, &disk);
		hex("open_rsp_disk", &rsp, sizeof(rsp));
	}

	/* rnbd_client_xfer_request for each kind of block request Linux's client queues */
	io("io_read", REQ_OP_READ, 8, 4096, 0);
	io("io_write", REQ_OP_WRITE, 16, 131072, 0x4003);
	io("io_write_sync_fua", REQ_OP_WRITE | REQ_SYNC | REQ_FUA, 0x123456789aULL, 4096, 0);
	io("io_write_preflush", REQ_OP_WRITE | REQ_PREFLUSH, 24, 4096, 0);
	io("io_flush", REQ_OP_FLUSH | REQ_PREFLUSH, (u64)-1, 0, 0); /* blk_rq_init's sector */
	io("io_discard", REQ_OP_DISCARD, 2048, 1 << 20, 0);
	io("io_secure_erase", REQ_OP_SECURE_ERASE, 2048, 1 << 20, 0);
	io("io_write_zeroes", REQ_OP_WRITE_ZEROES, 4096, 1 << 21, 0);
	io("io_write_zeroes_nounmap", REQ_OP_WRITE_ZEROES | REQ_NOUNMAP, 4096, 1 << 21, 0);

	/* rnbd_to_bio_flags: every op, every flag, and what Linux does with bits it does not know */
	{
		const u32 ops[] = { RNBD_OP_READ, RNBD_OP_WRITE, RNBD_OP_FLUSH, RNBD_OP_DISCARD,
				    RNBD_OP_SECURE_ERASE, RNBD_OP_WRITE_ZEROES, 6, 0xff };
		const u32 flags[] = { 0, RNBD_F_SYNC, RNBD_F_FUA, RNBD_F_PREFLUSH, RNBD_F_NOUNMAP,
				      RNBD_F_SYNC | RNBD_F_FUA | RNBD_F_PREFLUSH | RNBD_F_NOUNMAP,
				      1u << 12, 1u << 31 };
		for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
			for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
				bio(ops[o] | flags[f]);
	}
	return 0;
}
