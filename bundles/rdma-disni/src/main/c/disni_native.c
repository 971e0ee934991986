/*
 * libdisni.so for the RNBD appliance: the native half of DiSNI 2.1's
 * com.ibm.disni.verbs.impl.NativeDispatcher, written for this project on top of
 * librdmacm and libibverbs (Debian: librdmacm-dev, libibverbs-dev).
 *
 * Contract with DiSNI's Java side (version 32):
 *  - every object handle is the C pointer itself (rdma_cm_id, ibv_pd, ...), so the ids
 *    DiSNI reads back from a CM event match the handles it got from createId;
 *  - work requests arrive serialised by DiSNI in its own fixed layout (JAVA_* below) with
 *    absolute "next" and "sg_list" pointers into the same direct buffer; they are copied
 *    into real ibv_send_wr/ibv_recv_wr structs here, so rdma-core's struct sizes never
 *    have to match DiSNI's;
 *  - completions are written back in DiSNI's 48-byte ibv_wc layout, immediate data in
 *    host order (it is converted to network order on post);
 *  - CM events and CQ events are acknowledged as soon as they are read: DiSNI's Java side
 *    keeps nothing that points into the event, and rdma_destroy_id/ibv_destroy_cq can
 *    then never wait for an acknowledgement a Java thread forgot. _ackCmEvent and
 *    _ackCqEvent are therefore no-ops. What DiSNI's event lacks (the status, and the
 *    private data of CONNECT_REQUEST, ESTABLISHED and REJECTED) is copied into a side
 *    table keyed by the event's cm_id before the acknowledgement, for the provider's
 *    own class io.rnbd.rdma.disni.internal.CmNative to take (see "provider extensions").
 * Calls declared "throws IOException" in Java throw one carrying strerror(errno).
 *
 * Provider extensions: CmNative's natives (rdma_connect/rdma_accept with conn_param
 * private data and retry counts, rdma_reject with private data, taking an event's status
 * and private data) live here too. JNI binds a class's natives only to libraries its own
 * class loader loaded, and under OSGi that loader (rdma-disni's bundle) is not DiSNI's,
 * which loaded this library; a library cannot be loaded by two loaders. So they are
 * bound with RegisterNatives when the provider creates an event channel, the class found
 * through the thread's context class loader, which the provider sets for that call.
 */
#include <pthread.h>
#include <jni.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/ib_user_verbs.h>

#define DISNI_JNI_VERSION 32

/* DiSNI's serialised layouts (see NatIbvSendWR, NatIbvRecvWR, NatIbvSge, IbvWC). */
#define JAVA_SEND_WR_SIZE 72
#define JAVA_SEND_WR_ID 0
#define JAVA_SEND_WR_NEXT 8
#define JAVA_SEND_WR_SGL 16
#define JAVA_SEND_WR_NUM_SGE 24
#define JAVA_SEND_WR_OPCODE 28
#define JAVA_SEND_WR_FLAGS 32
#define JAVA_SEND_WR_IMM 36
#define JAVA_SEND_WR_REMOTE_ADDR 40
#define JAVA_SEND_WR_RKEY 48
#define JAVA_RECV_WR_SIZE 32
#define JAVA_RECV_WR_ID 0
#define JAVA_RECV_WR_NEXT 8
#define JAVA_RECV_WR_SGL 16
#define JAVA_RECV_WR_NUM_SGE 24
#define JAVA_SGE_SIZE 16
#define JAVA_WC_SIZE 48

/* Caps per request: bounds the on-stack copies and the QP's SGE allocation. */
#define MAX_WR_PER_POST 64
#define MAX_SGE_PER_WR 4
#define MAX_POLL_BATCH 64

/*
 * The IB CM's private data sizes as rdma_cm offers them (REQ less rdma_cm's header, REP,
 * REJ): what a provider extension call may send. rdma_cm copies private data into its
 * command before returning, so the copies below live on the stack.
 */
#define CONNECT_PDATA_MAX 56
#define ACCEPT_PDATA_MAX 196
#define REJECT_PDATA_MAX 148
#define EVENT_PDATA_MAX 255 /* rdma_conn_param.private_data_len is a uint8_t */
#define EVENT_SLOTS 64

#define PTR(h) ((void *) (intptr_t) (h))
#define HANDLE(p) ((jlong) (intptr_t) (p))

static void throw_io(JNIEnv *env, const char *what, int err)
{
	char msg[256];
	jclass cls = (*env)->FindClass(env, "java/io/IOException");
	if (cls == NULL)
		return; /* NoClassDefFoundError already pending */
	snprintf(msg, sizeof msg, "%s failed: %s (errno %d)", what, strerror(err), err);
	(*env)->ThrowNew(env, cls, msg);
}

/* rdma-core returns -1 with errno, or a positive errno, depending on the call. */
static int err_of(int ret)
{
	if (ret > 0)
		return ret;
	return errno != 0 ? errno : EIO;
}

static void set_nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* Waits up to timeout ms for fd to become readable: 1 ready, 0 timeout, -1 error. */
static int wait_readable(int fd, int timeout)
{
	struct pollfd p = { .fd = fd, .events = POLLIN, .revents = 0 };
	int ret;
	do {
		ret = poll(&p, 1, timeout);
	} while (ret < 0 && errno == EINTR);
	return ret;
}

#define JNI_FN(name) JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1##name

/* ---------------------------------------------------------------- connection manager */

static void bind_extension_natives(JNIEnv *env);

JNIEXPORT jlong JNI_FN(createEventChannel)(JNIEnv *env, jobject self)
{
	struct rdma_event_channel *ch;

	bind_extension_natives(env);
	ch = rdma_create_event_channel();
	if (ch == NULL) {
		throw_io(env, "rdma_create_event_channel", errno);
		return -1;
	}
	set_nonblocking(ch->fd);
	return HANDLE(ch);
}

JNIEXPORT jlong JNI_FN(createId)(JNIEnv *env, jobject self, jlong channel, jshort ps)
{
	struct rdma_cm_id *id = NULL;
	int ret = rdma_create_id(PTR(channel), &id, NULL, (enum rdma_port_space) (unsigned short) ps);
	if (ret != 0) {
		throw_io(env, "rdma_create_id", err_of(ret));
		return -1;
	}
	return HANDLE(id);
}

JNIEXPORT jlong JNI_FN(createQP)(JNIEnv *env, jobject self, jlong cmid, jlong pd, jlong sendcq,
		jlong recvcq, jint qptype, jint maxsendwr, jint maxrecvwr, jint maxinline)
{
	struct rdma_cm_id *id = PTR(cmid);
	struct ibv_qp_init_attr attr;
	struct ibv_device_attr dev;
	int sge = MAX_SGE_PER_WR;
	int ret;

	if (id->verbs != NULL && ibv_query_device(id->verbs, &dev) == 0 && dev.max_sge < sge)
		sge = dev.max_sge;
	memset(&attr, 0, sizeof attr);
	attr.qp_type = (enum ibv_qp_type) qptype;
	attr.send_cq = PTR(sendcq);
	attr.recv_cq = PTR(recvcq);
	attr.cap.max_send_wr = (uint32_t) maxsendwr;
	attr.cap.max_recv_wr = (uint32_t) maxrecvwr;
	attr.cap.max_send_sge = (uint32_t) sge;
	attr.cap.max_recv_sge = (uint32_t) sge;
	attr.cap.max_inline_data = (uint32_t) maxinline;
	ret = rdma_create_qp(id, PTR(pd), &attr);
	if (ret != 0) {
		throw_io(env, "rdma_create_qp", err_of(ret));
		return -1;
	}
	return HANDLE(id->qp);
}

