/*
 * librnbd-rbd.so: the native half of rnbd-backend-rbd (class RbdNative), a thin layer over
 * librados/librbd's C API (Debian: librados-dev, librbd-dev).
 *
 * Threading contract with the Java side:
 *  - librbd calls back on its own threads. A completion goes straight to the image's Java
 *    listener (listen(): its completed(cookie, result)), on librbd's thread, attached to the
 *    JVM as a daemon thread named "rnbd-rbd-librbd" the first time and detached when librados
 *    ends the thread (a pthread key destructor): no hand-over to another thread per IO.
 *  - A header change (rbd_update_watch) is only recorded, and bumps the image's eventfd:
 *    one Java thread per image (the poller) waits on it in poll() and re-reads the size,
 *    because librbd must not be called back into from its own callback. Completions that
 *    arrive without a listener (or when the thread cannot attach) take the same road.
 *  - IO buffers are direct ByteBuffers handed to librbd as they are (no copy); the Java side
 *    keeps each buffer reachable until its completion has been polled.
 *  - every handle is the C pointer itself.
 * Failures of the synchronous calls throw RbdException(errno, what); submissions return
 * 0 or -errno.
 */
#include <jni.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <rados/librados.h>
#include <rbd/librbd.h>

#define PTR(h) ((void *) (intptr_t) (h))
#define HANDLE(p) ((jlong) (intptr_t) (p))

/* Operation codes shared with RbdNative.java. */
#define OP_READ 0
#define OP_WRITE 1
#define OP_FLUSH 2
#define OP_DISCARD 3
#define OP_WRITE_ZEROES 4
/* RbdNative.FLAG_THICK: not a librados op flag, the zero_flags of a write-zeroes */
#define FLAG_THICK (1 << 30)

/* The cookie of the "image header changed" event (IO cookies start at 1). */
#define COOKIE_UPDATED 0

struct op {
	struct op *next;
	struct image *img;
	jlong cookie;
	jlong result;
};

struct image {
	rbd_image_t rbd;
	jobject listener;      /* global ref: completed(JJ)V, or NULL */
	int efd;
	pthread_mutex_t lock;
	struct op *done;       /* completed ops, newest first */
	int updated;           /* the header changed (size, features, lock) since the last poll */
	uint64_t watch;
	int watching;
};

static JavaVM *jvm;
static pthread_key_t attached;
static jclass exception_class;
static jmethodID exception_init;
static jmethodID completed_method;

/* Runs when a thread that attached itself (attached_env) ends. */
static void detach(void *value)
{
	(*jvm)->DetachCurrentThread(jvm);
}

/* The JNIEnv of this librbd thread, attaching it once; NULL if the JVM refuses. */
static JNIEnv *attached_env(void)
{
	JNIEnv *env;
	if ((*jvm)->GetEnv(jvm, (void **) &env, JNI_VERSION_1_8) == JNI_OK)
		return env;
	JavaVMAttachArgs args = { JNI_VERSION_1_8, "rnbd-rbd-librbd", NULL };
	if ((*jvm)->AttachCurrentThreadAsDaemon(jvm, (void **) &env, &args) != JNI_OK)
		return NULL;
	pthread_setspecific(attached, env); /* any non-NULL value: the destructor runs at thread exit */
	return env;
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
	JNIEnv *env;
	jvm = vm;
	if ((*vm)->GetEnv(vm, (void **) &env, JNI_VERSION_1_8) != JNI_OK)
		return JNI_ERR;
	if (pthread_key_create(&attached, detach) != 0)
		return JNI_ERR;
	jclass listener = (*env)->FindClass(env, "io/rnbd/rnbd/backend/rbd/internal/RbdImage$Completions");
	if (listener == NULL)
		return JNI_ERR;
	completed_method = (*env)->GetMethodID(env, listener, "completed", "(JJ)V");
	if (completed_method == NULL)
		return JNI_ERR;
	jclass cls = (*env)->FindClass(env, "io/rnbd/rnbd/backend/rbd/internal/RbdException");
	if (cls == NULL)
		return JNI_ERR;
	exception_class = (*env)->NewGlobalRef(env, cls);
	exception_init = (*env)->GetMethodID(env, cls, "<init>", "(ILjava/lang/String;)V");
	if (exception_class == NULL || exception_init == NULL)
		return JNI_ERR;
	return JNI_VERSION_1_8;
}

