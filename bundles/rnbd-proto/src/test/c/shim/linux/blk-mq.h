/*
 * Part of this project's test shim: the block layer names rnbd-proto.h's inline functions use.
 * The REQ_OP_* values are 7.2's include/linux/blk_types.h; the REQ_* flags only need to be
 * distinct bits above the op (the golden program prints them by name). op_is_flush and
 * op_is_sync are 7.2's definitions (blk_types.h), restated because rq_to_rnbd_flags' result
 * depends on them. WARN records that the kernel would have warned, and goes on as WARN does.
 */
#ifndef SHIM_LINUX_BLK_MQ_H
#define SHIM_LINUX_BLK_MQ_H
#include <linux/types.h>
typedef u32 blk_opf_t;
#define REQ_OP_BITS 8
#define REQ_OP_MASK ((blk_opf_t)((1 << REQ_OP_BITS) - 1))
enum req_op {
	REQ_OP_READ = 0,
	REQ_OP_WRITE = 1,
	REQ_OP_FLUSH = 2,
	REQ_OP_DISCARD = 3,
	REQ_OP_SECURE_ERASE = 5,
	REQ_OP_WRITE_ZEROES = 9,
};
#define REQ_SYNC     (1u << 8)
#define REQ_FUA      (1u << 9)
#define REQ_PREFLUSH (1u << 10)
#define REQ_NOUNMAP  (1u << 11)
struct request {
	blk_opf_t cmd_flags;
};
static inline enum req_op req_op(const struct request *rq)
{
	return (enum req_op)(rq->cmd_flags & REQ_OP_MASK);
}
static inline bool op_is_flush(blk_opf_t op)
{
	return op & (REQ_FUA | REQ_PREFLUSH);
}
static inline bool op_is_sync(blk_opf_t op)
{
	return (op & REQ_OP_MASK) == REQ_OP_READ || (op & (REQ_SYNC | REQ_FUA | REQ_PREFLUSH));
}
extern int shim_warned;
#define WARN(cond, ...) ({ int __c = !!(cond); if (__c) shim_warned = 1; __c; })
#endif