JNIEXPORT void JNI_FN(bindAddr)(JNIEnv *env, jobject self, jlong cmid, jlong addr)
{
	int ret = rdma_bind_addr(PTR(cmid), PTR(addr));
	if (ret != 0)
		throw_io(env, "rdma_bind_addr", err_of(ret));
}

JNIEXPORT void JNI_FN(listen)(JNIEnv *env, jobject self, jlong cmid, jint backlog)
{
	int ret = rdma_listen(PTR(cmid), backlog);
	if (ret != 0)
		throw_io(env, "rdma_listen", err_of(ret));
}

JNIEXPORT void JNI_FN(resolveAddr)(JNIEnv *env, jobject self, jlong cmid, jlong src, jlong dst, jint timeout)
{
	int ret = rdma_resolve_addr(PTR(cmid), src == 0 ? NULL : PTR(src), PTR(dst), timeout);
	if (ret != 0)
		throw_io(env, "rdma_resolve_addr", err_of(ret));
}

JNIEXPORT void JNI_FN(resolveRoute)(JNIEnv *env, jobject self, jlong cmid, jint timeout)
{
	int ret = rdma_resolve_route(PTR(cmid), timeout);
	if (ret != 0)
		throw_io(env, "rdma_resolve_route", err_of(ret));
}

/*
 * What DiSNI's CM event does not carry, per cm_id: filled by getCmEvent before the event
 * is acknowledged (so nothing points into the event afterwards) and taken by the
 * provider's CM thread right after. The id is a key only, never dereferenced. A slot is
 * overwritten by the next event of the same id, cleared when the id is destroyed, and,
 * should the table ever fill (the provider takes every event at once, so it holds one or
 * two), the oldest entry is dropped.
 */
struct event_slot {
	uintptr_t id;		/* 0: free */
	uint64_t seq;
	int32_t type;
	int32_t status;
	uint32_t len;
	uint8_t data[EVENT_PDATA_MAX];
};

static struct event_slot event_slots[EVENT_SLOTS];
static uint64_t event_seq;
static pthread_mutex_t event_lock = PTHREAD_MUTEX_INITIALIZER;

static struct event_slot *find_slot(uintptr_t id)
{
	int i;
	for (i = 0; i < EVENT_SLOTS; i++)
		if (event_slots[i].id == id)
			return &event_slots[i];
	return NULL;
}

static void stash_event(const struct rdma_cm_event *ev)
{
	struct event_slot *s;
	const void *pdata = NULL;
	uint32_t len = 0;
	int i;

	if (ev->id == NULL)
		return;
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST || ev->event == RDMA_CM_EVENT_ESTABLISHED
			|| ev->event == RDMA_CM_EVENT_REJECTED) {
		pdata = ev->param.conn.private_data;
		len = ev->param.conn.private_data_len; /* <= 255: uint8_t */
		if (pdata == NULL)
			len = 0;
	}
	pthread_mutex_lock(&event_lock);
	s = find_slot((uintptr_t) ev->id);
	if (s == NULL)
		s = find_slot(0);
	if (s == NULL) {
		s = &event_slots[0];
		for (i = 1; i < EVENT_SLOTS; i++)
			if (event_slots[i].seq < s->seq)
				s = &event_slots[i];
	}
	s->id = (uintptr_t) ev->id;
	s->seq = ++event_seq;
	s->type = (int32_t) ev->event;
	s->status = (int32_t) ev->status;
	s->len = len;
	if (len > 0)
		memcpy(s->data, pdata, len);
	pthread_mutex_unlock(&event_lock);
}

static void forget_events(uintptr_t id)
{
	struct event_slot *s;

	pthread_mutex_lock(&event_lock);
	s = find_slot(id);
	if (s != NULL)
		memset(s, 0, sizeof *s);
	pthread_mutex_unlock(&event_lock);
}

/*
 * Returns the event type (>= 0) and stores the listening id and the event's id
 * (-1 where there is none), or -1 when no event arrived within timeout ms.
 */
JNIEXPORT jint JNI_FN(getCmEvent)(JNIEnv *env, jobject self, jlong channel, jlong listenOut,
		jlong idOut, jint timeout)
{
	struct rdma_event_channel *ch = PTR(channel);
	struct rdma_cm_event *ev = NULL;
	int64_t *listen_id = PTR(listenOut);
	int64_t *id = PTR(idOut);
	jint type;

	if (wait_readable(ch->fd, timeout) <= 0)
		return -1;
	if (rdma_get_cm_event(ch, &ev) != 0)
		return -1; /* EAGAIN: another reader took it */
	type = (jint) ev->event;
	*listen_id = ev->listen_id != NULL ? (int64_t) (intptr_t) ev->listen_id : -1;
	*id = ev->id != NULL ? (int64_t) (intptr_t) ev->id : -1;
	stash_event(ev); /* copies: ev is gone after the ack */
	rdma_ack_cm_event(ev);
	return type;
}

static void fill_conn_param(struct rdma_cm_id *id, struct rdma_conn_param *p, jint retry, jint rnr)
{
	struct ibv_device_attr dev;

	memset(p, 0, sizeof *p);
	if (id->verbs != NULL && ibv_query_device(id->verbs, &dev) == 0) {
		p->initiator_depth = (uint8_t) (dev.max_qp_init_rd_atom > 255 ? 255 : dev.max_qp_init_rd_atom);
		p->responder_resources = (uint8_t) (dev.max_qp_rd_atom > 255 ? 255 : dev.max_qp_rd_atom);
	}
	p->retry_count = (uint8_t) (retry & 7);
	p->rnr_retry_count = (uint8_t) (rnr & 7);
}

JNIEXPORT void JNI_FN(connect)(JNIEnv *env, jobject self, jlong cmid, jint retry, jint rnr,
		jlong privdata, jbyte privlen)
{
	struct rdma_cm_id *id = PTR(cmid);
	struct rdma_conn_param p;
	int ret;

	fill_conn_param(id, &p, retry, rnr);
	if (privdata != 0 && privlen > 0) {
		p.private_data = PTR(privdata);
		p.private_data_len = (uint8_t) privlen;
	}
	ret = rdma_connect(id, &p);
	if (ret != 0)
		throw_io(env, "rdma_connect", err_of(ret));
}

JNIEXPORT void JNI_FN(accept)(JNIEnv *env, jobject self, jlong cmid, jint retry, jint rnr)
{
	struct rdma_cm_id *id = PTR(cmid);
	struct rdma_conn_param p;
	int ret;

	fill_conn_param(id, &p, retry, rnr);
	ret = rdma_accept(id, &p);
	if (ret != 0)
		throw_io(env, "rdma_accept", err_of(ret));
}

JNIEXPORT jint JNI_FN(ackCmEvent)(JNIEnv *env, jobject self, jint event)
{
	return 0; /* acknowledged in getCmEvent */
}