JNIEXPORT void JNICALL JNI_OnUnload(JavaVM *vm, void *reserved)
{
	JNIEnv *env;
	if ((*vm)->GetEnv(vm, (void **) &env, JNI_VERSION_1_8) == JNI_OK && exception_class != NULL)
		(*env)->DeleteGlobalRef(env, exception_class);
}

/* librados/librbd return -errno. */
static void throw_rbd(JNIEnv *env, const char *what, int ret)
{
	jstring msg = (*env)->NewStringUTF(env, what);
	if (msg == NULL)
		return; /* OutOfMemoryError pending */
	jobject ex = (*env)->NewObject(env, exception_class, exception_init, (jint) (ret < 0 ? -ret : ret), msg);
	if (ex != NULL)
		(*env)->Throw(env, ex);
}

/* A Java string as a C string, NULL for a null or empty Java string. Free with release(). */
static const char *chars(JNIEnv *env, jstring s)
{
	if (s == NULL || (*env)->GetStringUTFLength(env, s) == 0)
		return NULL;
	return (*env)->GetStringUTFChars(env, s, NULL);
}

static void release(JNIEnv *env, jstring s, const char *c)
{
	if (c != NULL)
		(*env)->ReleaseStringUTFChars(env, s, c);
}

JNIEXPORT jstring JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_version(JNIEnv *env, jclass cls)
{
	int major, minor, extra;
	char v[64];
	rbd_version(&major, &minor, &extra);
	snprintf(v, sizeof v, "%d.%d.%d", major, minor, extra);
	return (*env)->NewStringUTF(env, v);
}

/* ---- cluster ---- */

JNIEXPORT jlong JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_connect(JNIEnv *env, jclass cls,
		jstring jconf, jstring jid, jobjectArray options)
{
	rados_t cluster;
	const char *id = chars(env, jid);
	int r = rados_create(&cluster, id);
	release(env, jid, id);
	if (r < 0) {
		throw_rbd(env, "rados_create", r);
		return 0;
	}
	const char *conf = chars(env, jconf);
	/* NULL: Ceph's own search ($CEPH_CONF, /etc/ceph/ceph.conf, ~/.ceph/config, ./ceph.conf) */
	r = rados_conf_read_file(cluster, conf);
	release(env, jconf, conf);
	if (r < 0) {
		rados_shutdown(cluster);
		throw_rbd(env, "rados_conf_read_file", r);
		return 0;
	}
	jsize n = options == NULL ? 0 : (*env)->GetArrayLength(env, options);
	for (jsize i = 0; i + 1 < n; i += 2) {
		jstring jk = (*env)->GetObjectArrayElement(env, options, i);
		jstring jv = (*env)->GetObjectArrayElement(env, options, i + 1);
		const char *k = chars(env, jk);
		const char *v = chars(env, jv);
		r = k == NULL ? -EINVAL : rados_conf_set(cluster, k, v == NULL ? "" : v);
		release(env, jk, k);
		release(env, jv, v);
		(*env)->DeleteLocalRef(env, jk);
		(*env)->DeleteLocalRef(env, jv);
		if (r < 0) {
			rados_shutdown(cluster);
			throw_rbd(env, "rados_conf_set", r);
			return 0;
		}
	}
	r = rados_connect(cluster);
	if (r < 0) {
		rados_shutdown(cluster);
		throw_rbd(env, "rados_connect", r);
		return 0;
	}
	return HANDLE(cluster);
}

