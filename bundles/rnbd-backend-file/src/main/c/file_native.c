/*
 * The JNI half of rnbd-backend-file: what Java's FileChannel cannot do to a file or block
 * device, fallocate(2). Each call works on its own descriptor of the device's path, opened
 * once per device (FileNative.open) and closed with it. Return values: >= 0, or -errno.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jni.h>
#include <linux/falloc.h>
#include <unistd.h>

JNIEXPORT jint JNICALL Java_io_rnbd_rnbd_backend_file_internal_FileNative_open(JNIEnv *env, jclass cls,
		jstring path, jboolean readOnly)
{
	const char *p = (*env)->GetStringUTFChars(env, path, NULL);
	if (p == NULL)
		return -ENOMEM;
	int fd = open(p, (readOnly ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	int err = errno;
	(*env)->ReleaseStringUTFChars(env, path, p);
	return fd < 0 ? -err : fd;
}

JNIEXPORT jint JNICALL Java_io_rnbd_rnbd_backend_file_internal_FileNative_close(JNIEnv *env, jclass cls, jint fd)
{
	return close(fd) < 0 ? -errno : 0;
}

static jint falloc(jint fd, int mode, jlong off, jlong len)
{
	int r;
	do {
		r = fallocate(fd, mode, (off_t) off, (off_t) len);
	} while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

/* Zero the range and keep it allocated (RNBD's NOUNMAP): FALLOC_FL_ZERO_RANGE. */
JNIEXPORT jint JNICALL Java_io_rnbd_rnbd_backend_file_internal_FileNative_zeroRange(JNIEnv *env, jclass cls,
		jint fd, jlong off, jlong len)
{
	return falloc(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, off, len);
}

/* Deallocate the range; it reads as zeros: FALLOC_FL_PUNCH_HOLE (discard, unmapping zeroes). */
JNIEXPORT jint JNICALL Java_io_rnbd_rnbd_backend_file_internal_FileNative_punchHole(JNIEnv *env, jclass cls,
		jint fd, jlong off, jlong len)
{
	return falloc(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len);
}

/* Allocate the range without changing the size (after a punch where ZERO_RANGE is missing). */
JNIEXPORT jint JNICALL Java_io_rnbd_rnbd_backend_file_internal_FileNative_allocate(JNIEnv *env, jclass cls,
		jint fd, jlong off, jlong len)
{
	return falloc(fd, FALLOC_FL_KEEP_SIZE, off, len);
}