JNIEXPORT jint JNI_FN(disconnect)(JNIEnv *env, jobject self, jlong cmid)
{
	return rdma_disconnect(PTR(cmid)) == 0 ? 0 : -errno;
}

JNIEXPORT jint JNI_FN(destroyEventChannel)(JNIEnv *env, jobject self, jlong channel)
{
	struct ibv_context **devs;

	rdma_destroy_event_channel(PTR(channel));
	/*
	 * librdmacm keeps a verbs context open per device until it notices, on a device
	 * list sync, that the kernel removed the device; the kernel's removal of a device
	 * without context disassociation (rxe, siw) waits for that close. A user closes its
	 * event channel when it lets go of a device, so sync here.
	 */
	devs = rdma_get_devices(NULL);
	if (devs != NULL)
		rdma_free_devices(devs);
	return 0;
}

JNIEXPORT jint JNI_FN(destroyCmId)(JNIEnv *env, jobject self, jlong cmid)
{
	int ret = rdma_destroy_id(PTR(cmid));
	if (ret == 0)
		forget_events((uintptr_t) cmid); /* the address may come back as another id */
	return ret == 0 ? 0 : -errno;
}

JNIEXPORT jint JNI_FN(destroyQP)(JNIEnv *env, jobject self, jlong cmid)
{
	struct rdma_cm_id *id = PTR(cmid);
	if (id->qp != NULL)
		rdma_destroy_qp(id);
	return 0;
}

static jint copy_sockaddr(struct sockaddr *sa, jlong out)
{
	if (sa == NULL || sa->sa_family != AF_INET)
		return -1; /* DiSNI speaks IPv4 only */
	memcpy(PTR(out), sa, sizeof(struct sockaddr_in));
	return 0;
}

JNIEXPORT jint JNI_FN(getSrcAddr)(JNIEnv *env, jobject self, jlong cmid, jlong out)
{
	return copy_sockaddr(rdma_get_local_addr(PTR(cmid)), out);
}

JNIEXPORT jint JNI_FN(getDstAddr)(JNIEnv *env, jobject self, jlong cmid, jlong out)
{
	return copy_sockaddr(rdma_get_peer_addr(PTR(cmid)), out);
}

JNIEXPORT jint JNI_FN(destroyEp)(JNIEnv *env, jobject self, jlong cmid)
{
	struct rdma_cm_id *id = PTR(cmid);
	if (id->qp != NULL)
		rdma_destroy_qp(id);
	if (rdma_destroy_id(id) != 0)
		return -errno;
	forget_events((uintptr_t) cmid);
	return 0;
}

/* ---------------------------------------------------------------- verbs */

JNIEXPORT jlong JNI_FN(allocPd)(JNIEnv *env, jobject self, jlong ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(PTR(ctx));
	if (pd == NULL) {
		throw_io(env, "ibv_alloc_pd", errno);
		return -1;
	}
	return HANDLE(pd);
}

JNIEXPORT jlong JNI_FN(createCompChannel)(JNIEnv *env, jobject self, jlong ctx)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(PTR(ctx));
	if (ch == NULL) {
		throw_io(env, "ibv_create_comp_channel", errno);
		return -1;
	}
	set_nonblocking(ch->fd);
	return HANDLE(ch);
}

/*
 * rxe writes its user CQEs from the kernel with the kernel's ib_wc_flags, which rdma-core's
 * rxe provider copies unchanged: there IB_WC_WITH_INVALIDATE is bit 2 and IB_WC_IP_CSUM_OK
 * bit 3, while libibverbs says IBV_WC_IP_CSUM_OK (bit 2) and IBV_WC_WITH_INV (bit 3). So a
 * RECV that a SEND_WITH_INV completed on rxe carries bit 2. Providers that build their
 * completions in user space (mlx5, ...) use libibverbs' numbering. Which devices are rxe
 * is noted when a CQ is created on them, the only way to a CQ: vendor id 0xFFFFFF (6.1),
 * or, should a kernel change that, the sysfs attribute "parent" (its netdev) that rxe has.
 */
#define RXE_VENDOR_ID 0xFFFFFF
#define KERNEL_WC_WITH_INVALIDATE (1u << 2)
#define KERNEL_WC_IP_CSUM_OK (1u << 3)
#define DEVICE_KINDS 16

static struct {
	struct ibv_device *dev;
	int kernel_flags;
} device_kinds[DEVICE_KINDS];
static unsigned int device_kinds_next;
static pthread_mutex_t device_kinds_lock = PTHREAD_MUTEX_INITIALIZER;

static void note_device_kind(struct ibv_context *ctx)
{
	struct ibv_device_attr attr;
	int kernel_flags, i;

	char path[IBV_SYSFS_PATH_MAX + 8];

	if (ibv_query_device(ctx, &attr) != 0)
		return;
	snprintf(path, sizeof path, "%s/parent", ctx->device->ibdev_path);
	kernel_flags = attr.vendor_id == RXE_VENDOR_ID || access(path, F_OK) == 0;
	pthread_mutex_lock(&device_kinds_lock);
	for (i = 0; i < DEVICE_KINDS; i++)
		if (device_kinds[i].dev == ctx->device)
			break;
	if (i == DEVICE_KINDS)
		i = (int) (device_kinds_next++ % DEVICE_KINDS);
	device_kinds[i].dev = ctx->device;
	device_kinds[i].kernel_flags = kernel_flags;
	pthread_mutex_unlock(&device_kinds_lock);
}

static int uses_kernel_wc_flags(struct ibv_cq *cq)
{
	int i, kernel_flags = 0;

	pthread_mutex_lock(&device_kinds_lock);
	for (i = 0; i < DEVICE_KINDS; i++) {
		if (device_kinds[i].dev == cq->context->device) {
			kernel_flags = device_kinds[i].kernel_flags;
			break;
		}
	}
	pthread_mutex_unlock(&device_kinds_lock);
	return kernel_flags;
}

/* The kernel's WITH_INVALIDATE and IP_CSUM_OK bits in libibverbs' places. */
static uint32_t user_wc_flags(uint32_t kernel)
{
	uint32_t user = kernel & ~(KERNEL_WC_WITH_INVALIDATE | KERNEL_WC_IP_CSUM_OK);

	if (kernel & KERNEL_WC_WITH_INVALIDATE)
		user |= IBV_WC_WITH_INV;
	if (kernel & KERNEL_WC_IP_CSUM_OK)
		user |= IBV_WC_IP_CSUM_OK;
	return user;
}

JNIEXPORT jlong JNI_FN(createCQ)(JNIEnv *env, jobject self, jlong ctx, jlong channel, jint ncqe, jint vector)
{
	struct ibv_cq *cq;

	note_device_kind(PTR(ctx));
	cq = ibv_create_cq(PTR(ctx), ncqe, NULL, channel == 0 ? NULL : PTR(channel), vector);
	if (cq == NULL) {
		throw_io(env, "ibv_create_cq", errno);
		return -1;
	}
	return HANDLE(cq);
}

JNIEXPORT jint JNI_FN(modifyQP)(JNIEnv *env, jobject self, jlong qp, jlong attr)
{
	/* DiSNI passes no attributes; with rdma_cm the QP state follows the connection. */
	throw_io(env, "modifyQP (QP state is driven by rdma_cm)", EOPNOTSUPP);
	return -1;
}