JNIEXPORT void JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_shutdown(JNIEnv *env, jclass cls, jlong c)
{
	rados_shutdown(PTR(c));
}

/* A configuration value of the connected cluster handle, null if there is no such option. */
JNIEXPORT jstring JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_confGet(JNIEnv *env, jclass cls,
		jlong c, jstring jkey)
{
	char buf[512];
	const char *key = chars(env, jkey);
	int r = key == NULL ? -EINVAL : rados_conf_get(PTR(c), key, buf, sizeof buf);
	release(env, jkey, key);
	return r < 0 ? NULL : (*env)->NewStringUTF(env, buf);
}

JNIEXPORT jlong JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_ioctx(JNIEnv *env, jclass cls,
		jlong c, jstring jpool)
{
	rados_ioctx_t io;
	const char *pool = chars(env, jpool);
	int r = pool == NULL ? -EINVAL : rados_ioctx_create(PTR(c), pool, &io);
	release(env, jpool, pool);
	if (r < 0) {
		throw_rbd(env, "rados_ioctx_create", r);
		return 0;
	}
	return HANDLE(io);
}

JNIEXPORT void JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_ioctxDestroy(JNIEnv *env, jclass cls,
		jlong io)
{
	rados_ioctx_destroy(PTR(io));
}

JNIEXPORT void JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_create(JNIEnv *env, jclass cls,
		jlong io, jstring jname, jlong size)
{
	int order = 0; /* the cluster's default object size (rbd_default_order), as `rbd create` */
	const char *name = chars(env, jname);
	int r = name == NULL ? -EINVAL : rbd_create(PTR(io), name, (uint64_t) size, &order);
	release(env, jname, name);
	if (r < 0)
		throw_rbd(env, "rbd_create", r);
}

/* ---- image ---- */

static void push(struct image *img, struct op *o)
{
	int was_idle;
	pthread_mutex_lock(&img->lock);
	was_idle = img->done == NULL && !img->updated;
	if (o != NULL) {
		o->next = img->done;
		img->done = o;
	} else {
		img->updated = 1;
	}
	pthread_mutex_unlock(&img->lock);
	/* Only a poller that found nothing can be asleep; it sleeps until this write. */
	if (was_idle) {
		uint64_t one = 1;
		ssize_t w = write(img->efd, &one, sizeof one);
		(void) w; /* EAGAIN: the counter is already non-zero, the poller wakes anyway */
	}
}

static void on_complete(rbd_completion_t c, void *arg)
{
	struct op *o = arg;
	struct image *img = o->img;
	o->result = rbd_aio_get_return_value(c);
	rbd_aio_release(c);
	/* read before the call: once Java has the completion, the image may be closed and freed */
	jobject listener = img->listener;
	JNIEnv *env = listener == NULL ? NULL : attached_env();
	if (env == NULL) {
		push(img, o);
		return;
	}
	jlong cookie = o->cookie, result = o->result;
	free(o);
	(*env)->CallVoidMethod(env, listener, completed_method, cookie, result);
	if ((*env)->ExceptionCheck(env))
		(*env)->ExceptionClear(env); /* the listener catches its own; nothing may unwind into librbd */
}

static void on_update(void *arg)
{
	push(arg, NULL);
}

JNIEXPORT jlong JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_open(JNIEnv *env, jclass cls,
		jlong io, jstring jname, jboolean readOnly)
{
	struct image *img = calloc(1, sizeof *img);
	if (img == NULL) {
		throw_rbd(env, "calloc", -ENOMEM);
		return 0;
	}
	img->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (img->efd < 0) {
		int err = errno;
		free(img);
		throw_rbd(env, "eventfd", -err);
		return 0;
	}
	pthread_mutex_init(&img->lock, NULL);
	const char *name = chars(env, jname);
	int r;
	if (name == NULL)
		r = -EINVAL;
	else if (readOnly)
		r = rbd_open_read_only(PTR(io), name, &img->rbd, NULL);
	else
		r = rbd_open(PTR(io), name, &img->rbd, NULL);
	release(env, jname, name);
	if (r < 0) {
		close(img->efd);
		pthread_mutex_destroy(&img->lock);
		free(img);
		throw_rbd(env, readOnly ? "rbd_open_read_only" : "rbd_open", r);
		return 0;
	}
	return HANDLE(img);
}