JNIEXPORT jlong JNI_FN(regMr)(JNIEnv *env, jobject self, jlong pd, jlong addr, jint len, jint access,
		jlong lkeyOut, jlong rkeyOut, jlong handleOut)
{
	struct ibv_mr *mr = ibv_reg_mr(PTR(pd), PTR(addr), (size_t) (uint32_t) len, access);
	if (mr == NULL)
		return -(jlong) (errno != 0 ? errno : EIO); /* DiSNI throws on <= 0 */
	*(uint32_t *) PTR(lkeyOut) = mr->lkey;
	*(uint32_t *) PTR(rkeyOut) = mr->rkey;
	*(uint32_t *) PTR(handleOut) = mr->handle;
	return HANDLE(mr);
}

JNIEXPORT jint JNI_FN(queryOdpSupport)(JNIEnv *env, jobject self, jlong ctx)
{
	struct ibv_device_attr_ex attr;
	if (ibv_query_device_ex(PTR(ctx), NULL, &attr) != 0)
		return -1;
	if (!(attr.odp_caps.general_caps & IBV_ODP_SUPPORT))
		return -1;
	return (jint) attr.odp_caps.per_transport_caps.rc_odp_caps;
}

JNIEXPORT jint JNI_FN(expPrefetchMr)(JNIEnv *env, jobject self, jlong mr, jlong addr, jint len)
{
	throw_io(env, "expPrefetchMr (experimental verbs)", EOPNOTSUPP);
	return -1;
}

JNIEXPORT void JNI_FN(deregMr)(JNIEnv *env, jobject self, jlong mr)
{
	int ret = ibv_dereg_mr(PTR(mr));
	if (ret != 0)
		throw_io(env, "ibv_dereg_mr", err_of(ret));
}

static int read_sges(const uint8_t *java_sgl, int n, struct ibv_sge *out)
{
	int i;
	if (n < 0 || n > MAX_SGE_PER_WR)
		return -1;
	for (i = 0; i < n; i++) {
		const uint8_t *s = java_sgl + (size_t) i * JAVA_SGE_SIZE;
		memcpy(&out[i].addr, s, 8);
		memcpy(&out[i].length, s + 8, 4);
		memcpy(&out[i].lkey, s + 12, 4);
	}
	return 0;
}

/*
 * imm_data and invalidate_rkey share a union: the Java side's imm carries the rkey to
 * invalidate for SEND_WITH_INV, in host order as verbs wants it; an immediate goes on the
 * wire in network order.
 */
static void set_imm(struct ibv_send_wr *w, uint32_t imm)
{
	if (w->opcode == IBV_WR_SEND_WITH_INV)
		w->invalidate_rkey = imm;
	else
		w->imm_data = htonl(imm);
}

JNIEXPORT void JNI_FN(postSend)(JNIEnv *env, jobject self, jlong qp, jlong wrList)
{
	struct ibv_send_wr wrs[MAX_WR_PER_POST];
	struct ibv_sge sges[MAX_WR_PER_POST][MAX_SGE_PER_WR];
	struct ibv_send_wr *bad = NULL;
	const uint8_t *j = PTR(wrList);
	int n = 0, ret;

	while (j != NULL) {
		struct ibv_send_wr *w = &wrs[n];
		uint64_t next, sgl, raddr;
		uint32_t imm;
		int32_t num_sge, opcode, flags;

		if (n == MAX_WR_PER_POST) {
			throw_io(env, "ibv_post_send (too many work requests)", EINVAL);
			return;
		}
		memset(w, 0, sizeof *w);
		memcpy(&w->wr_id, j + JAVA_SEND_WR_ID, 8);
		memcpy(&next, j + JAVA_SEND_WR_NEXT, 8);
		memcpy(&sgl, j + JAVA_SEND_WR_SGL, 8);
		memcpy(&num_sge, j + JAVA_SEND_WR_NUM_SGE, 4);
		memcpy(&opcode, j + JAVA_SEND_WR_OPCODE, 4);
		memcpy(&flags, j + JAVA_SEND_WR_FLAGS, 4);
		memcpy(&imm, j + JAVA_SEND_WR_IMM, 4);
		memcpy(&raddr, j + JAVA_SEND_WR_REMOTE_ADDR, 8);
		memcpy(&w->wr.rdma.rkey, j + JAVA_SEND_WR_RKEY, 4);
		if (read_sges(PTR(sgl), num_sge, sges[n]) != 0) {
			throw_io(env, "ibv_post_send (too many SGEs)", EINVAL);
			return;
		}
		w->sg_list = sges[n];
		w->num_sge = num_sge;
		w->opcode = (enum ibv_wr_opcode) opcode;
		w->send_flags = (unsigned int) flags;
		set_imm(w, imm);
		w->wr.rdma.remote_addr = raddr;
		if (n > 0)
			wrs[n - 1].next = w;
		n++;
		j = next == 0 ? NULL : PTR(next);
	}
	if (n == 0)
		return;
	ret = ibv_post_send(PTR(qp), wrs, &bad);
	if (ret != 0)
		throw_io(env, "ibv_post_send", err_of(ret));
}

JNIEXPORT void JNI_FN(postRecv)(JNIEnv *env, jobject self, jlong qp, jlong wrList)
{
	struct ibv_recv_wr wrs[MAX_WR_PER_POST];
	struct ibv_sge sges[MAX_WR_PER_POST][MAX_SGE_PER_WR];
	struct ibv_recv_wr *bad = NULL;
	const uint8_t *j = PTR(wrList);
	int n = 0, ret;

	while (j != NULL) {
		struct ibv_recv_wr *w = &wrs[n];
		uint64_t next, sgl;
		int32_t num_sge;

		if (n == MAX_WR_PER_POST) {
			throw_io(env, "ibv_post_recv (too many work requests)", EINVAL);
			return;
		}
		memset(w, 0, sizeof *w);
		memcpy(&w->wr_id, j + JAVA_RECV_WR_ID, 8);
		memcpy(&next, j + JAVA_RECV_WR_NEXT, 8);
		memcpy(&sgl, j + JAVA_RECV_WR_SGL, 8);
		memcpy(&num_sge, j + JAVA_RECV_WR_NUM_SGE, 4);
		if (read_sges(PTR(sgl), num_sge, sges[n]) != 0) {
			throw_io(env, "ibv_post_recv (too many SGEs)", EINVAL);
			return;
		}
		w->sg_list = sges[n];
		w->num_sge = num_sge;
		if (n > 0)
			wrs[n - 1].next = w;
		n++;
		j = next == 0 ? NULL : PTR(next);
	}
	if (n == 0)
		return;
	ret = ibv_post_recv(PTR(qp), wrs, &bad);
	if (ret != 0)
		throw_io(env, "ibv_post_recv", err_of(ret));
}

/* 0 when an event was read (and acknowledged), -1 on timeout. */
JNIEXPORT jint JNI_FN(getCqEvent)(JNIEnv *env, jobject self, jlong channel, jint timeout)
{
	struct ibv_comp_channel *ch = PTR(channel);
	struct ibv_cq *cq = NULL;
	void *ctx = NULL;

	if (wait_readable(ch->fd, timeout) <= 0)
		return -1;
	if (ibv_get_cq_event(ch, &cq, &ctx) != 0)
		return -1;
	ibv_ack_cq_events(cq, 1);
	return 0;
}

JNIEXPORT jint JNI_FN(pollCQ)(JNIEnv *env, jobject self, jlong cq, jint ne, jlong out)
{
	struct ibv_wc wc[MAX_POLL_BATCH];
	uint8_t *o = PTR(out);
	int want = ne < MAX_POLL_BATCH ? ne : MAX_POLL_BATCH;
	int n, i, kernel_flags;

	if (want <= 0)
		return 0;
	n = ibv_poll_cq(PTR(cq), want, wc);
	if (n <= 0)
		return n < 0 ? -1 : 0;
	kernel_flags = uses_kernel_wc_flags(PTR(cq));
	for (i = 0; i < n; i++) {
		uint8_t *e = o + (size_t) i * JAVA_WC_SIZE;
		uint32_t status = wc[i].status, opcode = wc[i].opcode, imm = ntohl(wc[i].imm_data);
		uint32_t flags = kernel_flags ? user_wc_flags(wc[i].wc_flags) : wc[i].wc_flags;
		/* the same union: an invalidated rkey is in host order already */
		if (flags & IBV_WC_WITH_INV)
			imm = wc[i].invalidated_rkey;
		memset(e, 0, JAVA_WC_SIZE);
		memcpy(e + 0, &wc[i].wr_id, 8);
		memcpy(e + 8, &status, 4);
		memcpy(e + 12, &opcode, 4);
		memcpy(e + 16, &wc[i].vendor_err, 4);
		memcpy(e + 20, &wc[i].byte_len, 4);
		memcpy(e + 24, &imm, 4);
		memcpy(e + 28, &wc[i].qp_num, 4);
		memcpy(e + 32, &wc[i].src_qp, 4);
		memcpy(e + 36, &flags, 4);
		memcpy(e + 40, &wc[i].pkey_index, 2);
		memcpy(e + 42, &wc[i].slid, 2);
		e[44] = wc[i].sl;
		e[45] = wc[i].dlid_path_bits;
	}
	return n;
}

JNIEXPORT jint JNI_FN(reqNotifyCQ)(JNIEnv *env, jobject self, jlong cq, jint solicited)
{
	return ibv_req_notify_cq(PTR(cq), solicited);
}

JNIEXPORT jint JNI_FN(ackCqEvent)(JNIEnv *env, jobject self, jlong cq, jint n)
{
	return 0; /* acknowledged in getCqEvent */
}

JNIEXPORT jint JNI_FN(destroyCompChannel)(JNIEnv *env, jobject self, jlong channel)
{
	return ibv_destroy_comp_channel(PTR(channel)) == 0 ? 0 : -errno;
}

JNIEXPORT jint JNI_FN(deallocPd)(JNIEnv *env, jobject self, jlong pd)
{
	int ret = ibv_dealloc_pd(PTR(pd));
	return ret == 0 ? 0 : -err_of(ret);
}

JNIEXPORT jint JNI_FN(destroyCQ)(JNIEnv *env, jobject self, jlong cq)
{
	int ret = ibv_destroy_cq(PTR(cq));
	return ret == 0 ? 0 : -err_of(ret);
}

JNIEXPORT jlong JNI_FN(getContext)(JNIEnv *env, jobject self, jlong cmid)
{
	struct rdma_cm_id *id = PTR(cmid);
	if (id->verbs == NULL) {
		throw_io(env, "getContext (CM id not bound to a device)", ENODEV);
		return -1;
	}
	return HANDLE(id->verbs);
}

JNIEXPORT jint JNI_FN(getQpNum)(JNIEnv *env, jobject self, jlong qp)
{
	return (jint) ((struct ibv_qp *) PTR(qp))->qp_num;
}

JNIEXPORT jint JNI_FN(getContextFd)(JNIEnv *env, jobject self, jlong ctx)
{
	return ((struct ibv_context *) PTR(ctx))->cmd_fd;
}

JNIEXPORT jint JNI_FN(getContextNumCompVectors)(JNIEnv *env, jobject self, jlong ctx)
{
	return ((struct ibv_context *) PTR(ctx))->num_comp_vectors;
}

JNIEXPORT jint JNI_FN(getPdHandle)(JNIEnv *env, jobject self, jlong pd)
{
	return (jint) ((struct ibv_pd *) PTR(pd))->handle;
}

/* ---------------------------------------------------------------- layout handshake */

JNIEXPORT jint JNI_FN(getSockAddrInSize)(JNIEnv *env, jobject self) { return sizeof(struct sockaddr_in); }
JNIEXPORT jint JNI_FN(getIbvRecvWRSize)(JNIEnv *env, jobject self) { return JAVA_RECV_WR_SIZE; }
JNIEXPORT jint JNI_FN(getIbvSendWRSize)(JNIEnv *env, jobject self) { return JAVA_SEND_WR_SIZE; }
JNIEXPORT jint JNI_FN(getIbvSgeSize)(JNIEnv *env, jobject self) { return JAVA_SGE_SIZE; }
JNIEXPORT jint JNI_FN(getIbvWCSize)(JNIEnv *env, jobject self) { return JAVA_WC_SIZE; }
JNIEXPORT jint JNI_FN(getRemoteAddressOffset)(JNIEnv *env, jobject self) { return JAVA_SEND_WR_REMOTE_ADDR; }
JNIEXPORT jint JNI_FN(getRKeyOffset)(JNIEnv *env, jobject self) { return JAVA_SEND_WR_RKEY; }
JNIEXPORT jint JNI_FN(getVersion)(JNIEnv *env, jobject self) { return DISNI_JNI_VERSION; }

/* ---------------------------------------------------------------- provider extensions */

/*
 * Copies a Java byte[] (null is empty) of at most max bytes into buf; returns its length,
 * or -1 (no exception pending) when it is longer.
 */
static int copy_pdata(JNIEnv *env, jbyteArray data, uint8_t *buf, int max)
{
	jsize len;

	if (data == NULL)
		return 0;
	len = (*env)->GetArrayLength(env, data);
	if (len < 0 || len > max)
		return -1;
	(*env)->GetByteArrayRegion(env, data, 0, len, (jbyte *) buf);
	return (int) len;
}

/* rdma_connect with private data (at most 56 bytes) and the given retry counts; 0 or an errno. */
static jint JNICALL ext_connect(JNIEnv *env, jclass cls, jlong cmid, jbyteArray data, jint retry, jint rnr)
{
	struct rdma_cm_id *id = PTR(cmid);
	struct rdma_conn_param p;
	uint8_t buf[CONNECT_PDATA_MAX];
	int len = copy_pdata(env, data, buf, CONNECT_PDATA_MAX);

	if (len < 0 || id == NULL)
		return EINVAL;
	fill_conn_param(id, &p, retry, rnr);
	p.private_data = len > 0 ? buf : NULL;
	p.private_data_len = (uint8_t) len;
	return rdma_connect(id, &p) == 0 ? 0 : err_of(-1);
}