/* Completions go to listener.completed(cookie, result) from now on (null: through poll()). */
JNIEXPORT void JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_listen(JNIEnv *env, jclass cls, jlong h,
		jobject listener)
{
	struct image *img = PTR(h);
	jobject old = img->listener;
	img->listener = listener == NULL ? NULL : (*env)->NewGlobalRef(env, listener);
	if (old != NULL)
		(*env)->DeleteGlobalRef(env, old);
}

/* Watch the header: a resize, snapshot or feature change by anyone wakes the poller. */
JNIEXPORT void JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_watch(JNIEnv *env, jclass cls, jlong h)
{
	struct image *img = PTR(h);
	int r = rbd_update_watch(img->rbd, &img->watch, on_update, img);
	if (r < 0)
		throw_rbd(env, "rbd_update_watch", r);
	else
		img->watching = 1;
}

/*
 * rbd_close waits for every IO in flight, whose completions land on the list for the poller
 * to collect afterwards; the list and the eventfd outlive the image until free().
 */
JNIEXPORT void JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_close(JNIEnv *env, jclass cls, jlong h)
{
	struct image *img = PTR(h);
	int r = 0;
	if (img->watching) {
		r = rbd_update_unwatch(img->rbd, img->watch);
		img->watching = 0;
	}
	int c = rbd_close(img->rbd);
	img->rbd = NULL;
	if (c < 0)
		throw_rbd(env, "rbd_close", c);
	else if (r < 0)
		throw_rbd(env, "rbd_update_unwatch", r);
}

JNIEXPORT void JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_free(JNIEnv *env, jclass cls, jlong h)
{
	struct image *img = PTR(h);
	struct op *o = img->done;
	while (o != NULL) {
		struct op *next = o->next;
		free(o);
		o = next;
	}
	if (img->listener != NULL)
		(*env)->DeleteGlobalRef(env, img->listener);
	close(img->efd);
	pthread_mutex_destroy(&img->lock);
	free(img);
}

JNIEXPORT jlong JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_size(JNIEnv *env, jclass cls, jlong h)
{
	uint64_t size;
	int r = rbd_get_size(((struct image *) PTR(h))->rbd, &size);
	if (r < 0) {
		throw_rbd(env, "rbd_get_size", r);
		return -1;
	}
	return (jlong) size;
}

JNIEXPORT void JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_resize(JNIEnv *env, jclass cls,
		jlong h, jlong size)
{
	int r = rbd_resize(((struct image *) PTR(h))->rbd, (uint64_t) size);
	if (r < 0)
		throw_rbd(env, "rbd_resize", r);
}

JNIEXPORT jlong JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_features(JNIEnv *env, jclass cls,
		jlong h)
{
	uint64_t f;
	int r = rbd_get_features(((struct image *) PTR(h))->rbd, &f);
	if (r < 0) {
		throw_rbd(env, "rbd_get_features", r);
		return 0;
	}
	return (jlong) f;
}

JNIEXPORT void JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_lockAcquire(JNIEnv *env, jclass cls,
		jlong h)
{
	int r = rbd_lock_acquire(((struct image *) PTR(h))->rbd, RBD_LOCK_MODE_EXCLUSIVE);
	if (r < 0)
		throw_rbd(env, "rbd_lock_acquire", r);
}