/* rdma_accept with private data (at most 196 bytes) and the given retry counts; 0 or an errno. */
static jint JNICALL ext_accept(JNIEnv *env, jclass cls, jlong cmid, jbyteArray data, jint retry, jint rnr)
{
	struct rdma_cm_id *id = PTR(cmid);
	struct rdma_conn_param p;
	uint8_t buf[ACCEPT_PDATA_MAX];
	int len = copy_pdata(env, data, buf, ACCEPT_PDATA_MAX);

	if (len < 0 || id == NULL)
		return EINVAL;
	fill_conn_param(id, &p, retry, rnr);
	p.private_data = len > 0 ? buf : NULL;
	p.private_data_len = (uint8_t) len;
	return rdma_accept(id, &p) == 0 ? 0 : err_of(-1);
}

/* rdma_reject with private data (at most 148 bytes); 0 or an errno. */
static jint JNICALL ext_reject(JNIEnv *env, jclass cls, jlong cmid, jbyteArray data)
{
	uint8_t buf[REJECT_PDATA_MAX];
	int len = copy_pdata(env, data, buf, REJECT_PDATA_MAX);

	if (len < 0 || cmid == 0)
		return EINVAL;
	return rdma_reject(PTR(cmid), len > 0 ? buf : NULL, (uint8_t) len) == 0 ? 0 : err_of(-1);
}

/*
 * Takes (removes) what getCmEvent kept of the last event of cmid: returns its private
 * data (possibly empty) and stores {status, event type} in out[0..1]; null when nothing
 * is kept for cmid.
 */
static jbyteArray JNICALL ext_take_event(JNIEnv *env, jclass cls, jlong cmid, jintArray out)
{
	struct event_slot copy;
	struct event_slot *s;
	jbyteArray data;
	jint st[2];

	if (out == NULL || (*env)->GetArrayLength(env, out) < 2)
		return NULL;
	pthread_mutex_lock(&event_lock);
	s = cmid == 0 ? NULL : find_slot((uintptr_t) cmid);
	if (s != NULL) {
		copy = *s;
		memset(s, 0, sizeof *s);
	}
	pthread_mutex_unlock(&event_lock);
	if (s == NULL)
		return NULL;
	data = (*env)->NewByteArray(env, (jsize) copy.len);
	if (data == NULL)
		return NULL; /* OutOfMemoryError pending */
	if (copy.len > 0)
		(*env)->SetByteArrayRegion(env, data, 0, (jsize) copy.len, (const jbyte *) copy.data);
	st[0] = copy.status;
	st[1] = copy.type;
	(*env)->SetIntArrayRegion(env, out, 0, 2, st);
	return data;
}

/*
 * Waits up to timeout ms for the completion channel's next event and returns the CQ that
 * fired (its event acknowledged), 0 on a timeout or a failed read. DiSNI's getCqEvent drops
 * which CQ it was, so the provider had to re-arm and poll every CQ on the channel for each
 * event, and on rxe (as on most providers) ibv_req_notify_cq is a system call.
 */
static jlong JNICALL ext_cq_event(JNIEnv *env, jclass cls, jlong channel, jint timeout)
{
	struct ibv_comp_channel *ch = PTR(channel);
	struct ibv_cq *cq = NULL;
	void *ctx = NULL;

	if (ch == NULL || wait_readable(ch->fd, timeout) <= 0)
		return 0;
	if (ibv_get_cq_event(ch, &cq, &ctx) != 0)
		return 0;
	ibv_ack_cq_events(cq, 1);
	return HANDLE(cq);
}

/* Bumped whenever the extension natives change, so the provider refuses a stale library. */
static jint JNICALL ext_abi_version(JNIEnv *env, jclass cls)
{
	return 7;
}

/*
 * Changes a registration's access and nothing else (its pages stay pinned, its keys stay), for
 * always_invalidate where the adapter binds no windows (io.rnbd.rdma.disni.internal.MrNative):
 * the uverbs REREG_MR command with IB_MR_REREG_ACCESS, written to the context's command fd as
 * libibverbs' own ibv_cmd_rereg_mr writes it. Not ibv_rereg_mr: rdma-core's rxe provider has no
 * rereg_mr (rdma-core 44 answers EOPNOTSUPP whatever the kernel can do), while rxe's kernel driver
 * takes access changes since Linux 6.5. Returns 0 or an errno: EOPNOTSUPP (or ENOSYS) from a kernel
 * whose driver cannot.
 */
static jint JNICALL ext_mr_rereg_access(JNIEnv *env, jclass cls, jlong mr, jint access)
{
	struct ibv_mr *m = PTR(mr);
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_rereg_mr cmd;
	} req;
	struct ib_uverbs_rereg_mr_resp resp;
	ssize_t n;

	if (m == NULL)
		return EINVAL;
	memset(&req, 0, sizeof req);
	memset(&resp, 0, sizeof resp);
	req.hdr.command = IB_USER_VERBS_CMD_REREG_MR;
	req.hdr.in_words = sizeof req / 4;
	req.hdr.out_words = sizeof resp / 4;
	req.cmd.response = (uintptr_t) &resp;
	req.cmd.mr_handle = m->handle;
	req.cmd.flags = IBV_REREG_MR_CHANGE_ACCESS;
	req.cmd.access_flags = (uint32_t) access;
	errno = 0;
	n = write(m->context->cmd_fd, &req, sizeof req);
	if (n != (ssize_t) sizeof req)
		return errno != 0 ? errno : EIO;
	/* a driver that made a new registration would have new keys: the caller's lkey and rkey would be stale */
	if (resp.lkey != m->lkey || resp.rkey != m->rkey)
		return EPROTO;
	return 0;
}

/*
 * Type-1 memory windows, for always_invalidate (io.rnbd.rdma.disni.internal.MwNative): a chunk's
 * remote key is a window over its registration, killed by a zero-length bind and given a new
 * key by a bind over the whole chunk, each one work request on the queue pair's send queue
 * (what Linux's server does with IB_WR_LOCAL_INV and IB_WR_REG_MR), where re-registering the
 * chunk took an ibv_dereg_mr and an ibv_reg_mr, pinning and unpinning its pages each time.
 * Type 1 because a chunk's requests arrive on any connection of the path: a type-2 window
 * belongs to one queue pair.
 */
static jlong alloc_mw(jlong pd, enum ibv_mw_type type)
{
	struct ibv_mw *mw;

	if (pd == 0)
		return -EINVAL;
	errno = 0;
	mw = ibv_alloc_mw(PTR(pd), type);
	return mw == NULL ? -(jlong) (errno != 0 ? errno : EOPNOTSUPP) : HANDLE(mw);
}

static jlong JNICALL ext_mw_alloc(JNIEnv *env, jclass cls, jlong pd)
{
	return alloc_mw(pd, IBV_MW_TYPE_1);
}

static jint JNICALL ext_mw_dealloc(JNIEnv *env, jclass cls, jlong mw)
{
	int ret;

	if (mw == 0)
		return EINVAL;
	ret = ibv_dealloc_mw(PTR(mw));
	return ret == 0 ? 0 : err_of(ret);
}

/* A type-1 window's current rkey: the key its next bind increments (ibv_inc_rkey). */
static jint JNICALL ext_mw_rkey(JNIEnv *env, jclass cls, jlong mw)
{
	return mw == 0 ? 0 : (jint) ((struct ibv_mw *) PTR(mw))->rkey;
}

/*
 * A send queue's chain as io.rnbd.rdma.disni.internal.SendChain encodes it, in native byte
 * order: one record per work request, CHAIN_RECORD bytes each.
 */
#define CHAIN_RECORD 128
#define CHAIN_WR_ID 0
#define CHAIN_OPCODE 8
#define CHAIN_FLAGS 12
#define CHAIN_IMM 16
#define CHAIN_RKEY 20
#define CHAIN_REMOTE_ADDR 24
#define CHAIN_MR 32
#define CHAIN_BIND_ADDR 40
#define CHAIN_BIND_LEN 48
#define CHAIN_ACCESS 56
#define CHAIN_NUM_SGE 60
#define CHAIN_SGL 64

/*
 * Posts wrs[from, to) as one ibv_post_send. Each bind's window is first given the key the bind
 * replaces (from_keys[i], as the caller counted it), which the provider reads while it builds
 * the request (rxe's kernel refuses a bind that names another key). Not the key a previous
 * bind left in the window after its post, as the providers' own ibv_bind_mw does: on rxe the
 * kernel runs a bind and the answer after it inside ibv_post_send, so the peer can send its
 * next request, and another thread post the next bind of the same window on another queue
 * pair, before this thread has stored anything. Returns 0, or (index of the first request
 * not posted << 32) | errno.
 */
static jlong post_segment(struct ibv_qp *qp, struct ibv_send_wr *wrs, const uint32_t *from_keys, int from,
		int to)
{
	struct ibv_send_wr *bad = NULL;
	int i, ret;

	for (i = from; i < to; i++) {
		wrs[i].next = i + 1 < to ? &wrs[i + 1] : NULL;
		if (wrs[i].opcode == IBV_WR_BIND_MW)
			wrs[i].bind_mw.mw->rkey = from_keys[i];
	}
	ret = ibv_post_send(qp, &wrs[from], &bad);
	if (ret == 0)
		return 0;
	return ((jlong) (bad == NULL ? from : bad - wrs) << 32) | (jlong) err_of(ret);
}

/* Whether wrs[from, to) binds window mw. */
static int binds(const struct ibv_send_wr *wrs, int from, int to, const struct ibv_mw *mw)
{
	int i;

	for (i = from; i < to; i++)
		if (wrs[i].opcode == IBV_WR_BIND_MW && wrs[i].bind_mw.mw == mw)
			return 1;
	return 0;
}

/*
 * Posts n records (n <= MAX_WR_PER_POST) as one ibv_post_send: one doorbell, a system call
 * on rxe, for everything a completion round posted. An IBV_WR_BIND_MW record binds the
 * type-1 window at CHAIN_REMOTE_ADDR under the key at CHAIN_RKEY, replacing the key at
 * CHAIN_IMM, as every provider's own ibv_bind_mw does (rxe, mlx4, mlx5, irdma, hns post this
 * very work request), so that a bind rides in the chain instead of ringing a doorbell of its
 * own. A provider reads the window's key from the window when the bind is posted, one value
 * per post: a second bind of the same window starts a post of its own.
 * Returns 0, or (index of the first record not posted << 32) | errno.
 */
static jlong JNICALL ext_post_chain(JNIEnv *env, jclass cls, jlong qp, jlong records, jint n)
{
	struct ibv_send_wr wrs[MAX_WR_PER_POST];
	struct ibv_sge sges[MAX_WR_PER_POST][MAX_SGE_PER_WR];
	uint32_t from_keys[MAX_WR_PER_POST];
	const uint8_t *r = PTR(records);
	int i, from = 0;
	jlong ret;

	if (qp == 0 || records == 0 || n < 0 || n > MAX_WR_PER_POST)
		return EINVAL;
	for (i = 0; i < n; i++, r += CHAIN_RECORD) {
		struct ibv_send_wr *w = &wrs[i];
		uint64_t remote, mr, baddr, blen;
		uint32_t imm, rkey, access;
		int32_t opcode, flags, num_sge;

		memset(w, 0, sizeof *w);
		memcpy(&w->wr_id, r + CHAIN_WR_ID, 8);
		memcpy(&opcode, r + CHAIN_OPCODE, 4);
		memcpy(&flags, r + CHAIN_FLAGS, 4);
		memcpy(&imm, r + CHAIN_IMM, 4);
		memcpy(&rkey, r + CHAIN_RKEY, 4);
		memcpy(&remote, r + CHAIN_REMOTE_ADDR, 8);
		memcpy(&num_sge, r + CHAIN_NUM_SGE, 4);
		w->opcode = (enum ibv_wr_opcode) opcode;
		w->send_flags = (unsigned int) flags;
		if (w->opcode == IBV_WR_BIND_MW) {
			memcpy(&mr, r + CHAIN_MR, 8);
			memcpy(&baddr, r + CHAIN_BIND_ADDR, 8);
			memcpy(&blen, r + CHAIN_BIND_LEN, 8);
			memcpy(&access, r + CHAIN_ACCESS, 4);
			/* what is refused here, and what waits before it in this post, is not posted */
			if (remote == 0 || mr == 0)
				return ((jlong) from << 32) | EINVAL;
			w->bind_mw.mw = PTR(remote);
			w->bind_mw.rkey = rkey;
			from_keys[i] = imm;
			w->bind_mw.bind_info.mr = PTR(mr);
			w->bind_mw.bind_info.addr = baddr;
			w->bind_mw.bind_info.length = blen;
			w->bind_mw.bind_info.mw_access_flags = access;
			if (binds(wrs, from, i, w->bind_mw.mw)) {
				ret = post_segment(PTR(qp), wrs, from_keys, from, i);
				if (ret != 0)
					return ret;
				from = i;
			}
			continue;
		}
		if (read_sges(r + CHAIN_SGL, num_sge, sges[i]) != 0)
			return ((jlong) from << 32) | EINVAL;
		w->sg_list = sges[i];
		w->num_sge = num_sge;
		set_imm(w, imm);
		w->wr.rdma.remote_addr = remote;
		w->wr.rdma.rkey = rkey;
	}
	return from < n ? post_segment(PTR(qp), wrs, from_keys, from, n) : 0;
}

/*
 * One receive work request of num_sge SGEs, read from sgl in the JAVA_SGE layout
 * (io.rnbd.rdma.disni.internal.RecvPost): what DiSNI's postRecv does for one request, without the
 * list of work requests DiSNI serialises afresh in Java for every call. A server re-posts a
 * receive for every request it takes in. Returns 0 or an errno (EINVAL for a bad SGE count or a
 * null pointer, else what ibv_post_recv answered).
 */
static jint JNICALL ext_post_recv(JNIEnv *env, jclass cls, jlong qp, jlong wr_id, jlong sgl, jint num_sge)
{
	struct ibv_recv_wr w, *bad = NULL;
	struct ibv_sge sges[MAX_SGE_PER_WR];
	int ret;

	if (qp == 0 || (num_sge > 0 && sgl == 0) || read_sges(PTR(sgl), num_sge, sges) != 0)
		return EINVAL;
	memset(&w, 0, sizeof w);
	w.wr_id = (uint64_t) wr_id;
	w.sg_list = sges;
	w.num_sge = num_sge;
	ret = ibv_post_recv(PTR(qp), &w, &bad);
	return ret == 0 ? 0 : err_of(ret);
}