JNIEXPORT void JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_flush(JNIEnv *env, jclass cls, jlong h)
{
	int r = rbd_flush(((struct image *) PTR(h))->rbd);
	if (r < 0)
		throw_rbd(env, "rbd_flush", r);
}

JNIEXPORT jboolean JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_lockOwned(JNIEnv *env, jclass cls,
		jlong h)
{
	int owner = 0;
	int r = rbd_is_exclusive_lock_owner(((struct image *) PTR(h))->rbd, &owner);
	if (r < 0)
		throw_rbd(env, "rbd_is_exclusive_lock_owner", r);
	return owner ? JNI_TRUE : JNI_FALSE;
}

/* The clients holding the image's lock ("127.0.0.1:0/2484850395"), comma separated; "" if none. */
JNIEXPORT jstring JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_lockOwners(JNIEnv *env, jclass cls,
		jlong h)
{
	char *owners[8];
	size_t n = 8;
	rbd_lock_mode_t mode;
	char out[1024] = "";
	int r = rbd_lock_get_owners(((struct image *) PTR(h))->rbd, &mode, owners, &n);
	if (r == -ENOENT)
		return (*env)->NewStringUTF(env, "");
	if (r < 0) {
		throw_rbd(env, "rbd_lock_get_owners", r);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			strncat(out, ",", sizeof out - strlen(out) - 1);
		strncat(out, owners[i], sizeof out - strlen(out) - 1);
	}
	rbd_lock_get_owners_cleanup(owners, n);
	return (*env)->NewStringUTF(env, out);
}

/* The image's effective value of an rbd_* option (cluster, pool or image level), null if unknown. */
JNIEXPORT jstring JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_imageConf(JNIEnv *env, jclass cls,
		jlong h, jstring jkey)
{
	int max = 0;
	rbd_image_t rbd = ((struct image *) PTR(h))->rbd;
	int r = rbd_config_image_list(rbd, NULL, &max);
	if (r != -ERANGE && r < 0)
		return NULL;
	rbd_config_option_t *opts = calloc(max > 0 ? max : 1, sizeof *opts);
	if (opts == NULL)
		return NULL;
	jstring value = NULL;
	r = rbd_config_image_list(rbd, opts, &max);
	if (r >= 0) {
		const char *key = chars(env, jkey);
		for (int i = 0; key != NULL && i < max; i++) {
			if (strcmp(opts[i].name, key) == 0) {
				value = (*env)->NewStringUTF(env, opts[i].value);
				break;
			}
		}
		release(env, jkey, key);
		rbd_config_image_list_cleanup(opts, max);
	}
	free(opts);
	return value;
}

/*
 * Starts one asynchronous operation; its (cookie, result) pair later comes out of
 * poll_events. buf is a direct buffer (null for flush, discard, write-zeroes), used from
 * byte pos for len bytes. flags: librados op flags (LIBRADOS_OP_FLAG_FADVISE_FUA), and
 * FLAG_THICK for a write-zeroes that keeps the range allocated.
 * Returns 0, or -errno when the operation was not started (no completion follows).
 */