/*
 * Test support, not used by the provider: type-2 memory windows, so that the rxe tests can
 * check SEND_WITH_INV's success path (IBV_WC_WITH_INV, invalidate_rkey's byte order) on
 * real verbs; an ibv_reg_mr region cannot be invalidated remotely, a memory window can.
 * Bound to io.rnbd.rdma.disni.internal.VerbsNative, which only the tests have.
 */
static jlong JNICALL mw_alloc(JNIEnv *env, jclass cls, jlong pd)
{
	return alloc_mw(pd, IBV_MW_TYPE_2);
}

static jint JNICALL mw_rkey(JNIEnv *env, jclass cls, jlong mw)
{
	return mw == 0 ? 0 : (jint) ((struct ibv_mw *) PTR(mw))->rkey;
}

/*
 * Posts an unsignaled IBV_WR_BIND_MW on qp: the window covers [addr, addr + len) of mr
 * with the given access, under a new rkey (ibv_inc_rkey), which is returned (0..2^32-1),
 * or -errno when the post fails.
 */
static jlong JNICALL mw_bind(JNIEnv *env, jclass cls, jlong qp, jlong mw, jlong mr, jlong addr, jlong len,
		jint access)
{
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_mw *w = PTR(mw);
	uint32_t rkey;
	int ret;

	if (qp == 0 || mw == 0 || mr == 0 || len < 0)
		return -EINVAL;
	rkey = ibv_inc_rkey(w->rkey);
	memset(&wr, 0, sizeof wr);
	wr.opcode = IBV_WR_BIND_MW;
	wr.bind_mw.mw = w;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = PTR(mr);
	wr.bind_mw.bind_info.addr = (uint64_t) addr;
	wr.bind_mw.bind_info.length = (uint64_t) len;
	wr.bind_mw.bind_info.mw_access_flags = (unsigned int) access;
	ret = ibv_post_send(PTR(qp), &wr, &bad);
	return ret == 0 ? (jlong) rkey : -(jlong) err_of(ret);
}

/* Test support: stores rkey in the window, as a thread between its post and its store leaves it. */
static void JNICALL mw_set_rkey(JNIEnv *env, jclass cls, jlong mw, jint rkey)
{
	if (mw != 0)
		((struct ibv_mw *) PTR(mw))->rkey = (uint32_t) rkey;
}

static JNINativeMethod mw_methods[] = {
	{ "allocMw", "(J)J", (void *) mw_alloc },
	{ "mwRkey", "(J)I", (void *) mw_rkey },
	{ "setMwRkey", "(JI)V", (void *) mw_set_rkey },
	{ "deallocMw", "(J)I", (void *) ext_mw_dealloc },
	{ "bindMw", "(JJJJJI)J", (void *) mw_bind },
};

static JNINativeMethod window_methods[] = {
	{ "alloc", "(J)J", (void *) ext_mw_alloc },
	{ "dealloc", "(J)I", (void *) ext_mw_dealloc },
	{ "rkey", "(J)I", (void *) ext_mw_rkey },
};

static JNINativeMethod mr_methods[] = {
	{ "reregAccess", "(JI)I", (void *) ext_mr_rereg_access },
};

static JNINativeMethod chain_methods[] = {
	{ "post", "(JJI)J", (void *) ext_post_chain },
};

static JNINativeMethod recv_methods[] = {
	{ "post", "(JJJI)I", (void *) ext_post_recv },
};

static JNINativeMethod ext_methods[] = {
	{ "connect", "(J[BII)I", (void *) ext_connect },
	{ "accept", "(J[BII)I", (void *) ext_accept },
	{ "reject", "(J[B)I", (void *) ext_reject },
	{ "takeEvent", "(J[I)[B", (void *) ext_take_event },
	{ "cqEvent", "(JI)J", (void *) ext_cq_event },
	{ "abiVersion", "()I", (void *) ext_abi_version },
};

/*
 * Binds the natives of one class if the current thread's context class loader knows it;
 * otherwise (DiSNI used by someone else, or no tests) does nothing. Leaves no exception
 * pending.
 */
static void bind_class(JNIEnv *env, const char *class_name, const JNINativeMethod *methods, jint n)
{
	jclass thread_cls, loader_cls;
	jmethodID current, get_loader, load_class;
	jobject thread = NULL, loader = NULL, cls = NULL;
	jstring name = NULL;

	thread_cls = (*env)->FindClass(env, "java/lang/Thread");
	loader_cls = (*env)->FindClass(env, "java/lang/ClassLoader");
	if (thread_cls == NULL || loader_cls == NULL)
		goto out;
	current = (*env)->GetStaticMethodID(env, thread_cls, "currentThread", "()Ljava/lang/Thread;");
	get_loader = (*env)->GetMethodID(env, thread_cls, "getContextClassLoader", "()Ljava/lang/ClassLoader;");
	load_class = (*env)->GetMethodID(env, loader_cls, "loadClass", "(Ljava/lang/String;)Ljava/lang/Class;");
	if (current == NULL || get_loader == NULL || load_class == NULL)
		goto out;
	thread = (*env)->CallStaticObjectMethod(env, thread_cls, current);
	if (thread == NULL || (*env)->ExceptionCheck(env))
		goto out;
	loader = (*env)->CallObjectMethod(env, thread, get_loader);
	if (loader == NULL || (*env)->ExceptionCheck(env))
		goto out;
	name = (*env)->NewStringUTF(env, class_name);
	if (name == NULL)
		goto out;
	cls = (*env)->CallObjectMethod(env, loader, load_class, name);
	if (cls == NULL || (*env)->ExceptionCheck(env))
		goto out;
	(*env)->RegisterNatives(env, (jclass) cls, methods, n);
out:
	if ((*env)->ExceptionCheck(env))
		(*env)->ExceptionClear(env);
	if (cls != NULL)
		(*env)->DeleteLocalRef(env, cls);
	if (name != NULL)
		(*env)->DeleteLocalRef(env, name);
	if (loader != NULL)
		(*env)->DeleteLocalRef(env, loader);
	if (thread != NULL)
		(*env)->DeleteLocalRef(env, thread);
	if (thread_cls != NULL)
		(*env)->DeleteLocalRef(env, thread_cls);
	if (loader_cls != NULL)
		(*env)->DeleteLocalRef(env, loader_cls);
}

static void bind_extension_natives(JNIEnv *env)
{
	bind_class(env, "io.rnbd.rdma.disni.internal.CmNative", ext_methods,
			(jint) (sizeof ext_methods / sizeof ext_methods[0]));
	bind_class(env, "io.rnbd.rdma.disni.internal.MwNative", window_methods,
			(jint) (sizeof window_methods / sizeof window_methods[0]));
	bind_class(env, "io.rnbd.rdma.disni.internal.MrNative", mr_methods,
			(jint) (sizeof mr_methods / sizeof mr_methods[0]));
	bind_class(env, "io.rnbd.rdma.disni.internal.SendChain", chain_methods,
			(jint) (sizeof chain_methods / sizeof chain_methods[0]));
	bind_class(env, "io.rnbd.rdma.disni.internal.RecvPost", recv_methods,
			(jint) (sizeof recv_methods / sizeof recv_methods[0]));
	bind_class(env, "io.rnbd.rdma.disni.internal.VerbsNative", mw_methods,
			(jint) (sizeof mw_methods / sizeof mw_methods[0]));
}