JNIEXPORT jint JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_submit(JNIEnv *env, jclass cls,
		jlong h, jint op, jlong cookie, jlong off, jlong len, jobject buf, jint pos, jint flags)
{
	struct image *img = PTR(h);
	char *addr = NULL;
	if (buf != NULL) {
		addr = (*env)->GetDirectBufferAddress(env, buf);
		if (addr == NULL)
			return -EINVAL;
		addr += pos;
	}
	struct op *o = malloc(sizeof *o);
	if (o == NULL)
		return -ENOMEM;
	o->img = img;
	o->cookie = cookie;
	o->result = 0;
	rbd_completion_t c;
	int r = rbd_aio_create_completion(o, on_complete, &c);
	if (r < 0) {
		free(o);
		return r;
	}
	switch (op) {
	case OP_READ:
		r = rbd_aio_read2(img->rbd, (uint64_t) off, (size_t) len, addr, c, 0);
		break;
	case OP_WRITE:
		r = rbd_aio_write2(img->rbd, (uint64_t) off, (size_t) len, addr, c, flags);
		break;
	case OP_FLUSH:
		r = rbd_aio_flush(img->rbd, c);
		break;
	case OP_DISCARD:
		r = rbd_aio_discard(img->rbd, (uint64_t) off, (uint64_t) len, c);
		break;
	case OP_WRITE_ZEROES:
		/* thick: the range stays allocated (RNBD's NOUNMAP); else librbd may deallocate it */
		r = rbd_aio_write_zeroes(img->rbd, (uint64_t) off, (size_t) len, c,
				(flags & FLAG_THICK) ? RBD_WRITE_ZEROES_FLAG_THICK_PROVISION : 0, flags & ~FLAG_THICK);
		break;
	default:
		r = -EINVAL;
	}
	if (r < 0) {
		rbd_aio_release(c);
		free(o);
	}
	return r;
}

/*
 * Waits up to timeoutMs (-1: no limit) for completions, then copies up to
 * length(events)/2 of them into events as (cookie, result) pairs, oldest first; a header
 * change comes out as cookie 0. Returns the number of pairs, 0 on timeout or wakeup().
 */
JNIEXPORT jint JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_poll(JNIEnv *env, jclass cls,
		jlong h, jlongArray events, jint timeoutMs)
{
	struct image *img = PTR(h);
	jsize max = (*env)->GetArrayLength(env, events) / 2;
	if (max < 1)
		return 0;
	pthread_mutex_lock(&img->lock);
	int idle = img->done == NULL && !img->updated;
	pthread_mutex_unlock(&img->lock);
	if (idle) {
		struct pollfd p = { .fd = img->efd, .events = POLLIN };
		int n = poll(&p, 1, timeoutMs);
		if (n < 0 && errno != EINTR)
			return -errno;
	}
	uint64_t count;
	ssize_t rd = read(img->efd, &count, sizeof count); /* reset; EAGAIN if nothing was signalled */
	(void) rd;

	pthread_mutex_lock(&img->lock);
	int updated = img->updated;
	img->updated = 0;
	struct op *list = img->done;
	img->done = NULL;
	pthread_mutex_unlock(&img->lock);

	/* newest first -> oldest first */
	struct op *ordered = NULL;
	while (list != NULL) {
		struct op *next = list->next;
		list->next = ordered;
		ordered = list;
		list = next;
	}
	jlong out[128];
	jsize room = max < 64 ? max : 64;
	jsize n = 0;
	if (updated) {
		out[0] = COOKIE_UPDATED;
		out[1] = 0;
		n = 1;
	}
	while (ordered != NULL && n < room) {
		struct op *o = ordered;
		ordered = o->next;
		out[2 * n] = o->cookie;
		out[2 * n + 1] = o->result;
		n++;
		free(o);
	}
	if (ordered != NULL) {
		/* more than fits: put the rest back in front (they are older than anything new) */
		struct op *tail = ordered;
		struct op *rev = NULL;
		while (tail != NULL) {
			struct op *next = tail->next;
			tail->next = rev;
			rev = tail;
			tail = next;
		}
		pthread_mutex_lock(&img->lock);
		/* list is newest first: newer arrivals (img->done) before the older rest (rev) */
		struct op **end = &img->done;
		while (*end != NULL)
			end = &(*end)->next;
		*end = rev;
		pthread_mutex_unlock(&img->lock);
	}
	(*env)->SetLongArrayRegion(env, events, 0, 2 * n, out);
	return n;
}

JNIEXPORT void JNICALL Java_io_rnbd_rnbd_backend_rbd_internal_RbdNative_wakeup(JNIEnv *env, jclass cls, jlong h)
{
	uint64_t one = 1;
	ssize_t w = write(((struct image *) PTR(h))->efd, &one, sizeof one);
	(void) w;
}
